package group

import (
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// TestHolderTableMatchesMap checks holderTable and shardTable against a
// map model, over dense, sparse and negative shard indexes.
func TestHolderTableMatchesMap(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		shard := rapid.SampledFrom([]int{0, 1, 2, 7, denseShards - 1, denseShards, denseShards + 5, -1, -3})
		id := rapid.SampledFrom([]string{"a", "b", "c"})
		var h holderTable
		model := map[int][]string{}
		for range rapid.IntRange(0, 60).Draw(t, "steps") {
			s, m := shard.Draw(t, "shard"), id.Draw(t, "id")
			if rapid.Bool().Draw(t, "add") {
				h.add(s, m)
				model[s] = append(model[s], m)
			} else {
				h.remove(s, m)
				if i := slices.Index(model[s], m); i >= 0 {
					model[s] = slices.Delete(model[s], i, i+1)
				}
			}
			if rapid.Bool().Draw(t, "clone") {
				h = h.clone()
			}
			for _, s := range []int{0, 1, 2, 7, denseShards - 1, denseShards, denseShards + 5, -1, -3, 3, 1 << 40} {
				for _, other := range []string{"a", "b", "c", "z"} {
					want := 0
					for _, x := range model[s] {
						if x != other {
							want++
						}
					}
					if got := h.others(s, other); got != want {
						t.Fatalf("others(%d, %s) = %d, model %v", s, other, got, model[s])
					}
				}
			}
			for _, n := range []int{-5, 0, 3, 8, denseShards, denseShards + 6} {
				want := false
				for s, ids := range model {
					want = want || (s >= n && len(ids) > 0)
				}
				if got := h.anyFrom(n); got != want {
					t.Fatalf("anyFrom(%d) = %v, model %v", n, got, model)
				}
			}
		}
	})
}

// TestShardTableCloneIsIndependent checks that writes to a clone do not
// reach the original.
func TestShardTableCloneIsIndependent(t *testing.T) {
	var a shardTable
	a.set(3, "x")
	a.set(denseShards+1, "y")
	b := a.clone()
	b.set(3, "z")
	b.set(denseShards+1, "")
	if a.get(3) != "x" || a.get(denseShards+1) != "y" || b.get(3) != "z" || b.get(denseShards+1) != "" {
		t.Fatalf("clone shares state: a %v %v, b %v %v", a.get(3), a.get(denseShards+1), b.get(3), b.get(denseShards+1))
	}
}
