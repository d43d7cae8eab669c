package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/julienschmidt/httprouter"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/streams"
)

// StreamOperator reads, redrives and deletes a group's dead letters on an
// operator's behalf; streams.Operator implements it. Offset resets (live,
// forced, dry run) are the runtime's (Runtime.StartReset, ForceReset,
// PreviewReset): the edge only checks that Redis is configured. Errors other than the streams package's sentinels (ErrInvalidID,
// ErrInvalidCursor, ErrInvalidPosition, ErrDeadLetterNotFound,
// ErrNotRedrivable, ErrOtherGroup) are failures to reach Redis. A group
// argument of the dead-letter methods names the consumer group asking:
// entries another group dead-lettered are left out of its pages and
// refused to its redrives and deletes.
type StreamOperator interface {
	DeadLetters(ctx context.Context, dlq, prefix, group, cursor string, limit int) (streams.DeadLetterPage, error)
	Redrive(ctx context.Context, dlq, prefix, group string, shardCount int, id string) (streams.Redriven, error)
	DeleteDeadLetter(ctx context.Context, dlq, group, id string) error
}

// maxEntryIDBytes bounds a stream entry id in a request (as group's bounds
// do for the heartbeat's ids).
const maxEntryIDBytes = 64

// positionRoutes lists the offset-reset and dead-letter routes, templates
// relative to the base path.
func (a *API) positionRoutes() []route {
	return []route{
		{Route{Method: http.MethodPost, Template: contract.GroupOffsetsReset}, a.resetOffsets},
		{Route{Method: http.MethodGet, Template: contract.MonitoringDeadLetter}, a.deadLetters},
		{Route{Method: http.MethodPost, Template: contract.GroupRedrive}, a.redriveDeadLetters},
		{Route{Method: http.MethodPost, Template: contract.GroupDeleteDead}, a.deleteDeadLetters},
	}
}

// streamOperator returns the StreamOperator, or errRedisNotConfigured.
func (a *API) streamOperator() (StreamOperator, error) {
	if a.ops == nil {
		return nil, errRedisNotConfigured
	}
	return a.ops, nil
}

// operatorError classifies a StreamOperator error.
func operatorError(err error) error {
	switch {
	case errors.Is(err, streams.ErrInvalidID), errors.Is(err, streams.ErrInvalidCursor), errors.Is(err, streams.ErrInvalidPosition):
		return invalid("%v", err)
	case errors.Is(err, streams.ErrDeadLetterNotFound):
		return group.Errorf(contract.CodeDeadLetterNotFound, "%v", err)
	case errors.Is(err, streams.ErrNotRedrivable):
		return group.Errorf(contract.CodeDeadLetterNotRedrivable, "%v", err)
	case errors.Is(err, streams.ErrOtherGroup):
		return group.Errorf(contract.CodeDeadLetterOfAnotherGroup, "%v", err)
	}
	return fmt.Errorf("%w: %w", contract.ErrDataPlane, err)
}

// resetPosition is the reset target of a contract.OffsetReset body: To
// is parsed case-insensitively into a streams.PositionKind.
func resetPosition(r *contract.OffsetReset) streams.Position {
	return streams.Position{Kind: streams.PositionKind(strings.ToUpper(r.To)), ID: r.EntryID, TimestampMs: r.TimestampMs, By: r.By}
}

func validateReset(r *contract.OffsetReset) error {
	if err := group.ValidateWho(r.RequestedBy, r.Reason); err != nil {
		return err
	}
	if len(r.EntryID) > maxEntryIDBytes {
		return invalid("entryId: at most %d bytes", maxEntryIDBytes)
	}
	if err := resetPosition(r).Validate(); err != nil {
		return invalid("%v", err)
	}
	return nil
}

// resetOffsets moves the group's consumer group position on the requested
// shards (XGROUP SETID). Without force the reset is live (liveops.go): the
// group pauses the shards, sets them once no member holds them and grants
// them again; the answer is the stored operation. With force the
// coordinator sets the positions at once (Runtime.ForceReset), racing
// any member reading the shards (each shard's holders are named in the
// answer). With dryRun nothing changes: the answer says what the reset
// would do.
func (a *API) resetOffsets(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	mutate(a, w, r, ps, http.StatusOK, validateReset, func(ctx context.Context, key group.Key, req contract.OffsetReset) (any, error) {
		switch {
		case req.DryRun:
			return a.previewReset(ctx, key, req)
		case !req.Force:
			return a.startLiveReset(ctx, key, req)
		}
		if _, err := a.streamOperator(); err != nil {
			return nil, err
		}
		return a.runtime.ForceReset(ctx, key, resetRequest(&req))
	})
}

// resetRequest is the domain's request of a reset body: its target, To
// parsed (resetPosition), its shards and who asks why.
func resetRequest(r *contract.OffsetReset) group.ResetRequest {
	return group.ResetRequest{
		Target:      group.ResetTarget{To: string(resetPosition(r).Kind), EntryID: r.EntryID, TimestampMs: r.TimestampMs, By: r.By},
		Shards:      r.Shards,
		RequestedBy: r.RequestedBy,
		Reason:      r.Reason,
	}
}
