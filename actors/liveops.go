package actors

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
)

// Live group operations (issue 32): pause and resume shards, and live
// offset resets. The domain (group/liveops.go) keeps the paused shards and
// each reset's state machine; the actor runs the operator's requests as
// admin requests and performs a reset's Redis steps (Options.Positions)
// when its state asks for them (advanceReset).

// Positions reads and sets a consumer group's position on the shard
// streams of a group, for live resets (streams.ResetPositions). Errors
// wrapping group.ErrResetTarget fail the reset; others are retried.
type Positions interface {
	// PlanReset reads the group's position on shard and resolves target
	// against it: the position before and the absolute last-delivered id
	// to set (ShardReset.Before and SetID).
	PlanReset(ctx context.Context, key group.Key, shard int, target group.ResetTarget) (group.ShardReset, error)
	// SetID sets the group's last-delivered id on shard s.ShardIndex to
	// s.SetID (s as planned: Before and SetID) and returns its position
	// after.
	SetID(ctx context.Context, key group.Key, s group.ShardReset) (*contract.GroupPosition, error)
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
	Request group.PauseRequest
	Resume  bool
	Reply   replyTo[group.PausedView]
}

func (m *pauseMsg) exec(a *groupActor) {
	op, handler := "pause-shards", (*group.Group).Pause
	if m.Resume {
		op, handler = "resume-shards", (*group.Group).Resume
	}
	answerAdmin(a, m.Reply, op, func(op string) (group.PausedView, error) {
		if !a.core.Committed().Exists() {
			return group.PausedView{}, groupNotFound()
		}
		return command(a, op, func(w *group.Group, now contract.Instant) group.Result[group.PausedView] {
			return handler(w, now, a.c.opts.Settings, m.Request)
		})
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
	answerAdmin(a, m.Reply, "live-reset", func(op string) (group.LiveReset, error) {
		if !a.core.Committed().Exists() {
			return group.LiveReset{}, groupNotFound()
		}
		if a.c.opts.Positions == nil {
			return group.LiveReset{}, ErrNoPositions
		}
		r, err := command(a, op, func(w *group.Group, now contract.Instant) group.Result[group.LiveReset] {
			return w.StartReset(now, a.c.opts.Settings, m.Request, m.NewID)
		})
		if err != nil {
			return r, err
		}
		a.live = liveState{}
		a.stepReset(op)
		if cur, ok := a.core.Committed().Reset(r.ResetID); ok {
			r = cur
		}
		return r, nil
	})
}

// PauseShards pauses shards of a group: they are revoked from their
// readers and granted to nobody until resumed.
func (c *Coordinator) PauseShards(ctx context.Context, key group.Key, req group.PauseRequest) (group.PausedView, error) {
	return c.pause(ctx, key, req, false)
}

// ResumeShards resumes paused shards of a group.
func (c *Coordinator) ResumeShards(ctx context.Context, key group.Key, req group.PauseRequest) (group.PausedView, error) {
	return c.pause(ctx, key, req, true)
}

func (c *Coordinator) pause(ctx context.Context, key group.Key, req group.PauseRequest, resume bool) (group.PausedView, error) {
	r := newReplyTo[group.PausedView]()
	return ask(ctx, c, &pauseMsg{routed: routed{Key: key}, Request: req, Resume: resume, Reply: r}, r, c.opts.RequestTimeout)
}

// StartReset starts a live offset reset (group.StartReset) and answers it
// as stored; GET …/offsets/resets/{id} follows it to DONE or FAILED.
func (c *Coordinator) StartReset(ctx context.Context, key group.Key, req group.ResetRequest) (group.LiveReset, error) {
	r := newReplyTo[group.LiveReset]()
	msg := &resetMsg{routed: routed{Key: key}, Request: req, NewID: "reset-" + uuid.NewString(), Reply: r}
	return ask(ctx, c, msg, r, c.opts.RequestTimeout)
}

// Reset returns live reset id of a group from its committed state.
func (c *Coordinator) Reset(ctx context.Context, key group.Key, id string) (group.LiveReset, error) {
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
	_, _ = critical(a, "live-reset", func(op string) (struct{}, error) {
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
func (a *groupActor) stepReset(op string) {
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
			_, _ = command(a, op, func(w *group.Group, now contract.Instant) group.Result[group.LiveReset] {
				return w.FailReset(now, a.c.opts.Settings, r.ResetID, err.Error())
			})
			a.live = liveState{}
		}
		return
	}
}

// planReset reads each shard's position and the id to set, and stores the
// reset APPLYING.
func (a *groupActor) planReset(op string, r group.LiveReset) error {
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
	_, err := command(a, op, func(w *group.Group, now contract.Instant) group.Result[group.LiveReset] {
		if _, step := w.ResetStep(); step != group.ResetPlan { // a member took a shard meanwhile
			return group.Result[group.LiveReset]{}
		}
		return w.BeginApply(now, a.c.opts.Settings, r.ResetID, plans)
	})
	return err
}

// applyReset sets each shard to its planned id (setting it again after a
// restart midway is harmless: the id is absolute) and stores the reset
// DONE with the positions after.
func (a *groupActor) applyReset(op string, r group.LiveReset) error {
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
	_, err := command(a, op, func(w *group.Group, now contract.Instant) group.Result[group.LiveReset] {
		return w.FinishReset(now, a.c.opts.Settings, r.ResetID, after)
	})
	return err
}
