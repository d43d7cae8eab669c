package httpapi

import (
	"context"
	"net/http"

	"github.com/julienschmidt/httprouter"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
)

// LiveOps are the live group operations (docs/operations.md): pausing and
// resuming shards, and live offset resets.
type LiveOps interface {
	// PauseShards pauses shards: they are revoked from their readers and
	// granted to nobody until resumed.
	PauseShards(ctx context.Context, key group.Key, req contract.PauseRequest) (contract.PausedView, error)
	// ResumeShards grants paused shards again.
	ResumeShards(ctx context.Context, key group.Key, req contract.PauseRequest) (contract.PausedView, error)
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
	run := a.runtime.PauseShards
	if resume {
		run = a.runtime.ResumeShards
	}
	return func(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
		mutate(a, w, r, ps, http.StatusOK, func(req *contract.PauseRequest) error { return group.ValidateWho(req.RequestedBy, req.Reason) },
			func(ctx context.Context, key group.Key, req contract.PauseRequest) (any, error) {
				return run(ctx, key, req)
			})
	}
}

func (a *API) pausedShards(ctx context.Context, key group.Key) (contract.PausedView, error) {
	g, err := a.runtime.Snapshot(ctx, key)
	if err != nil {
		return contract.PausedView{}, err
	}
	return g.PausedView(), nil
}

// liveResets answers GET …/offsets/resets: the group's live resets, oldest
// first (the last group.MaxKeptResets).
func (a *API) liveResets(ctx context.Context, key group.Key) (contract.ResetList, error) {
	g, err := a.runtime.Snapshot(ctx, key)
	if err != nil {
		return contract.ResetList{}, err
	}
	return group.ResetViews(g.LiveResets), nil
}

// liveReset serves GET …/offsets/resets/{resetId}.
func (a *API) liveReset(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	read(a, func(ctx context.Context, key group.Key) (group.LiveReset, error) {
		return a.runtime.Reset(ctx, key, ps.ByName("resetId"))
	}, resetBody)(w, r, ps)
}

// startLiveReset runs a reset without force: the group pauses the shards,
// sets them once no member holds them, and grants them again.
func (a *API) startLiveReset(ctx context.Context, key group.Key, req contract.OffsetReset) (any, error) {
	if _, err := a.streamOperator(); err != nil {
		return nil, err
	}
	r, err := a.runtime.StartReset(ctx, key, resetRequest(&req))
	if err != nil {
		return nil, err
	}
	return r.View(), nil
}

func resetBody(_ group.Key, r group.LiveReset) any { return r.View() }

// previewReset answers what a reset would do, changing nothing: the
// coordinator reads the group and Redis (Runtime.PreviewReset).
func (a *API) previewReset(ctx context.Context, key group.Key, req contract.OffsetReset) (any, error) {
	if _, err := a.streamOperator(); err != nil {
		return nil, err
	}
	return a.runtime.PreviewReset(ctx, key, resetRequest(&req))
}
