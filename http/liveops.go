package httpapi

import (
	"context"
	"net/http"
	"slices"

	"github.com/julienschmidt/httprouter"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
)

// LiveOps are the live group operations (docs/operations.md): pausing and
// resuming shards, and live offset resets.
type LiveOps interface {
	// PauseShards pauses shards: they are revoked from their readers and
	// granted to nobody until resumed.
	PauseShards(ctx context.Context, key group.Key, req group.PauseRequest) (group.PausedView, error)
	// ResumeShards grants paused shards again.
	ResumeShards(ctx context.Context, key group.Key, req group.PauseRequest) (group.PausedView, error)
	// StartReset starts a live offset reset and answers it as stored.
	StartReset(ctx context.Context, key group.Key, req group.ResetRequest) (group.LiveReset, error)
	// Reset returns one live reset of a group.
	Reset(ctx context.Context, key group.Key, id string) (group.LiveReset, error)
}

// liveOpsRoutes lists the pause, resume and live-reset routes, templates
// relative to the base path.
func (a *API) liveOpsRoutes() []route {
	return []route{
		{Route{Method: http.MethodPost, Template: contract.GroupPause}, a.pauseShards(false)},
		{Route{Method: http.MethodPost, Template: contract.GroupResume}, a.pauseShards(true)},
		{Route{Method: http.MethodGet, Template: contract.MonitoringPaused}, read(a, a.pausedShards, asIs[contract.PausedView])},
		{Route{Method: http.MethodGet, Template: contract.MonitoringResets}, read(a, a.liveResets, asIs[contract.ResetList])},
		{Route{Method: http.MethodGet, Template: contract.MonitoringReset}, a.liveReset},
	}
}

// pauseShards serves POST …/shards/pause and …/shards/resume.
func (a *API) pauseShards(resume bool) httprouter.Handle {
	run := a.coord.PauseShards
	if resume {
		run = a.coord.ResumeShards
	}
	return func(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
		mutate(a, w, r, ps, http.StatusOK, func(req *contract.PauseRequest) error { return group.ValidateWho(req.RequestedBy, req.Reason) },
			func(ctx context.Context, key group.Key, req contract.PauseRequest) (any, error) {
				return run(ctx, key, req)
			})
	}
}

func (a *API) pausedShards(ctx context.Context, key group.Key) (contract.PausedView, error) {
	g, err := a.coord.Snapshot(ctx, key)
	if err != nil {
		return contract.PausedView{}, err
	}
	return g.PausedView(), nil
}

// liveResets answers GET …/offsets/resets: the group's live resets, oldest
// first (the last group.MaxKeptResets).
func (a *API) liveResets(ctx context.Context, key group.Key) (contract.ResetList, error) {
	g, err := a.coord.Snapshot(ctx, key)
	if err != nil {
		return contract.ResetList{}, err
	}
	return group.ResetViews(g.LiveResets), nil
}

// liveReset serves GET …/offsets/resets/{resetId}.
func (a *API) liveReset(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	read(a, func(ctx context.Context, key group.Key) (group.LiveReset, error) {
		return a.coord.Reset(ctx, key, ps.ByName("resetId"))
	}, resetBody)(w, r, ps)
}

// startLiveReset runs a reset without force: the group pauses the shards,
// sets them once no member holds them, and grants them again.
func (a *API) startLiveReset(ctx context.Context, key group.Key, req contract.OffsetReset) (any, error) {
	if _, err := a.streamOperator(); err != nil {
		return nil, err
	}
	r, err := a.coord.StartReset(ctx, key, group.ResetRequest{
		Target:      group.ResetTarget{To: string(resetPosition(&req).Kind), EntryID: req.EntryID, TimestampMs: req.TimestampMs, By: req.By},
		Shards:      req.Shards,
		RequestedBy: req.RequestedBy,
		Reason:      req.Reason,
	})
	if err != nil {
		return nil, err
	}
	return r.View(), nil
}

func resetBody(_ group.Key, r group.LiveReset) any { return r.View() }

// previewReset answers what a reset would do, changing nothing.
func (a *API) previewReset(ctx context.Context, key group.Key, req contract.OffsetReset) (any, error) {
	ops, shards, holders, err := a.resetScope(ctx, key, req)
	if err != nil {
		return nil, err
	}
	out := contract.ResetPreview{StreamPrefix: key.StreamPrefix, ConsumerGroup: key.ConsumerGroup, To: string(resetPosition(&req).Kind), DryRun: true}
	for _, i := range shards {
		k := contract.StreamKey(key.StreamPrefix, i)
		plan, err := ops.PlanReset(ctx, k, key.ConsumerGroup, resetPosition(&req))
		if err != nil {
			return nil, operatorError(err)
		}
		out.Shards = append(out.Shards, contract.ResetPreviewShard{ShardIndex: i, StreamKey: k, WouldPause: nonNil(holders[i]), Before: plan.Before,
			After: contract.PreviewedAfter{LastDeliveredID: plan.SetID}, Redelivered: plan.Redelivered, Skipped: plan.Skipped, CountCapped: plan.CountCapped})
	}
	return out, nil
}

// resetScope reads what a forced reset or a dry run works on: the stream
// operator, the requested shards (resetShards) and who holds each now
// (shardHolders).
func (a *API) resetScope(ctx context.Context, key group.Key, req contract.OffsetReset) (StreamOperator, []int, map[int][]string, error) {
	ops, err := a.streamOperator()
	if err != nil {
		return nil, nil, nil, err
	}
	g, err := a.coord.Snapshot(ctx, key)
	if err != nil {
		return nil, nil, nil, err
	}
	shards, err := resetShards(g, req.Shards)
	if err != nil {
		return nil, nil, nil, err
	}
	return ops, shards, shardHolders(g), nil
}

// resetShards returns the requested shard indexes sorted without
// duplicates (every shard when none), refusing one the group lacks.
func resetShards(g *group.Group, requested []int) ([]int, error) {
	if len(requested) == 0 {
		for i := range g.ShardCount {
			requested = append(requested, i)
		}
	}
	out := slices.Compact(slices.Sorted(slices.Values(requested)))
	for _, i := range out {
		if i < 0 || i >= g.ShardCount {
			return nil, invalid("shards: %d is not a shard of the group (0..%d)", i, g.ShardCount-1)
		}
	}
	return out, nil
}
