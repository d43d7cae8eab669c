package streams

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/redis-stream-coordinator/coordinator/contract"
)

// Operator changes the data plane on an operator's behalf: consumer group
// positions (XGROUP SETID) and dead-letter entries. It is safe for
// concurrent use.
type Operator struct {
	client redis.UniversalClient
	// limits bound what one page of dead letters may read (zero:
	// MaxReadEntries, MaxReadBytes); pool is where the pages take their
	// share of the bytes all requests hold at once (nil: the process's).
	limits readLimits
	pool   *readPool
}

// NewOperator returns an Operator over client (standalone or cluster).
func NewOperator(client redis.UniversalClient) *Operator {
	return &Operator{client: client}
}

// PositionKind names where a reset moves a consumer group.
type PositionKind string

// The reset targets, named as contract's OffsetReset.To names them (the
// BY kind is resolved in setid.go).
const (
	Earliest  PositionKind = contract.ResetToEarliest
	Latest    PositionKind = contract.ResetToLatest
	AfterID   PositionKind = contract.ResetToID
	Timestamp PositionKind = contract.ResetToTimestamp
	By        PositionKind = contract.ResetToBy
)

// Position is a reset target. ID is used with AfterID, TimestampMs with
// Timestamp, By (entries forward, or back when negative) with By.
type Position struct {
	Kind        PositionKind
	ID          string
	TimestampMs int64
	By          int64
}

// ErrInvalidPosition is matched by errors about a malformed Position.
var ErrInvalidPosition = errors.New("invalid position")

// lastDeliveredID returns the last-delivered id XGROUP SETID sets for p:
// "0" for Earliest, "$" for Latest, the id itself for AfterID, and the
// largest id below TimestampMs ("<ms-1>-<max seq>", "0" for 0) for
// Timestamp.
func (p Position) lastDeliveredID() (string, error) {
	switch p.Kind {
	case Earliest:
		return "0", nil
	case Latest:
		return "$", nil
	case AfterID:
		id, err := parseID(p.ID)
		if err != nil || !strings.Contains(p.ID, "-") {
			return "", fmt.Errorf("%w: id %q is not an entry id <ms>-<seq>", ErrInvalidPosition, p.ID)
		}
		return fmt.Sprintf("%d-%d", id.ms, id.seq), nil
	case Timestamp:
		if p.TimestampMs < 0 {
			return "", fmt.Errorf("%w: timestampMs %d is negative", ErrInvalidPosition, p.TimestampMs)
		}
		if p.TimestampMs == 0 {
			return "0", nil
		}
		return strconv.FormatInt(p.TimestampMs-1, 10) + "-18446744073709551615", nil
	}
	return "", fmt.Errorf("%w: to must be EARLIEST, LATEST, ID, TIMESTAMP or BY, got %q", ErrInvalidPosition, p.Kind)
}

// Validate reports whether p is a well-formed target (ErrInvalidPosition).
func (p Position) Validate() error {
	if p.Kind == By {
		if p.By == 0 {
			return fmt.Errorf("%w: by must not be 0", ErrInvalidPosition)
		}
		return nil
	}
	_, err := p.lastDeliveredID()
	return err
}

// GroupPosition reads group's position on the stream key (nil fields
// when the stream or the group does not exist, Lag also when Redis cannot
// compute it).
func (o *Operator) GroupPosition(ctx context.Context, key, group string) (contract.GroupPosition, error) {
	groups, err := o.client.XInfoGroups(ctx, key).Result()
	if err != nil {
		return contract.GroupPosition{}, replyOrNil(err)
	}
	for _, g := range groups {
		if g.Name == group {
			return contract.GroupPosition{LastDeliveredID: nonEmpty(g.LastDeliveredID), Lag: knownLag(g), Pending: &g.Pending}, nil
		}
	}
	return contract.GroupPosition{}, nil
}

// SetPosition moves group's last-delivered id on the stream key to p
// (XGROUP SETID) at once, racing any member reading it (the forced reset;
// a live reset pauses the shard first); a relative or LATEST target is
// resolved against the stream as it is now (PlanReset).
func (o *Operator) SetPosition(ctx context.Context, key, group string, p Position) error {
	plan, err := o.PlanReset(ctx, key, group, p)
	if err != nil {
		return err
	}
	return o.SetID(ctx, key, group, plan.SetID)
}
