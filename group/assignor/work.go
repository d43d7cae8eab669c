package assignor

import (
	"cmp"
	"slices"
	"time"
)

// WorkParams tune the work balancer (see Balance).
type WorkParams struct {
	// Threshold is the tolerated imbalance: the busiest member's load per
	// unit of capacity may exceed the mean by this fraction (0.10: 10 %)
	// before the balancer counts the interval as imbalanced.
	Threshold float64
	// Intervals is how many consecutive imbalanced intervals it takes before
	// shards move (hysteresis).
	Intervals int
	// MovesPerMinute bounds the moves of any 60-second window.
	MovesPerMinute int
}

// DefaultWorkParams returns the defaults for a group of shardCount shards:
// 10 % threshold, 3 intervals, max(8, shardCount/4) moves per minute (a
// skewed group usually needs about a third of its shards moved once, so
// the first balancing takes a minute or two, and noise none).
func DefaultWorkParams(shardCount int) WorkParams {
	return WorkParams{Threshold: 0.10, Intervals: 3, MovesPerMinute: max(8, shardCount/4)}
}

// WorkMemory is what the balancer remembers between intervals: the number
// of consecutive imbalanced intervals so far, and when its recent moves
// happened (ascending, none older than a minute before the last call).
// The zero value is a fresh balancer. It is immutable: Balance returns a new
// one.
type WorkMemory struct {
	Streak int
	Moves  []time.Time
}

// WorkInput is one balancing decision's input.
type WorkInput struct {
	// Weights[s] is shard s's work (any unit; a weight ≤ 0 counts as a
	// negligible one); len(Weights) is the shard count.
	Weights []float64
	// Excluded shards (paused ones) are in no set: a member that held one
	// loses it, and it is never placed. Out-of-range entries are ignored.
	Excluded []int
	// Capacity[i] is the i-th live member's capacity (> 0; a value ≤ 0
	// counts as 1); Prev[i] its previous set. Members are in id order, as
	// for AssignOrdered.
	Capacity []float64
	Prev     [][]int
	Memory   WorkMemory
	// Now is the decision's time (the caller's clock, never read here).
	Now    time.Time
	Params WorkParams
	// Settle marks a membership change (join, leave, new shard count):
	// shards are balanced at once, without hysteresis or move budget.
	// Otherwise this is one measuring interval, gated by both.
	Settle bool
}

// WorkResult is one balancing decision.
type WorkResult struct {
	// Changed are the ascending indexes of the members whose set changes and
	// Sets, aligned with them, their new sets (sorted); every other member
	// keeps Prev[i].
	Changed []int
	Sets    [][]int
	// Moved counts the shards taken from one live member and given to
	// another (shards that had no live owner are placed, not moved).
	Moved  int
	Memory WorkMemory
}

// Balance computes a work-balanced, sticky target assignment.
//
// Rules:
//  1. Normalize Prev as Assign does (rule 1 of the package doc): a shard
//     keeps its smallest-index claimant; out-of-range, duplicate and
//     excluded entries are dropped.
//  2. Place every unowned shard that is not excluded, heaviest first (ties: lowest index), on
//     the member whose load per capacity after taking it is lowest (ties:
//     lowest index). Placing is not moving.
//  3. Imbalance is the busiest member's load per capacity over the mean
//     (total weight ÷ total capacity). The interval is imbalanced when it
//     exceeds 1+Threshold. Outside Settle, the streak counts consecutive
//     imbalanced intervals and resets on a balanced one; moves happen only
//     once it reaches Intervals, and only as many as the budget leaves
//     (MovesPerMinute minus the moves of the last minute).
//  4. A move takes one shard from the busiest member to the least loaded
//     one (ties: lowest index), the shard that minimizes the larger of the
//     two members' new loads per capacity, and only when that is below the
//     busiest member's current load per capacity. Moves go on until the
//     imbalance is within 1+Threshold/2 (the dampening band, so that the
//     next small change does not trigger again), no move improves, or the
//     budget is spent. The streak resets when the moves brought the
//     imbalance within the threshold.
//
// Consequences: every shard has exactly one owner when a member is live; a
// shard never moves while the imbalance stayed within the threshold for
// any of the last Intervals intervals (outside Settle); at most
// MovesPerMinute moves happen in any minute of intervals; with uniform
// weights and capacities the result is balanced by shard count. Excluded
// shards carry no load. Balance never modifies its input.
func Balance(in WorkInput) WorkResult {
	res := WorkResult{Memory: WorkMemory{Streak: in.Memory.Streak, Moves: recentMoves(in.Memory.Moves, in.Now)}}
	if len(in.Prev) == 0 {
		res.Memory.Streak = 0
		return res
	}
	b := newBalancer(in)
	b.place()
	limit := 1 + in.Params.Threshold
	imbalanced := b.imbalance() > limit
	switch {
	case !imbalanced:
		res.Memory.Streak = 0
	case !in.Settle:
		res.Memory.Streak++
	}
	if imbalanced && (in.Settle || res.Memory.Streak >= max(in.Params.Intervals, 1)) {
		budget := -1 // unlimited
		if !in.Settle {
			budget = max(in.Params.MovesPerMinute-len(res.Memory.Moves), 0)
		}
		b.moveUntil(1+in.Params.Threshold/2, budget)
		res.Moved = b.moved()
		for range res.Moved {
			if !in.Settle {
				res.Memory.Moves = append(res.Memory.Moves, in.Now)
			}
		}
		if b.imbalance() <= limit {
			res.Memory.Streak = 0
		}
	}
	res.Changed, res.Sets = b.collect()
	return res
}

// Imbalance returns the busiest member's load per capacity over the mean
// for the given sets (indexes into weights; members aligned with
// capacity), 0 when there is no work or no member. It is what Balance
// compares with 1+Threshold, for callers that show it.
func Imbalance(weights, capacity []float64, sets [][]int) float64 {
	loads := make([]float64, len(sets))
	for i, set := range sets {
		for _, s := range set {
			if s >= 0 && s < len(weights) {
				loads[i] += weights[s]
			}
		}
	}
	return imbalanceOf(loads, capacities(capacity, len(sets)))
}

// recentMoves returns the moves of moves that happened less than a minute
// before now, as a new slice.
func recentMoves(moves []time.Time, now time.Time) []time.Time {
	out := make([]time.Time, 0, len(moves))
	for _, at := range moves {
		if now.Sub(at) < time.Minute {
			out = append(out, at)
		}
	}
	return out
}

// capacities returns n capacities, a missing or non-positive one as 1.
func capacities(c []float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = 1
		if i < len(c) && c[i] > 0 {
			out[i] = c[i]
		}
	}
	return out
}

// imbalanceOf is max(load/cap) ÷ (Σload ÷ Σcap), 0 without load.
func imbalanceOf(loads, caps []float64) float64 {
	var total, totalCap, busiest float64
	for i, l := range loads {
		total += l
		totalCap += caps[i]
		busiest = max(busiest, l/caps[i])
	}
	if total <= 0 || totalCap <= 0 {
		return 0
	}
	return busiest / (total / totalCap)
}

// excluded is the owner of an excluded shard.
const excluded = -2

// minWeight is the weight of a shard given one ≤ 0, so that weightless
// shards are still spread (by count) instead of piling on one member.
const minWeight = 1e-9

// balancer is the working state of one Balance call.
type balancer struct {
	weights []float64
	caps    []float64
	prev    [][]int
	// owner[s] is the member holding shard s, -1 while unowned, excluded
	// for an excluded shard; first[s] its owner after normalization.
	owner, first []int
	loads        []float64
	// touched marks the members whose set may differ from prev.
	touched []bool
	// normal marks the members whose claim differed from prev (rule 1).
	normal []bool
}

func newBalancer(in WorkInput) *balancer {
	n := len(in.Prev)
	b := &balancer{
		weights: make([]float64, len(in.Weights)),
		caps:    capacities(in.Capacity, n),
		prev:    in.Prev,
		owner:   make([]int, len(in.Weights)),
		loads:   make([]float64, n),
		touched: make([]bool, n),
		normal:  make([]bool, n),
	}
	for s, w := range in.Weights {
		b.weights[s] = max(w, minWeight)
		b.owner[s] = -1
	}
	for _, s := range in.Excluded {
		if s >= 0 && s < len(b.owner) {
			b.owner[s], b.weights[s] = excluded, 0
		}
	}
	defer func() { b.first = slices.Clone(b.owner) }()
	for i, set := range in.Prev {
		last := -1
		for _, s := range set {
			if s <= last || s >= len(b.owner) || b.owner[s] != -1 {
				b.normal[i] = true
			}
			if s >= 0 && s < len(b.owner) && b.owner[s] == -1 {
				b.owner[s] = i
				b.loads[i] += b.weights[s]
			}
			last = max(last, s)
		}
	}
	return b
}

// place applies rule 2.
func (b *balancer) place() {
	var free []int
	for s, o := range b.owner {
		if o == -1 {
			free = append(free, s)
		}
	}
	slices.SortStableFunc(free, func(x, y int) int { return cmp.Compare(b.weights[y], b.weights[x]) })
	for _, s := range free {
		best, bestLoad := 0, 0.0
		for i := range b.loads {
			if l := (b.loads[i] + b.weights[s]) / b.caps[i]; i == 0 || l < bestLoad {
				best, bestLoad = i, l
			}
		}
		b.give(s, best)
	}
}

func (b *balancer) give(s, to int) {
	if from := b.owner[s]; from >= 0 {
		b.loads[from] -= b.weights[s]
		b.touched[from] = true
	}
	b.owner[s] = to
	b.loads[to] += b.weights[s]
	b.touched[to] = true
}

func (b *balancer) imbalance() float64 { return imbalanceOf(b.loads, b.caps) }

// moveUntil applies rule 4 until the imbalance is at most target, no move
// improves or budget shards have moved (budget < 0: no bound). Each step
// lowers the larger of two loads and raises none above it, so the sorted
// loads decrease and the loop ends.
func (b *balancer) moveUntil(target float64, budget int) {
	for (budget < 0 || b.moved() < budget) && b.imbalance() > target {
		from, to := b.busiest(), b.idlest()
		if from == to {
			return
		}
		cur := b.loads[from] / b.caps[from]
		shard, best := -1, cur
		for s, o := range b.owner {
			if o != from {
				continue
			}
			w := b.weights[s]
			if after := max((b.loads[from]-w)/b.caps[from], (b.loads[to]+w)/b.caps[to]); improves(after, best) {
				shard, best = s, after
			}
		}
		if shard < 0 {
			return
		}
		b.give(shard, to)
	}
}

// improves reports whether load per capacity after is below before by more
// than rounding: loads are sums of floats, and a move that gains nothing
// measurable is churn.
func improves(after, before float64) bool { return after < before*(1-1e-9) }

// moved counts the shards whose owner is live and not their first one.
func (b *balancer) moved() (n int) {
	for s, o := range b.first {
		if o >= 0 && b.owner[s] != o {
			n++
		}
	}
	return n
}

// busiest and idlest return the member with the highest and lowest load
// per capacity (ties: lowest index).
func (b *balancer) busiest() int {
	best := 0
	for i := range b.loads {
		if b.loads[i]/b.caps[i] > b.loads[best]/b.caps[best] {
			best = i
		}
	}
	return best
}

func (b *balancer) idlest() int {
	best := 0
	for i := range b.loads {
		if b.loads[i]/b.caps[i] < b.loads[best]/b.caps[best] {
			best = i
		}
	}
	return best
}

// collect returns the members whose set differs from prev and their sets.
func (b *balancer) collect() (changed []int, sets [][]int) {
	var owned [][]int
	for i := range b.prev {
		if !b.touched[i] && !b.normal[i] {
			continue
		}
		if owned == nil {
			owned = make([][]int, len(b.prev))
			for s, o := range b.owner {
				if o >= 0 {
					owned[o] = append(owned[o], s)
				}
			}
		}
		if !slices.Equal(owned[i], b.prev[i]) {
			changed = append(changed, i)
			sets = append(sets, owned[i])
		}
	}
	return changed, sets
}
