package actors

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/redis-stream-coordinator/coordinator/actors/core"
	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
)

// Live group operations (issue 32): pause and resume shards, and live
// offset resets. The domain (group/liveops.go) keeps the paused shards and
// each reset's state machine; the actor runs the operator's requests as
// admin requests and performs a reset's Redis steps (Options.Positions)
// when its state asks for them (advanceReset).

// Positions reads and sets a consumer group's position on the shard
// streams of a group, for live and forced resets (streams.ResetPositions).
// Errors wrapping group.ErrResetTarget fail the reset (a forced one is
// refused INVALID_REQUEST); others are failures to reach Redis, which a
// live reset retries and a forced one answers (contract.ErrDataPlane).
type Positions interface {
	// PlanReset reads the group's position on shard and resolves target
	// against it: the position before and the absolute last-delivered id
	// to set (ShardReset.Before and SetID).
	PlanReset(ctx context.Context, key group.Key, shard int, target group.ResetTarget) (group.ShardReset, error)
	// SetID sets the group's last-delivered id on shard s.ShardIndex to
	// s.SetID (s as planned: Before and SetID) and returns its position
	// after.
	SetID(ctx context.Context, key group.Key, s group.ShardReset) (*contract.GroupPosition, error)
	// ForceSet sets the group's position on shard to target at once,
	// racing any member reading it, and returns its positions before and
	// after (a forced reset).
	ForceSet(ctx context.Context, key group.Key, shard int, target group.ResetTarget) (before, after contract.GroupPosition, err error)
	// Preview reads the group's position on shard and what a reset to
	// target would do there, changing nothing (a dry run; WouldPause is
	// left to the caller).
	Preview(ctx context.Context, key group.Key, shard int, target group.ResetTarget) (contract.ResetPreviewShard, error)
}

// ErrNoPositions answers a live reset on a coordinator without Redis.
var ErrNoPositions = errors.New("live resets need Redis")

// maxResetFailures is how many reset steps in a row may fail on Redis
// before the reset is FAILED; resetRetryDelay is the least time between
// two attempts.
const (
	maxResetFailures = 20
	resetRetryDelay  = 250 * time.Millisecond
)

// liveState is a group actor's memory of the active reset's failed steps;
// it is not stored (a new owner starts counting afresh).
type liveState struct {
	failures  int
	notBefore time.Time
}

// pauseMsg pauses (Resume false) or resumes req's shards.
type pauseMsg struct {
	routed
	Request contract.PauseRequest
	Resume  bool
	Reply   replyTo[contract.PausedView]
}

func (m *pauseMsg) exec(a *groupActor) {
	op, cmd := core.OpPauseShards, core.Command(core.Pause{Request: m.Request})
	if m.Resume {
		op, cmd = core.OpResumeShards, core.Resume{Request: m.Request}
	}
	answerAdmin(a, m.Reply, op, func(op core.Op) (contract.PausedView, error) {
		d := a.step(op, cmd)
		return d.Paused, d.Err
	})
}

// resetMsg starts a live reset; it is answered once the reset is stored
// PAUSING (or further, when no member held its shards).
type resetMsg struct {
	routed
	Request group.ResetRequest
	NewID   string
	Reply   replyTo[group.LiveReset]
}

func (m *resetMsg) exec(a *groupActor) {
	answerAdmin(a, m.Reply, core.OpLiveReset, func(op core.Op) (group.LiveReset, error) {
		if !a.core.Committed().Exists() {
			return group.LiveReset{}, core.GroupNotFound()
		}
		if a.c.opts.Positions == nil {
			return group.LiveReset{}, ErrNoPositions
		}
		d := a.step(op, core.StartReset{Request: m.Request, NewID: m.NewID})
		if d.Err != nil {
			return group.LiveReset{}, d.Err
		}
		r := d.Reset
		a.live = liveState{}
		a.stepReset(op)
		if cur, ok := a.core.Committed().Reset(r.ResetID); ok {
			r = cur
		}
		return r, nil
	})
}

// forceResetMsg sets the positions of a group's shards at once (a forced
// offset reset). It is an admin request although it stores nothing: it
// runs in the critical section, after the batch is flushed, so the
// holders it names are those of the committed group, and its Redis steps
// are serialised with a live reset's.
type forceResetMsg struct {
	routed
	Request group.ResetRequest
	Reply   replyTo[contract.OffsetResetResult]
}

func (m *forceResetMsg) exec(a *groupActor) {
	answerAdmin(a, m.Reply, core.OpForceReset, func(core.Op) (contract.OffsetResetResult, error) {
		return a.forceReset(m.Request)
	})
}

// forceReset sets the position of each of req's shards (every shard when
// none is named) to req's target at once (Positions.ForceSet), racing the
// members that hold them, who are named in the answer; it stores
// nothing. A shard the group does not have, or a target Redis cannot
// take, is INVALID_REQUEST; a Redis failure stops it at that shard
// (contract.ErrDataPlane), the shards before it already set.
func (a *groupActor) forceReset(req group.ResetRequest) (contract.OffsetResetResult, error) {
	g := a.core.Committed()
	if !g.Exists() {
		return contract.OffsetResetResult{}, core.GroupNotFound()
	}
	if a.c.opts.Positions == nil {
		return contract.OffsetResetResult{}, ErrNoPositions
	}
	shards, err := resetShards(g, req.Shards)
	if err != nil {
		return contract.OffsetResetResult{}, err
	}
	holders := shardHolders(g)
	out := contract.OffsetResetResult{StreamPrefix: a.key.StreamPrefix, ConsumerGroup: a.key.ConsumerGroup, To: req.Target.To, Forced: true}
	for _, i := range shards {
		ctx, cancel := a.storeCtx()
		before, after, err := a.c.opts.Positions.ForceSet(ctx, a.key, i, req.Target)
		cancel()
		if err != nil {
			return contract.OffsetResetResult{}, positionsError("force reset", a.key, i, err)
		}
		out.Shards = append(out.Shards, contract.OffsetResetShard{ShardIndex: i, StreamKey: contract.StreamKey(a.key.StreamPrefix, i),
			HeldBy: holders.of(i), Before: before, After: after})
	}
	return out, nil
}

// positionsError is the answer to err, a Positions failure of op on a
// group's shard: INVALID_REQUEST for a target Redis cannot take
// (group.ErrResetTarget), else a Redis failure (contract.ErrDataPlane).
func positionsError(op string, key group.Key, shard int, err error) error {
	if errors.Is(err, group.ErrResetTarget) {
		return group.Errorf(contract.CodeInvalidRequest, "%v", err)
	}
	return fmt.Errorf("%s of group %s, shard %d: %w: %w", op, key, shard, contract.ErrDataPlane, err)
}

// PreviewReset answers what a reset of req would do, changing nothing (a
// dry run): for each of req's shards (every shard when none is named) the
// position now and the id the reset would set (Positions.Preview), the
// entries it would deliver again or skip, and the members that would
// pause (those holding the shard in the committed group). It reads the
// group's snapshot and Redis on the caller's goroutine, as the other
// reads do. Errors are ForceReset's.
func (c *System) PreviewReset(ctx context.Context, key group.Key, req group.ResetRequest) (contract.ResetPreview, error) {
	if c.opts.Positions == nil {
		return contract.ResetPreview{}, ErrNoPositions
	}
	g, err := c.committed(ctx, key)
	if err != nil {
		return contract.ResetPreview{}, err
	}
	shards, err := resetShards(g, req.Shards)
	if err != nil {
		return contract.ResetPreview{}, err
	}
	holders := shardHolders(g)
	out := contract.ResetPreview{StreamPrefix: key.StreamPrefix, ConsumerGroup: key.ConsumerGroup, To: req.Target.To, DryRun: true}
	for _, i := range shards {
		s, err := c.opts.Positions.Preview(ctx, key, i, req.Target)
		if err != nil {
			return contract.ResetPreview{}, positionsError("preview reset", key, i, err)
		}
		s.WouldPause = holders.of(i)
		out.Shards = append(out.Shards, s)
	}
	return out, nil
}

// resetShards returns the shards a forced reset or a dry run works on:
// those requested, sorted and once each, or every shard when none is; a
// shard the group does not have is INVALID_REQUEST.
func resetShards(g *group.Group, requested []int) ([]int, error) {
	if len(requested) == 0 {
		return contract.Range(0, g.ShardCount), nil
	}
	out := slices.Compact(slices.Sorted(slices.Values(requested)))
	for _, i := range out {
		if i < 0 || i >= g.ShardCount {
			return nil, group.Errorf(contract.CodeInvalidRequest, "shards: %d is not a shard of the group (0..%d)", i, g.ShardCount-1)
		}
	}
	return out, nil
}

// holders maps shards to the members that hold them, sorted by member id.
type holders map[int][]string

// of returns shard i's holders, empty (not nil) for none.
func (h holders) of(i int) []string {
	if h[i] == nil {
		return []string{}
	}
	return h[i]
}

// shardHolders maps each shard to the members that hold it
// (group.Member.Holds and Holding), sorted by member id.
func shardHolders(g *group.Group) holders {
	out := holders{}
	for _, m := range g.MemberList() {
		if !m.Holds() {
			continue
		}
		for _, i := range m.Holding() {
			out[i] = append(out[i], m.MemberID)
		}
	}
	return out
}

// ForceReset sets the positions of req's shards (every shard when none
// is named) to req.Target at once, in the group's actor (forceResetMsg),
// racing the members reading them, and answers each shard's positions
// before and after and its holders. It stores nothing. Redis failures
// match contract.ErrDataPlane; without Options.Positions it fails with
// ErrNoPositions.
func (c *System) ForceReset(ctx context.Context, key group.Key, req group.ResetRequest) (contract.OffsetResetResult, error) {
	r := newReplyTo[contract.OffsetResetResult]()
	return ask(ctx, c, &forceResetMsg{routed: routed{Key: key}, Request: req, Reply: r}, r, c.opts.RequestTimeout)
}

// PauseShards pauses shards of a group: they are revoked from their
// readers and granted to nobody until resumed.
func (c *System) PauseShards(ctx context.Context, key group.Key, req contract.PauseRequest) (contract.PausedView, error) {
	return c.pause(ctx, key, req, false)
}

// ResumeShards resumes paused shards of a group.
func (c *System) ResumeShards(ctx context.Context, key group.Key, req contract.PauseRequest) (contract.PausedView, error) {
	return c.pause(ctx, key, req, true)
}

func (c *System) pause(ctx context.Context, key group.Key, req contract.PauseRequest, resume bool) (contract.PausedView, error) {
	r := newReplyTo[contract.PausedView]()
	return ask(ctx, c, &pauseMsg{routed: routed{Key: key}, Request: req, Resume: resume, Reply: r}, r, c.opts.RequestTimeout)
}

// StartReset starts a live offset reset (group.StartReset) and answers it
// as stored; GET …/offsets/resets/{id} follows it to DONE or FAILED.
func (c *System) StartReset(ctx context.Context, key group.Key, req group.ResetRequest) (group.LiveReset, error) {
	r := newReplyTo[group.LiveReset]()
	msg := &resetMsg{routed: routed{Key: key}, Request: req, NewID: "reset-" + uuid.NewString(), Reply: r}
	return ask(ctx, c, msg, r, c.opts.RequestTimeout)
}

// Reset returns live reset id of a group from its committed state.
func (c *System) Reset(ctx context.Context, key group.Key, id string) (group.LiveReset, error) {
	g, err := c.committed(ctx, key)
	if err != nil {
		return group.LiveReset{}, err
	}
	r, ok := g.Reset(id)
	if !ok {
		return r, group.Errorf(contract.CodeResetNotFound, "Live reset %s not found", id)
	}
	return r, nil
}

// advanceReset performs the active reset's next Redis step when its state
// asks for one (group.ResetStep), in the critical section. The actor calls
// it after every message: the heartbeat that releases a reset's last shard
// starts its APPLYING step, and a reset left midway by another coordinator
// resumes here. NextDue polls while a reset is active.
func (a *groupActor) advanceReset() {
	if a.c.opts.Positions == nil || a.stopping || a.core.Failed() != nil || a.core.Pending() > 0 ||
		(a.c.opts.Ownership != nil && !a.owned) || time.Now().Before(a.live.notBefore) {
		return
	}
	if _, step := a.core.Committed().ResetStep(); step == group.ResetWait {
		return
	}
	_, _ = critical(a, core.OpLiveReset, func(op core.Op) (struct{}, error) {
		a.stepReset(op)
		return struct{}{}, nil
	})
	a.publish()
}

// stepReset runs the active reset's steps until it waits for members or
// ends: PAUSING with no holder → read and plan each shard, store
// APPLYING; APPLYING → set each shard, store DONE. A step that fails on
// Redis is retried later (FAILED after maxResetFailures in a row); one
// whose target Redis refuses (ErrResetTarget) fails the reset at once.
func (a *groupActor) stepReset(op core.Op) {
	for {
		r, step := a.core.Committed().ResetStep()
		var err error
		switch step {
		case group.ResetPlan:
			err = a.planReset(op, r)
		case group.ResetApply:
			err = a.applyReset(op, r)
		default:
			return
		}
		if err == nil {
			a.live = liveState{}
			continue
		}
		a.c.opts.Logger.Warn("live reset", "group", a.key.String(), "reset", r.ResetID, "state", r.State, "err", err)
		a.live.failures++
		a.live.notBefore = time.Now().Add(resetRetryDelay)
		if errors.Is(err, group.ErrResetTarget) || a.live.failures >= maxResetFailures {
			a.step(op, core.FailReset{ResetID: r.ResetID, Cause: err.Error()})
			a.live = liveState{}
		}
		return
	}
}

// planReset reads each shard's position and the id to set, and stores the
// reset APPLYING.
func (a *groupActor) planReset(op core.Op, r group.LiveReset) error {
	plans := make([]group.ShardReset, len(r.Shards))
	for i, s := range r.Shards {
		ctx, cancel := a.storeCtx()
		p, err := a.c.opts.Positions.PlanReset(ctx, a.key, s.ShardIndex, r.Target)
		cancel()
		if err != nil {
			return err
		}
		plans[i] = p
	}
	return a.step(op, core.BeginApply{ResetID: r.ResetID, Plans: plans}).Err
}

// applyReset sets each shard to its planned id (setting it again after a
// restart midway is harmless: the id is absolute) and stores the reset
// DONE with the positions after.
func (a *groupActor) applyReset(op core.Op, r group.LiveReset) error {
	after := make([]*contract.GroupPosition, len(r.Shards))
	for i, s := range r.Shards {
		ctx, cancel := a.storeCtx()
		p, err := a.c.opts.Positions.SetID(ctx, a.key, s)
		cancel()
		if err != nil {
			return err
		}
		after[i] = p
	}
	return a.step(op, core.FinishReset{ResetID: r.ResetID, After: after}).Err
}
