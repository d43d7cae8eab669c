package group

import (
	"cmp"
	"errors"
	"slices"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group/assignor"
)

// Live group operations (issue 32): paused shards and live offset resets.
//
// A paused shard is in no member's target, so the heartbeat revokes it from
// its reader exactly as a rebalance would (revoke before assign) and grants
// it to nobody. The shards an operator paused are Meta.PausedShards; the
// shards of an active live reset are paused as well, without touching that
// set, so a reset never resumes a shard the operator paused. Both are part
// of the stored aggregate, so they survive restarts and handovers.
//
// A live reset moves through PAUSING (its shards are revoked) → APPLYING
// (no member holds them; the runtime has read each shard's position and
// chosen the last-delivered id to set) → DONE (the runtime set it; the
// shards are granted again), or FAILED from PAUSING or APPLYING (the shards
// are granted again; positions may be partly set, as recorded). The runtime
// asks ResetStep what to do and reports with BeginApply, FinishReset and
// FailReset; every step is a MetaRecord, so a coordinator that takes the
// group over midway resumes where the last one stopped.

// ErrResetTarget is wrapped by the runtime's errors about a reset target
// that Redis cannot take: no retry helps, the reset fails.
var ErrResetTarget = errors.New("reset target cannot be applied")

// MaxKeptResets bounds the live resets a group remembers: the oldest
// finished ones are dropped first.
const MaxKeptResets = 10

// maxResetTargetBytes bounds the text fields of a reset target.
const maxResetTargetBytes = 64

// ResetTarget is where a live reset moves the group, as the operator gave
// it: To is EARLIEST, LATEST, ID (EntryID), TIMESTAMP (TimestampMs) or BY
// (By entries forward, or back when negative). The runtime interprets it
// (XGROUP SETID); the domain only stores it.
type ResetTarget struct {
	To          string
	EntryID     string
	TimestampMs int64
	By          int64
}

// ShardReset is one shard of a live reset: the members that held it when
// the reset started (they pause), the last-delivered id chosen at APPLYING
// (SetID) and the positions before (read at APPLYING, once nobody reads the
// shard) and after (read once it is set).
type ShardReset struct {
	ShardIndex int
	PausedFrom []string
	SetID      string
	Before     *contract.GroupPosition
	After      *contract.GroupPosition
}

// LiveReset is one live offset reset of a group.
type LiveReset struct {
	ResetID     string
	State       contract.ResetState
	Target      ResetTarget
	Shards      []ShardReset
	RequestedBy string
	Reason      string
	// Error says why a FAILED reset failed.
	Error     string
	CreatedAt contract.Instant
	// ApplyingAt is when the reset entered APPLYING: from then on no member
	// reads its shards until they are set.
	ApplyingAt contract.Instant
	UpdatedAt  contract.Instant
}

// ShardIndexes returns the reset's shards.
func (r *LiveReset) ShardIndexes() contract.ShardSet {
	out := make([]int, len(r.Shards))
	for i, s := range r.Shards {
		out[i] = s.ShardIndex
	}
	return contract.NewShardSet(out...)
}

// ResetRequest starts a live reset of Shards (empty: every shard).
type ResetRequest struct {
	Target      ResetTarget
	Shards      []int
	RequestedBy string
	Reason      string
}

// Paused returns every shard no member may be granted: those the operator
// paused and those of an active live reset, below the shard count.
func (g *Group) Paused() contract.ShardSet {
	p := g.PausedShards
	if r := g.ActiveReset(); r != nil {
		p = p.Union(r.ShardIndexes())
	}
	return p.Below(g.ShardCount)
}

// holdersOf maps each owner (Member.Holds) holding a shard of set to those
// shards. It reads the members only, never the index, so it may run on a
// published snapshot.
func (g *Group) holdersOf(set contract.ShardSet) map[string]contract.ShardSet {
	out := map[string]contract.ShardSet{}
	if len(set) == 0 {
		return out
	}
	for id, m := range g.Members {
		if !m.Holds() {
			continue
		}
		if held := m.Holding().Intersect(set); len(held) > 0 {
			out[id] = held
		}
	}
	return out
}

// Pause adds req's shards to the paused set. When the set changes the group
// epoch moves and the targets are recomputed without them, so their readers
// are told to release them (and are fenced after the rebalance timeout if
// they do not). Pausing a paused shard changes nothing.
func (g *Group) Pause(now contract.Instant, s Settings, req contract.PauseRequest) Result[contract.PausedView] {
	set, err := g.validatePause(&req, true)
	if err != nil {
		return Result[contract.PausedView]{Err: err}
	}
	return g.setPaused(now, s, g.PausedShards.Union(set), CausePause)
}

// Resume removes req's shards from the paused set; they are granted again
// (a shard an active live reset holds stays paused until the reset ends).
// A shard beyond the shard count may be resumed: a scale-in may have left
// its pause behind.
func (g *Group) Resume(now contract.Instant, s Settings, req contract.PauseRequest) Result[contract.PausedView] {
	set, err := g.validatePause(&req, false)
	if err != nil {
		return Result[contract.PausedView]{Err: err}
	}
	return g.setPaused(now, s, g.PausedShards.Minus(set), CauseResume)
}

// validatePause checks a pause or resume body; inRange refuses shards
// the group does not have (else only negative ones).
func (g *Group) validatePause(req *contract.PauseRequest, inRange bool) (contract.ShardSet, error) {
	if err := ValidateWho(req.RequestedBy, req.Reason); err != nil {
		return nil, err
	}
	if len(req.Shards) == 0 {
		return nil, Errorf(contract.CodeInvalidRequest, "shards: must not be empty")
	}
	if !inRange {
		if slices.Min(req.Shards) < 0 {
			return nil, Errorf(contract.CodeInvalidRequest, "shards: %d is not a shard index", slices.Min(req.Shards))
		}
		return contract.NewShardSet(req.Shards...), nil
	}
	return g.shardsOf(req.Shards)
}

// shardsOf checks that every index is a shard of the group.
func (g *Group) shardsOf(shards []int) (contract.ShardSet, error) {
	for _, i := range shards {
		if i < 0 || i >= g.ShardCount {
			return nil, Errorf(contract.CodeInvalidRequest, "shards: %d is not a shard of the group (0..%d)", i, g.ShardCount-1)
		}
	}
	return contract.NewShardSet(shards...), nil
}

// setPaused stores the operator's paused set and reassigns for cause
// (pause or resume) when it changed.
func (g *Group) setPaused(now contract.Instant, s Settings, set contract.ShardSet, cause Cause) Result[contract.PausedView] {
	t := newTx(g, s, now)
	if set.Equal(g.PausedShards) {
		return result(t, g.PausedView())
	}
	meta := g.Meta
	meta.PausedShards = set
	t.setMeta(meta)
	t.reassign(cause)
	return result(t, g.PausedView())
}

// reassign is the G bump, for cause, that recomputes the targets after
// the paused shards changed (docs/protocol.md §4.3), then starts the
// rebalance deadlines of members that now hold shards outside their target.
func (t *tx) reassign(cause Cause) {
	t.bumpGroupEpoch(cause)
	t.reconcile()
	t.enforceTimeouts("")
}

// ActiveReset returns the live reset in PAUSING or APPLYING, or nil.
func (g *Group) ActiveReset() *LiveReset {
	for i := range g.LiveResets {
		if !g.LiveResets[i].State.Finished() {
			return &g.LiveResets[i]
		}
	}
	return nil
}

// Reset returns the live reset with the given id.
func (g *Group) Reset(id string) (LiveReset, bool) {
	for _, r := range g.LiveResets {
		if r.ResetID == id {
			return r, true
		}
	}
	return LiveReset{}, false
}

// StartReset records a new live reset of req's shards (every shard when
// empty) in PAUSING with id newID and pauses them. It is refused while
// another live reset is active or a migration is (shard indexes would
// change under it); members holding the shards are named in PausedFrom.
func (g *Group) StartReset(now contract.Instant, s Settings, req ResetRequest, newID string) Result[LiveReset] {
	if err := validateReset(&req); err != nil {
		return Result[LiveReset]{Err: err}
	}
	if r := g.ActiveReset(); r != nil {
		return Result[LiveReset]{Err: Errorf(contract.CodeResetInProgress, "Live reset %s is %s; wait for it to end", r.ResetID, r.State)}
	}
	if m := g.activeMigration(); m != nil {
		return Result[LiveReset]{Err: Errorf(contract.CodeActiveMigrationExists,
			"Group has active migration %s (%s); reset once it ends", m.ReshardingID, m.State)}
	}
	shards := req.Shards
	if len(shards) == 0 {
		shards = contract.Range(0, g.ShardCount)
	}
	set, err := g.shardsOf(shards)
	if err != nil {
		return Result[LiveReset]{Err: err}
	}
	holders := g.holdersOf(set)
	r := LiveReset{ResetID: newID, State: contract.ResetPausing, Target: req.Target, RequestedBy: req.RequestedBy,
		Reason: req.Reason, CreatedAt: now, UpdatedAt: now}
	for _, i := range set {
		sr := ShardReset{ShardIndex: i, PausedFrom: []string{}}
		for id, held := range holders {
			if held.Contains(i) {
				sr.PausedFrom = append(sr.PausedFrom, id)
			}
		}
		slices.Sort(sr.PausedFrom)
		r.Shards = append(r.Shards, sr)
	}
	t := newTx(g, s, now)
	t.putReset(r)
	t.reassign(CauseLiveReset)
	return result(t, r)
}

func validateReset(req *ResetRequest) error {
	var v violations
	v.who(req.RequestedBy, &req.Reason)
	v.notBlank("to", req.Target.To)
	v.atMostBytes("to", req.Target.To, maxResetTargetBytes)
	v.atMostBytes("entryId", req.Target.EntryID, maxResetTargetBytes)
	return v.err()
}

// ResetStep is what the runtime must do next for the active live reset.
type ResetStep uint8

const (
	// ResetWait: nothing, or members still hold the reset's shards.
	ResetWait ResetStep = iota
	// ResetPlan: no member holds the shards; read each position, choose
	// the id to set and report it with BeginApply.
	ResetPlan
	// ResetApply: set each shard's chosen id (XGROUP SETID), read the
	// position after and report it with FinishReset.
	ResetApply
)

// ResetStep returns the active live reset and what it waits for. It reads
// the members only, so it may run on a published snapshot.
func (g *Group) ResetStep() (LiveReset, ResetStep) {
	r := g.ActiveReset()
	switch {
	case r == nil:
		return LiveReset{}, ResetWait
	case r.State == contract.ResetApplying:
		return *r, ResetApply
	case len(g.holdersOf(r.ShardIndexes())) == 0:
		return *r, ResetPlan
	}
	return *r, ResetWait
}

// BeginApply moves PAUSING reset id to APPLYING with plans, one per shard
// of the reset in its order: the position before and the id to set. The
// caller checked (ResetStep) that no member holds the shards.
func (g *Group) BeginApply(now contract.Instant, s Settings, id string, plans []ShardReset) Result[LiveReset] {
	r, err := g.activeResetIn(id, contract.ResetPausing)
	if err != nil {
		return Result[LiveReset]{Err: err}
	}
	if len(plans) != len(r.Shards) {
		return Result[LiveReset]{Err: Errorf(contract.CodeInvalidRequest, "reset %s: %d plans for %d shards", id, len(plans), len(r.Shards))}
	}
	r.Shards = slices.Clone(r.Shards)
	for i, p := range plans {
		r.Shards[i].SetID, r.Shards[i].Before = p.SetID, p.Before
	}
	r.State, r.ApplyingAt, r.UpdatedAt = contract.ResetApplying, now, now
	t := newTx(g, s, now)
	t.putReset(r)
	return result(t, r)
}

// FinishReset ends APPLYING reset id as DONE with after, each shard's
// position once set (in the reset's order), and grants its shards again.
func (g *Group) FinishReset(now contract.Instant, s Settings, id string, after []*contract.GroupPosition) Result[LiveReset] {
	r, err := g.activeResetIn(id, contract.ResetApplying)
	if err != nil {
		return Result[LiveReset]{Err: err}
	}
	r.Shards = slices.Clone(r.Shards)
	for i := range r.Shards {
		if i < len(after) {
			r.Shards[i].After = after[i]
		}
	}
	return g.endReset(now, s, r, contract.ResetDone)
}

// FailReset ends active reset id as FAILED with cause and grants its
// shards again.
func (g *Group) FailReset(now contract.Instant, s Settings, id, cause string) Result[LiveReset] {
	r, err := g.activeResetIn(id, "")
	if err != nil {
		return Result[LiveReset]{Err: err}
	}
	r.Error = cause
	return g.endReset(now, s, r, contract.ResetFailed)
}

func (g *Group) endReset(now contract.Instant, s Settings, r LiveReset, state contract.ResetState) Result[LiveReset] {
	r.State, r.UpdatedAt = state, now
	t := newTx(g, s, now)
	t.putReset(r)
	t.reassign(CauseLiveReset)
	return result(t, r)
}

// activeResetIn returns a copy of the active reset when its id is id and
// its state is state ("" for either active state).
func (g *Group) activeResetIn(id string, state contract.ResetState) (LiveReset, error) {
	r := g.ActiveReset()
	if r == nil || r.ResetID != id || (state != "" && r.State != state) {
		return LiveReset{}, Errorf(contract.CodeResetNotFound, "No live reset %s in state %s", id, cmp.Or(string(state), "PAUSING or APPLYING"))
	}
	return *r, nil
}

// putReset stores r in the group's live resets (replacing the one with
// its id), keeping at most MaxKeptResets: the oldest finished ones go.
func (t *tx) putReset(r LiveReset) {
	meta := t.g.Meta
	list := make([]LiveReset, 0, len(meta.LiveResets)+1)
	for _, old := range meta.LiveResets {
		if old.ResetID != r.ResetID {
			list = append(list, old)
		}
	}
	list = append(list, r)
	for len(list) > MaxKeptResets {
		i := slices.IndexFunc(list, func(x LiveReset) bool { return x.State.Finished() })
		list = slices.Delete(list, i, i+1)
	}
	meta.LiveResets = list
	t.setMeta(meta)
}

// assignUnpaused is assignor.AssignOrdered over the shards that are not
// paused: they are numbered 0..k-1 for the assignor and mapped back, so
// the targets stay balanced and sticky over what may be read, and a
// member whose previous set held a paused shard (or one beyond the shard
// count) changes too.
func assignUnpaused(shardCount int, paused contract.ShardSet, prev [][]int) (changed []int, sets [][]int) {
	if len(paused) == 0 {
		return assignor.AssignOrdered(shardCount, prev)
	}
	free := contract.Range(0, shardCount).Minus(paused)
	dense := make([]int, shardCount) // shard → its number among free, -1 when paused
	for s := range dense {
		dense[s] = -1
	}
	for j, s := range free {
		dense[s] = j
	}
	in := make([][]int, len(prev))
	for i, p := range prev {
		for _, s := range p {
			if s >= 0 && s < shardCount && dense[s] >= 0 {
				in[i] = append(in[i], dense[s])
			}
		}
	}
	sparse := func(d []int) []int {
		out := make([]int, len(d))
		for k, x := range d {
			out[k] = free[x]
		}
		return out
	}
	denseChanged, denseSets := assignor.AssignOrdered(len(free), in)
	for i := range prev {
		var set []int
		switch j, found := slices.BinarySearch(denseChanged, i); {
		case found:
			set = sparse(denseSets[j])
		case len(in[i]) != len(prev[i]):
			set = sparse(in[i])
		default:
			continue
		}
		changed, sets = append(changed, i), append(sets, set)
	}
	return changed, sets
}
