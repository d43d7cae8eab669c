package group

import (
	"math"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group/assignor"
)

// Assignor names: how a group's target assignment is computed
// (docs/assignment.md). A group stores "" for count.
const (
	// AssignorCount balances shard counts (package assignor's Assign).
	AssignorCount = "count"
	// AssignorWork balances measured work per unit of capacity, sticky,
	// with hysteresis and a move budget (assignor.Balance).
	AssignorWork = "work"
)

// ValidAssignor reports whether name is an assignor ("" is count).
func ValidAssignor(name string) bool {
	return name == "" || name == AssignorCount || name == AssignorWork
}

// storedAssignor is what Meta.Assignor stores for name: "" for count, so
// that a count group's aggregate is as before.
func storedAssignor(name string) string {
	if name == AssignorWork {
		return AssignorWork
	}
	return ""
}

// AssignorOf returns the group's assignor name, count when unset.
func (m *Meta) AssignorOf() string {
	if m.Assignor == "" {
		return AssignorCount
	}
	return m.Assignor
}

// Work is what a group assigned by work remembers of its measured work: the
// smoothed weight of each shard 0..len(Weights)-1, when it was last
// measured, and the balancer's memory (hysteresis and recent moves). It is
// kept in memory only (Meta.Work is not stored): a coordinator that loads
// the group starts from uniform weights until its first measure. A Work is
// immutable once built.
type Work struct {
	Weights    []float64
	MeasuredAt contract.Instant
	Memory     assignor.WorkMemory
}

// ShardMeasure is what the coordinator read of one shard's stream: its
// ingest rate (entries/s, nil when not known yet) and its backlog, the
// entries of the group not yet delivered (Lag) and delivered but not
// acknowledged (Pending), nil when Redis could not tell.
type ShardMeasure struct {
	Shard   int
	Rate    *float64
	Lag     *int64
	Pending *int64
}

// Measure is one reading of every shard of a group.
type Measure struct {
	Shards []ShardMeasure
}

// Weighing constants (docs/assignment.md, "Weights"):
//   - a shard's work is its ingest rate plus its backlog spread over
//     drainHorizonSeconds, plus baseWeight so that idle shards still count
//     (an idle group is balanced by count);
//   - each measure is averaged with the previous weight (smoothing), so a
//     single noisy reading moves a weight half way only.
const (
	drainHorizonSeconds = 30.0
	baseWeight          = 1.0
	smoothing           = 0.5
)

// weigh returns the weight of each shard 0..g.ShardCount-1 from m, smoothed
// with the previous weights. A shard's backlog is Redis's lag plus its
// pending entries, Redis's count or, when Redis could not tell, what its
// owner reported in its heartbeats (shardProgress).
func (g *Group) weigh(m Measure) []float64 {
	reported := g.reportedPending()
	raw := make([]float64, g.ShardCount)
	for s := range raw {
		raw[s] = baseWeight
	}
	for _, sm := range m.Shards {
		if sm.Shard < 0 || sm.Shard >= len(raw) {
			continue
		}
		backlog := float64(reported[sm.Shard])
		if sm.Pending != nil {
			backlog = float64(*sm.Pending)
		}
		if sm.Lag != nil {
			backlog += float64(*sm.Lag)
		}
		rate := 0.0
		if sm.Rate != nil && !math.IsNaN(*sm.Rate) {
			rate = max(*sm.Rate, 0)
		}
		raw[sm.Shard] += rate + max(backlog, 0)/drainHorizonSeconds
	}
	if prev := g.workWeights(); prev != nil {
		for s := range raw {
			raw[s] = smoothing*prev[s] + (1-smoothing)*raw[s]
		}
	}
	return raw
}

// reportedPending returns the pending count each shard's owners reported.
func (g *Group) reportedPending() map[int]int64 {
	out := map[int]int64{}
	for _, m := range g.Members {
		if !m.Holds() {
			continue
		}
		for _, p := range m.ShardProgress {
			out[p.Shard.ShardIndex] += max(p.PendingCount, 0)
		}
	}
	return out
}

// workWeights returns the remembered weights when they cover the shard
// count, else nil (never measured, or the shard count changed since).
func (g *Group) workWeights() []float64 {
	if w := g.Meta.Work; w != nil && len(w.Weights) == g.ShardCount {
		return w.Weights
	}
	return nil
}

// weights returns the weights the assignor uses: the remembered ones, or 1
// per shard.
func (g *Group) weights() []float64 {
	if w := g.workWeights(); w != nil {
		return w
	}
	w := make([]float64, g.ShardCount)
	for s := range w {
		w[s] = baseWeight
	}
	return w
}

// capacity returns each live member's capacity (runtimeMaxConcurrency,
// at least 1), aligned with g.LiveMemberIDs().
func (g *Group) capacity() []float64 {
	live := g.LiveMemberIDs()
	out := make([]float64, len(live))
	for i, id := range live {
		out[i] = float64(max(g.Members[id].RuntimeMaxConcurrency, 1))
	}
	return out
}

// Rebalance is one measuring interval of a group assigned by work: it
// weighs the shards from m (see weigh), remembers the weights, and lets
// the work balancer (assignor.Balance) move shards when the imbalance was
// sustained, within its budget. A move bumps the group epoch and changes
// the targets, which the members then follow through revoke-before-assign
// like any rebalance. It changes nothing for a group assigned by count,
// one that does not exist, and while a migration or a metadata-correction
// round is open (the moves wait for the next interval). It answers the
// shard weights and member loads.
func (g *Group) Rebalance(now contract.Instant, s Settings, m Measure) Result[contract.WorkView] {
	if !g.Exists() || g.AssignorOf() != AssignorWork {
		return Result[contract.WorkView]{Answer: g.WorkView()}
	}
	t := newTx(g, s, now)
	weights := g.weigh(m)
	mem := assignor.WorkMemory{}
	if w := g.Meta.Work; w != nil {
		mem = w.Memory
	}
	live := g.LiveMemberIDs()
	res := assignor.WorkResult{Memory: mem}
	if g.activeMigration() == nil && g.MetadataCorrection == nil && g.AssignmentEpoch == g.GroupEpoch {
		res = assignor.Balance(assignor.WorkInput{
			Weights: weights, Excluded: g.Paused(), Capacity: g.capacity(), Prev: g.livePrev(live), Memory: mem,
			Now: now.Time(), Params: assignor.DefaultWorkParams(g.ShardCount),
		})
	}
	meta := g.Meta
	meta.Work = &Work{Weights: weights, MeasuredAt: now, Memory: res.Memory}
	t.setMeta(meta)
	if len(res.Changed) > 0 {
		t.bumpGroupEpoch(CauseWorkRebalance)
		before, evidence := g.targetOwners(), workEvidence(weights, live, g.livePrev(live), g.capacity())
		t.setTargets(live, res.Changed, res.Sets)
		t.recordMoves(before, evidence)
		meta = g.Meta
		meta.AssignmentEpoch = g.GroupEpoch
		t.setMeta(meta)
		t.reconcile()
		t.enforceTimeouts("")
	}
	return result(t, g.WorkView())
}

// workEvidence returns the evidence of a work-rebalance's moves: the
// moved shard's weight and the loads (weight per unit of capacity) of the
// live members it left and joined under prev, their targets before the
// move (aligned with live and capacity).
func workEvidence(weights []float64, live []string, prev [][]int, capacity []float64) func(shard int, from, to string) *WorkEvidence {
	load := make(map[string]float64, len(live))
	for i, id := range live {
		sum := 0.0
		for _, s := range prev[i] {
			if s >= 0 && s < len(weights) {
				sum += weights[s]
			}
		}
		load[id] = sum / capacity[i]
	}
	return func(shard int, from, to string) *WorkEvidence {
		e := &WorkEvidence{FromLoad: float32(load[from]), ToLoad: float32(load[to])}
		if shard < len(weights) {
			e.Weight = float32(weights[shard])
		}
		return e
	}
}

// livePrev returns the targets of the live members, in order.
func (g *Group) livePrev(live []string) [][]int {
	prev := make([][]int, len(live))
	for i, id := range live {
		prev[i] = g.Targets[id]
	}
	return prev
}

// assignWork is assign for a group assigned by work: a membership or shard
// count change settles at once (assignor.Balance with Settle), with the
// remembered weights.
func (t *tx) assignWork(prev [][]int) (changed []int, sets [][]int) {
	g := t.g
	res := assignor.Balance(assignor.WorkInput{
		Weights: g.weights(), Excluded: g.Paused(), Capacity: g.capacity(), Prev: prev,
		Now: t.now.Time(), Params: assignor.DefaultWorkParams(g.ShardCount), Settle: true,
	})
	return res.Changed, res.Sets
}
