package assignor

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

type sets = map[string][]int

func TestAssignExamples(t *testing.T) {
	tests := []struct {
		name        string
		shards      int
		live        []string
		prev        sets
		want        sets
		wantChanged []string
	}{
		{"no live members", 6, nil, sets{"a": {0, 1}}, sets{}, nil},
		{"first member takes all", 6, []string{"a"}, nil,
			sets{"a": {0, 1, 2, 3, 4, 5}}, []string{"a"}},
		{"joiner takes highest shards", 6, []string{"a", "b"}, sets{"a": {0, 1, 2, 3, 4, 5}},
			sets{"a": {0, 1, 2}, "b": {3, 4, 5}}, []string{"a", "b"}},
		{"second joiner", 6, []string{"c", "a", "b"}, sets{"a": {0, 1, 2}, "b": {3, 4, 5}},
			sets{"a": {0, 1}, "b": {3, 4}, "c": {2, 5}}, []string{"a", "b", "c"}},
		{"leaver's shards go lowest first to the least loaded", 6, []string{"a", "c"},
			sets{"a": {0, 1}, "b": {3, 4}, "c": {2, 5}},
			sets{"a": {0, 1, 3}, "c": {2, 4, 5}}, []string{"a", "c"}},
		{"balanced prev is kept", 5, []string{"a", "b"}, sets{"a": {1, 3}, "b": {0, 2, 4}},
			sets{"a": {1, 3}, "b": {0, 2, 4}}, nil},
		{"scale 12 to 6 ends balanced", 6, []string{"a", "b", "c", "d"},
			sets{"a": {0, 1, 2}, "b": {3, 4, 5}, "c": {6, 7, 8}, "d": {9, 10, 11}},
			sets{"a": {0, 1}, "b": {3, 4}, "c": {2}, "d": {5}}, []string{"a", "b", "c", "d"}},
		{"scale 6 to 12", 12, []string{"a", "b"}, sets{"a": {0, 1, 2}, "b": {3, 4, 5}},
			sets{"a": {0, 1, 2, 6, 8, 10}, "b": {3, 4, 5, 7, 9, 11}}, []string{"a", "b"}},
		{"zero shards", 0, []string{"a", "b"}, sets{"a": {0, 1}, "b": {}},
			sets{"a": nil, "b": nil}, []string{"a"}},
		{"negative shard count is zero", -3, []string{"a"}, nil, sets{"a": nil}, nil},
		{"more members than shards", 2, []string{"a", "b", "c"}, sets{"c": {0, 1}},
			sets{"a": {1}, "b": nil, "c": {0}}, []string{"a", "c"}},
		{"ceil quota goes to the member keeping most", 5, []string{"a", "b"},
			sets{"a": {0, 1}, "b": {2, 3, 4}},
			sets{"a": {0, 1}, "b": {2, 3, 4}}, nil},
		{"ceil quota ties go to the smallest id", 7, []string{"a", "b", "c"},
			sets{"a": {0, 1, 2}, "b": {3, 4, 5}, "c": {6}},
			sets{"a": {0, 1, 2}, "b": {3, 4}, "c": {5, 6}}, []string{"b", "c"}},
		{"members that are not live are ignored", 4, []string{"a", "b"},
			sets{"a": {0, 1}, "x": {2, 3}},
			sets{"a": {0, 1}, "b": {2, 3}}, []string{"b"}},
		{"duplicate live ids count once", 4, []string{"b", "a", "b"}, nil,
			sets{"a": {0, 2}, "b": {1, 3}}, []string{"a", "b"}},
		{"overlap belongs to the smallest id", 2, []string{"a", "b"}, sets{"a": {0, 1}, "b": {1}},
			sets{"a": {0}, "b": {1}}, []string{"a"}},
		{"unsorted set is sorted", 2, []string{"a"}, sets{"a": {1, 0}},
			sets{"a": {0, 1}}, []string{"a"}},
		{"unsorted, duplicate and out-of-range entries", 4, []string{"a", "b"},
			sets{"a": {3, -1, 1, 3, 9}, "b": {0}},
			sets{"a": {1, 3}, "b": {0, 2}}, []string{"a", "b"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			next, changed := Assign(tc.shards, tc.live, tc.prev)
			if !equalSets(next, tc.want) {
				t.Errorf("next = %v, want %v", next, tc.want)
			}
			if !slices.Equal(changed, tc.wantChanged) {
				t.Errorf("changed = %q, want %q", changed, tc.wantChanged)
			}
		})
	}
}

// TestAssignJoinsAndLeave feeds every result back as prev (docs/protocol.md §5 example).
func TestAssignJoinsAndLeave(t *testing.T) {
	steps := []struct {
		live []string
		want sets
	}{
		{[]string{"a"}, sets{"a": {0, 1, 2, 3, 4, 5}}},
		{[]string{"a", "b"}, sets{"a": {0, 1, 2}, "b": {3, 4, 5}}},
		{[]string{"a", "b", "c"}, sets{"a": {0, 1}, "b": {3, 4}, "c": {2, 5}}},
		{[]string{"a", "c"}, sets{"a": {0, 1, 3}, "c": {2, 4, 5}}},
	}
	var prev sets
	for i, st := range steps {
		next, _ := Assign(6, st.live, prev)
		if !equalSets(next, st.want) {
			t.Fatalf("step %d: next = %v, want %v", i, next, st.want)
		}
		prev = next
	}
}

func TestAssignDoesNotModifyInputs(t *testing.T) {
	live := []string{"c", "a", "b"}
	prev := sets{"a": {0, 1, 2, 3, 4, 5, 6, 7}, "b": {9, 8}}
	liveCopy, prevCopy := slices.Clone(live), cloneSets(prev)
	Assign(9, live, prev)
	if !slices.Equal(live, liveCopy) || !equalSets(prev, prevCopy) {
		t.Fatalf("inputs modified: live %q prev %v", live, prev)
	}
}

// TestAssignMatchesReference is the differential property test against the
// naive reference assignor.
func TestAssignMatchesReference(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		shards := rapid.IntRange(0, 200).Draw(t, "shards")
		live, prev := drawInput(t, shards)
		liveCopy, prevCopy := slices.Clone(live), cloneSets(prev)

		next, changed := Assign(shards, live, prev)

		if !slices.Equal(live, liveCopy) || !equalSets(prev, prevCopy) {
			t.Fatalf("inputs modified")
		}
		if want := referenceAssign(shards, live, prev); !equalSets(next, want) {
			t.Fatalf("next = %v\nreference = %v", next, want)
		}
		checkInvariants(t, shards, live, next)
		if got, want := moves(shards, live, prev, next), minimumMoves(shards, live, prev); got != want {
			t.Fatalf("moved %d shards, minimum is %d", got, want)
		}
		if want := changedIDs(live, prev, next); !slices.Equal(changed, want) {
			t.Fatalf("changed = %q, want %q", changed, want)
		}

		again, changedAgain := Assign(shards, live, next)
		if !equalSets(again, next) || len(changedAgain) != 0 {
			t.Fatalf("not idempotent: %v then %v (changed %q)", next, again, changedAgain)
		}
	})
}

func TestAssignOrderedReturnsOnlyChanges(t *testing.T) {
	prev := [][]int{{0, 1, 2}, {3, 4, 5}, nil}
	changed, sets := AssignOrdered(6, prev)
	if !slices.Equal(changed, []int{0, 1, 2}) ||
		!slices.EqualFunc(sets, [][]int{{0, 1}, {3, 4}, {2, 5}}, slices.Equal) {
		t.Fatalf("join: changed %v sets %v", changed, sets)
	}
	if changed, sets := AssignOrdered(6, [][]int{{0, 1}, {3, 4}, {2, 5}}); len(changed)+len(sets) != 0 {
		t.Fatalf("balanced: changed %v sets %v", changed, sets)
	}
	if changed, sets := AssignOrdered(6, nil); len(changed)+len(sets) != 0 {
		t.Fatalf("no members: changed %v sets %v", changed, sets)
	}
}

// TestAssignOrderedMatchesAssign checks that the slice entry point agrees
// with the map one and reports exactly the members whose set changes.
func TestAssignOrderedMatchesAssign(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		shards := rapid.IntRange(-1, 200).Draw(t, "shards")
		live, prev := drawInput(t, shards)
		ids := slices.Compact(slices.Sorted(slices.Values(live)))
		ordered := make([][]int, len(ids))
		for i, id := range ids {
			ordered[i] = prev[id]
		}
		orderedCopy := make([][]int, len(ordered))
		for i, set := range ordered {
			orderedCopy[i] = slices.Clone(set)
		}

		changedAt, changedSets := AssignOrdered(shards, ordered)
		want, _ := Assign(shards, live, prev)

		if !slices.EqualFunc(ordered, orderedCopy, slices.Equal) {
			t.Fatalf("prev modified")
		}
		if len(changedSets) != len(changedAt) || !slices.IsSorted(changedAt) {
			t.Fatalf("changed %v with %d sets", changedAt, len(changedSets))
		}
		next := slices.Clone(ordered)
		for j, i := range changedAt {
			if slices.Equal(changedSets[j], ordered[i]) {
				t.Fatalf("member %d reported changed but keeps %v", i, ordered[i])
			}
			next[i] = changedSets[j]
		}
		for i, id := range ids {
			if !slices.Equal(next[i], want[id]) {
				t.Fatalf("%s: %v, Assign gives %v", id, next[i], want[id])
			}
		}
	})
}

// TestMinimumMovesIsOptimal checks the closed form used by the differential
// test against an exhaustive search over every balanced assignment.
func TestMinimumMovesIsOptimal(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		shards := rapid.IntRange(0, 6).Draw(t, "shards")
		members := rapid.IntRange(1, 3).Draw(t, "members")
		live := memberIDs[:members]
		prev := sets{}
		for _, id := range live {
			prev[id] = rapid.SliceOfN(rapid.IntRange(-1, shards+1), 0, 4).Draw(t, "prev "+id)
		}
		n := normalize(shards, live, prev)

		best := -1
		owner := make([]int, shards)
		var search func(s int)
		search = func(s int) {
			if s == shards {
				size := make([]int, members)
				moved := 0
				for x, m := range owner {
					size[m]++
					if n.owner[x] != m {
						moved++
					}
				}
				if slices.Max(size)-slices.Min(size) <= 1 && (best < 0 || moved < best) {
					best = moved
				}
				return
			}
			for m := range members {
				owner[s] = m
				search(s + 1)
			}
		}
		search(0)

		if got := minimumMoves(shards, live, prev); got != best {
			t.Fatalf("minimumMoves = %d, exhaustive search = %d", got, best)
		}
	})
}

var memberIDs = []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"}

// drawInput draws live ids (any order, possibly duplicated) and a prev map:
// either an earlier result of Assign (a valid target, for other members and
// possibly another shard count) or arbitrary sets.
func drawInput(t *rapid.T, shards int) ([]string, sets) {
	live := drawIDs(t, "live")
	if rapid.Bool().Draw(t, "valid prev") {
		oldShards := rapid.IntRange(0, 200).Draw(t, "old shards")
		old, _ := Assign(oldShards, drawIDs(t, "old live"), drawArbitrary(t, oldShards))
		return live, old
	}
	return live, drawArbitrary(t, shards)
}

func drawIDs(t *rapid.T, label string) []string {
	return rapid.SliceOfN(rapid.SampledFrom(memberIDs), 0, len(memberIDs)+2).Draw(t, label)
}

// drawArbitrary draws sets with out-of-range, duplicated, unsorted and
// overlapping entries, possibly for members that are not live.
func drawArbitrary(t *rapid.T, shards int) sets {
	prev := sets{}
	for _, m := range drawIDs(t, "prev members") {
		prev[m] = rapid.SliceOfN(rapid.IntRange(-2, shards+10), 0, 30).Draw(t, "prev "+m)
	}
	return prev
}

// checkInvariants asserts the contract: one entry per distinct live id,
// sorted sets, every shard exactly once, sizes within one.
func checkInvariants(t *rapid.T, shards int, live []string, next sets) {
	ids := slices.Compact(slices.Sorted(slices.Values(live)))
	if got := slices.Sorted(maps.Keys(next)); !slices.Equal(got, ids) {
		t.Fatalf("members %q, want %q", got, ids)
	}
	if len(ids) == 0 {
		return
	}
	seen := make([]int, shards)
	lo, hi := shards, 0
	for id, set := range next {
		if !slices.IsSorted(set) {
			t.Fatalf("%s: unsorted %v", id, set)
		}
		for _, s := range set {
			if s < 0 || s >= shards {
				t.Fatalf("%s: shard %d out of range", id, s)
			}
			seen[s]++
		}
		lo, hi = min(lo, len(set)), max(hi, len(set))
	}
	for s, c := range seen {
		if c != 1 {
			t.Fatalf("shard %d assigned %d times", s, c)
		}
	}
	if hi-lo > 1 {
		t.Fatalf("unbalanced: sizes from %d to %d", lo, hi)
	}
}

// changedIDs lists the live ids whose set differs from prev, ascending.
func changedIDs(live []string, prev, next sets) []string {
	var out []string
	for _, id := range slices.Compact(slices.Sorted(slices.Values(live))) {
		if !slices.Equal(next[id], prev[id]) {
			out = append(out, id)
		}
	}
	return out
}

// equalSets compares assignments, treating nil and empty sets alike.
func equalSets(a, b sets) bool {
	return maps.EqualFunc(a, b, func(x, y []int) bool { return slices.Equal(x, y) })
}

func cloneSets(s sets) sets {
	out := sets{}
	for id, set := range s {
		out[id] = slices.Clone(set)
	}
	return out
}

// benchIDs returns n member ids sorted ascending.
func benchIDs(n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("member-%06d", i)
	}
	return ids
}

const (
	benchMembers = 10_000
	benchShards  = 10 * benchMembers
)

// benchBoth runs Assign on (live, prev) and AssignOrdered on the same input
// as sub-benchmarks "map" and "ordered"; live must be sorted.
func benchBoth(b *testing.B, live []string, prev sets) {
	b.Run("map", func(b *testing.B) {
		for b.Loop() {
			Assign(benchShards, live, prev)
		}
	})
	ordered := make([][]int, len(live))
	for i, id := range live {
		ordered[i] = prev[id]
	}
	b.Run("ordered", func(b *testing.B) {
		for b.Loop() {
			AssignOrdered(benchShards, ordered)
		}
	})
}

func BenchmarkAssignFull10k(b *testing.B) {
	ids := benchIDs(benchMembers)
	// skewed: the first tenth of the members hold everything.
	skewed, _ := Assign(benchShards, ids[:benchMembers/10], nil)
	b.Run("empty", func(b *testing.B) { benchBoth(b, ids, nil) })
	b.Run("skewed", func(b *testing.B) { benchBoth(b, ids, skewed) })
}

func BenchmarkAssignJoin10k(b *testing.B) {
	ids := benchIDs(benchMembers + 1)
	prev, _ := Assign(benchShards, ids[:benchMembers], nil)
	benchBoth(b, ids, prev)
}

func BenchmarkAssignLeave10k(b *testing.B) {
	ids := benchIDs(benchMembers)
	prev, _ := Assign(benchShards, ids, nil)
	benchBoth(b, slices.Delete(slices.Clone(ids), benchMembers/2, benchMembers/2+1), prev)
}
