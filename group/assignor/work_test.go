package assignor

import (
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"
)

var t0 = time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)

// skewed returns the weights of the scenario: shards hot get 10,
// the others 1.
func skewed(shards int, hot ...int) []float64 {
	w := make([]float64, shards)
	for s := range w {
		w[s] = 1
	}
	for _, s := range hot {
		w[s] = 10
	}
	return w
}

// countStart is the count assignor's result for n members.
func countStart(shards, n int) [][]int {
	_, sets := AssignOrdered(shards, make([][]int, n))
	return sets
}

// apply returns prev with res's changes.
func apply(prev [][]int, res WorkResult) [][]int {
	next := slices.Clone(prev)
	for j, i := range res.Changed {
		next[i] = res.Sets[j]
	}
	return next
}

func equalCaps(n int) []float64 {
	c := make([]float64, n)
	for i := range c {
		c[i] = 1
	}
	return c
}

// TestBalanceSkewedScenario is the bench's shape: 64 shards, 8 members of
// equal capacity, 4 shards at 10x, starting from the count assignment
// (two hot shards on each of two members). Measured once per interval, the
// balancer waits Intervals intervals, then moves within its budget until
// the busiest member is within the threshold, and stays put afterwards.
func TestBalanceSkewedScenario(t *testing.T) {
	w := skewed(64, 0, 1, 8, 9)
	caps := equalCaps(8)
	sets := countStart(64, 8)
	params := DefaultWorkParams(64)
	if got := Imbalance(w, caps, sets); got < 1.5 {
		t.Fatalf("count start imbalance %.2f, want a skewed start", got)
	}
	var mem WorkMemory
	moves := 0
	for k := range 40 {
		now := t0.Add(time.Duration(k) * 5 * time.Second)
		res := Balance(WorkInput{Weights: w, Capacity: caps, Prev: sets, Memory: mem, Now: now, Params: params})
		if k < params.Intervals-1 && res.Moved > 0 {
			t.Fatalf("interval %d moved %d shards before the hysteresis", k, res.Moved)
		}
		checkOwners(t, 64, apply(sets, res))
		sets, mem, moves = apply(sets, res), res.Memory, moves+res.Moved
	}
	if got := Imbalance(w, caps, sets); got > 1+params.Threshold {
		t.Fatalf("imbalance %.3f after balancing, want ≤ %.2f (sets %v)", got, 1+params.Threshold, sets)
	}
	// From the count start, about 20 shards must change owner (2 hot, 18
	// cold) to bring all 8 members within 10 %.
	if moves > 24 {
		t.Fatalf("%d moves, want about 20", moves)
	}
	// Balanced: the same weights with noise within the threshold move nothing.
	for k := range 20 {
		noisy := slices.Clone(w)
		noisy[k%64] *= 1.03
		res := Balance(WorkInput{Weights: noisy, Capacity: caps, Prev: sets, Memory: mem, Now: t0.Add(time.Hour + time.Duration(k)*time.Second), Params: params})
		if res.Moved > 0 || len(res.Changed) > 0 {
			t.Fatalf("noise moved %d shards", res.Moved)
		}
		mem = res.Memory
	}
}

// TestBalanceCapacity: members of capacity 1, 2 and 4 get work in
// proportion.
func TestBalanceCapacity(t *testing.T) {
	w := skewed(64, 3, 17, 40, 41)
	caps := []float64{1, 2, 4}
	res := Balance(WorkInput{Weights: w, Capacity: caps, Prev: make([][]int, 3), Now: t0, Params: DefaultWorkParams(64), Settle: true})
	sets := apply(make([][]int, 3), res)
	checkOwners(t, 64, sets)
	if got := Imbalance(w, caps, sets); got > 1.1 {
		t.Fatalf("imbalance %.3f, want ≤ 1.1 (sets %v)", got, sets)
	}
}

// TestBalanceUniformIsCountBalanced: equal weights and capacities give
// every member floor or floor+1 shards.
func TestBalanceUniformIsCountBalanced(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		shards := rapid.IntRange(0, 200).Draw(t, "shards")
		n := rapid.IntRange(1, 20).Draw(t, "members")
		prev := drawPrev(t, shards, n)
		w := make([]float64, shards)
		for s := range w {
			w[s] = 1
		}
		res := Balance(WorkInput{Weights: w, Capacity: equalCaps(n), Prev: prev, Now: t0, Params: WorkParams{Threshold: 0}, Settle: true})
		sets := apply(prev, res)
		checkOwners(t, shards, sets)
		for _, set := range sets {
			if len(set) < shards/n || len(set) > shards/n+1 {
				t.Fatalf("sizes %v for %d shards", sizes(sets), shards)
			}
		}
	})
}

// TestBalanceProperties checks, for arbitrary weights, capacities, previous
// sets and memories: one owner per shard; no live owner loses a shard
// unless the imbalance was sustained for Intervals intervals (or Settle);
// moves within the budget; the result is a local optimum or within the
// dampening band; unchanged members keep their sets.
func TestBalanceProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		shards := rapid.IntRange(0, 120).Draw(t, "shards")
		n := rapid.IntRange(1, 12).Draw(t, "members")
		prev := drawPrev(t, shards, n)
		w := make([]float64, shards)
		for s := range w {
			w[s] = rapid.Float64Range(0, 100).Draw(t, "weight")
		}
		caps := make([]float64, n)
		for i := range caps {
			caps[i] = float64(rapid.IntRange(0, 8).Draw(t, "capacity"))
		}
		params := WorkParams{
			Threshold:      rapid.Float64Range(0, 0.5).Draw(t, "threshold"),
			Intervals:      rapid.IntRange(1, 5).Draw(t, "intervals"),
			MovesPerMinute: rapid.IntRange(0, 10).Draw(t, "budget"),
		}
		var mem WorkMemory
		mem.Streak = rapid.IntRange(0, 6).Draw(t, "streak")
		for range rapid.IntRange(0, 12).Draw(t, "recent") {
			mem.Moves = append(mem.Moves, t0.Add(-time.Duration(rapid.IntRange(0, 120).Draw(t, "ago"))*time.Second))
		}
		slices.SortFunc(mem.Moves, func(a, b time.Time) int { return a.Compare(b) })
		settle := rapid.Bool().Draw(t, "settle")
		excluded := rapid.SliceOfN(rapid.IntRange(-1, shards), 0, 4).Draw(t, "excluded")
		in := WorkInput{Weights: w, Excluded: excluded, Capacity: caps, Prev: cloneNested(prev), Memory: mem, Now: t0, Params: params, Settle: settle}
		res := Balance(in)
		if !slices.EqualFunc(in.Prev, prev, slices.Equal) {
			t.Fatalf("Balance modified its input")
		}
		next := apply(prev, res)
		checkOwners(t, shards, next, excluded...)

		moved := movedShards(shards, prev, next)
		if moved != res.Moved {
			t.Fatalf("Moved = %d, counted %d", res.Moved, moved)
		}
		if !settle && mem.Streak+1 < params.Intervals && moved > 0 {
			t.Fatalf("moved %d shards with streak %d < %d intervals", moved, mem.Streak+1, params.Intervals)
		}
		recent := len(recentMoves(mem.Moves, t0))
		if !settle && moved > max(params.MovesPerMinute-recent, 0) {
			t.Fatalf("moved %d, budget %d - %d recent", moved, params.MovesPerMinute, recent)
		}
		if !settle && len(res.Memory.Moves) != recent+moved {
			t.Fatalf("memory holds %d moves, want %d", len(res.Memory.Moves), recent+moved)
		}
		if moved > 0 && res.Moved < max(params.MovesPerMinute-recent, 0) || settle {
			// The moves stopped by themselves: within the band, or no single
			// move from the busiest to the idlest improves.
			checkSettled(t, w, caps, next, params.Threshold, moved)
		}
		for i := range next {
			if !slices.Contains(res.Changed, i) && !slices.Equal(next[i], prev[i]) {
				t.Fatalf("member %d changed without being reported", i)
			}
		}
	})
}

// TestBalanceBudgetOverTime: under a sustained imbalance that needs many
// moves, no 60-second window of intervals sees more than the budget.
func TestBalanceBudgetOverTime(t *testing.T) {
	w := skewed(64, 0, 1, 2, 3)
	caps := equalCaps(8)
	sets := make([][]int, 8)
	sets[0] = make([]int, 64)
	for s := range sets[0] {
		sets[0][s] = s
	}
	params := WorkParams{Threshold: 0.1, Intervals: 2, MovesPerMinute: 3}
	var mem WorkMemory
	var at []time.Time
	for k := range 400 {
		now := t0.Add(time.Duration(k) * 7 * time.Second)
		res := Balance(WorkInput{Weights: w, Capacity: caps, Prev: sets, Memory: mem, Now: now, Params: params})
		for range res.Moved {
			at = append(at, now)
		}
		sets, mem = apply(sets, res), res.Memory
	}
	for i := range at {
		j := i
		for j < len(at) && at[j].Sub(at[i]) < time.Minute {
			j++
		}
		if j-i > params.MovesPerMinute {
			t.Fatalf("%d moves in the minute from %v", j-i, at[i])
		}
	}
	if got := Imbalance(w, caps, sets); got > 1+params.Threshold {
		t.Fatalf("imbalance %.3f at the end, want ≤ %.2f", got, 1+params.Threshold)
	}
}

func drawPrev(t *rapid.T, shards, n int) [][]int {
	prev := make([][]int, n)
	for i := range prev {
		prev[i] = rapid.SliceOfN(rapid.IntRange(-2, shards+2), 0, shards/n+3).Draw(t, "prev")
	}
	return prev
}

func cloneNested(s [][]int) [][]int {
	out := make([][]int, len(s))
	for i := range s {
		out[i] = slices.Clone(s[i])
	}
	return out
}

func sizes(sets [][]int) []int {
	out := make([]int, len(sets))
	for i, s := range sets {
		out[i] = len(s)
	}
	return out
}

type fataler interface{ Fatalf(string, ...any) }

// checkOwners: every shard 0..shards-1 but the excluded ones in exactly one
// set, sets ascending.
func checkOwners(t fataler, shards int, sets [][]int, excluded ...int) {
	seen := make([]int, shards)
	for _, set := range sets {
		if !slices.IsSorted(set) {
			t.Fatalf("unsorted set %v", set)
		}
		for _, s := range set {
			if s < 0 || s >= shards {
				t.Fatalf("shard %d out of range", s)
			}
			seen[s]++
		}
	}
	for s, k := range seen {
		if slices.Contains(excluded, s) {
			if k != 0 {
				t.Fatalf("excluded shard %d owned %d times", s, k)
			}
			continue
		}
		if k != 1 && len(sets) > 0 {
			t.Fatalf("shard %d owned %d times", s, k)
		}
	}
}

// movedShards counts shards whose normalized previous owner differs from
// their new one.
func movedShards(shards int, prev, next [][]int) int {
	owner := make([]int, shards)
	for s := range owner {
		owner[s] = -1
	}
	for i, set := range prev {
		for _, s := range set {
			if s >= 0 && s < shards && owner[s] < 0 {
				owner[s] = i
			}
		}
	}
	moved := 0
	for i, set := range next {
		for _, s := range set {
			if owner[s] >= 0 && owner[s] != i {
				moved++
			}
		}
	}
	return moved
}

// checkSettled: nothing moved and the imbalance is within the threshold,
// or it is within the dampening band, or, for one of
// the busiest members (ties within rounding), no shard moved to the idlest
// lowers the larger of their loads.
func checkSettled(t fataler, w, caps []float64, sets [][]int, threshold float64, moved int) {
	if got := Imbalance(w, caps, sets); got <= 1+threshold/2 || moved == 0 && got <= 1+threshold {
		return
	}
	b := newBalancer(WorkInput{Weights: w, Capacity: caps, Prev: sets})
	top, to := b.loads[b.busiest()]/b.caps[b.busiest()], b.idlest()
	for from := range sets {
		cur := b.loads[from] / b.caps[from]
		if improves(cur, top) {
			continue
		}
		stuck := true
		for _, s := range sets[from] {
			wt := b.weights[s]
			if improves(max((b.loads[from]-wt)/b.caps[from], (b.loads[to]+wt)/b.caps[to]), cur) {
				stuck = false
			}
		}
		if stuck {
			return
		}
	}
	t.Fatalf("every busiest member could still give a shard to %d (sets %v)", to, sets)
}
