package client

import (
	"context"
	"net/http"
	"net/url"
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
)

// The live group operations of docs/operations.md: pausing and resuming
// shards, and live offset resets.

// PauseShards pauses shards of group g of stream prefix p: they are
// revoked from their readers and granted to nobody until resumed.
func (c *Coordinator) PauseShards(ctx context.Context, p, g string, req group.PauseRequest) (group.PausedView, error) {
	var out group.PausedView
	err := c.do(ctx, http.MethodPost, groupPath(p, g)+"/shards/pause", req, &out)
	return out, err
}

// ResumeShards grants paused shards of group g again.
func (c *Coordinator) ResumeShards(ctx context.Context, p, g string, req group.PauseRequest) (group.PausedView, error) {
	var out group.PausedView
	err := c.do(ctx, http.MethodPost, groupPath(p, g)+"/shards/resume", req, &out)
	return out, err
}

// PausedShards reads group g's paused shards and the members still
// holding one.
func (c *Coordinator) PausedShards(ctx context.Context, p, g string) (group.PausedView, error) {
	var out group.PausedView
	err := c.do(ctx, http.MethodGet, monitoringPath(p, g)+"/paused-shards", nil, &out)
	return out, err
}

// LiveReset starts a live offset reset of group g (req without Force or
// DryRun): the group pauses the shards, sets them once no member holds
// them and grants them again. It returns the operation as stored; follow
// it with Reset or WaitReset.
func (c *Coordinator) LiveReset(ctx context.Context, p, g string, req contract.OffsetReset) (group.LiveReset, error) {
	req.Force, req.DryRun = false, false
	var out group.LiveReset
	err := c.do(ctx, http.MethodPost, groupPath(p, g)+"/offsets/reset", req, &out)
	return out, err
}

// PreviewReset answers what req would do to group g, changing nothing.
func (c *Coordinator) PreviewReset(ctx context.Context, p, g string, req contract.OffsetReset) (contract.ResetPreview, error) {
	req.DryRun = true
	var out contract.ResetPreview
	err := c.do(ctx, http.MethodPost, groupPath(p, g)+"/offsets/reset", req, &out)
	return out, err
}

// Reset reads live reset id of group g.
func (c *Coordinator) Reset(ctx context.Context, p, g, id string) (group.LiveReset, error) {
	var out group.LiveReset
	err := c.do(ctx, http.MethodGet, monitoringPath(p, g)+"/offsets/resets/"+url.PathEscape(id), nil, &out)
	return out, err
}

// Resets lists group g's live resets, oldest first.
func (c *Coordinator) Resets(ctx context.Context, p, g string) ([]group.LiveReset, error) {
	var out struct {
		Resets []group.LiveReset `json:"resets"`
	}
	err := c.do(ctx, http.MethodGet, monitoringPath(p, g)+"/offsets/resets", nil, &out)
	return out.Resets, err
}

// WaitReset reads live reset id every interval until it is DONE or FAILED
// (or ctx ends) and returns it as last read.
func (c *Coordinator) WaitReset(ctx context.Context, p, g, id string, interval time.Duration) (group.LiveReset, error) {
	for {
		r, err := c.Reset(ctx, p, g, id)
		if err != nil || !r.State.Active() {
			return r, err
		}
		select {
		case <-ctx.Done():
			return r, ctx.Err()
		case <-time.After(interval):
		}
	}
}
