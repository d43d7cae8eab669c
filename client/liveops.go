package client

import (
	"context"
	"net/http"
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
)

// The live group operations of docs/operations.md: pausing and resuming
// shards, and live offset resets.

// PauseShards pauses shards of group g of stream prefix p: they are
// revoked from their readers and granted to nobody until resumed.
func (c *Coordinator) PauseShards(ctx context.Context, p, g string, req contract.PauseRequest) (contract.PausedView, error) {
	var out contract.PausedView
	err := c.do(ctx, http.MethodPost, contract.Expand(contract.GroupPause, p, g), req, &out)
	return out, err
}

// ResumeShards grants paused shards of group g again.
func (c *Coordinator) ResumeShards(ctx context.Context, p, g string, req contract.PauseRequest) (contract.PausedView, error) {
	var out contract.PausedView
	err := c.do(ctx, http.MethodPost, contract.Expand(contract.GroupResume, p, g), req, &out)
	return out, err
}

// PausedShards reads group g's paused shards and the members still
// holding one.
func (c *Coordinator) PausedShards(ctx context.Context, p, g string) (contract.PausedView, error) {
	var out contract.PausedView
	err := c.do(ctx, http.MethodGet, contract.Expand(contract.MonitoringPaused, p, g), nil, &out)
	return out, err
}

// LiveReset starts a live offset reset of group g (req without Force or
// DryRun): the group pauses the shards, sets them once no member holds
// them and grants them again. It returns the operation as stored; follow
// it with Reset or WaitReset.
func (c *Coordinator) LiveReset(ctx context.Context, p, g string, req contract.OffsetReset) (contract.LiveReset, error) {
	req.Force, req.DryRun = false, false
	var out contract.LiveReset
	err := c.do(ctx, http.MethodPost, contract.Expand(contract.GroupOffsetsReset, p, g), req, &out)
	return out, err
}

// PreviewReset answers what req would do to group g, changing nothing.
func (c *Coordinator) PreviewReset(ctx context.Context, p, g string, req contract.OffsetReset) (contract.ResetPreview, error) {
	req.DryRun = true
	var out contract.ResetPreview
	err := c.do(ctx, http.MethodPost, contract.Expand(contract.GroupOffsetsReset, p, g), req, &out)
	return out, err
}

// Reset reads live reset id of group g.
func (c *Coordinator) Reset(ctx context.Context, p, g, id string) (contract.LiveReset, error) {
	var out contract.LiveReset
	err := c.do(ctx, http.MethodGet, contract.Expand(contract.MonitoringReset, p, g, id), nil, &out)
	return out, err
}

// Resets lists group g's live resets, oldest first.
func (c *Coordinator) Resets(ctx context.Context, p, g string) ([]contract.LiveReset, error) {
	var out contract.ResetList
	err := c.do(ctx, http.MethodGet, contract.Expand(contract.MonitoringResets, p, g), nil, &out)
	return out.Resets, err
}

// WaitReset reads live reset id every interval until it is DONE or FAILED
// (or ctx ends) and returns it as last read.
func (c *Coordinator) WaitReset(ctx context.Context, p, g, id string, interval time.Duration) (contract.LiveReset, error) {
	for {
		r, err := c.Reset(ctx, p, g, id)
		if err != nil || r.State.Finished() {
			return r, err
		}
		select {
		case <-ctx.Done():
			return r, ctx.Err()
		case <-time.After(interval):
		}
	}
}
