package group

import (
	"maps"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// TestHolderTableMatchesMap checks holderTable and shardTable against a
// map model, over dense, sparse and negative shard indexes: others after
// every step, anyFrom at the end.
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
		}
		// anyFrom scans the dense slice (denseShards entries once the
		// boundary shard is set): checked once per run, on the final state.
		for _, n := range []int{-5, 0, 3, 8, denseShards, denseShards + 6} {
			want := false
			for s, ids := range model {
				want = want || (s >= n && len(ids) > 0)
			}
			if got := h.anyFrom(n); got != want {
				t.Fatalf("anyFrom(%d) = %v, model %v", n, got, model)
			}
		}
	})
}

// TestShardTableMatchesMap checks a shardTable of counts against a map
// model: get after every step, all and anyFrom at the end, over dense,
// sparse and negative indexes.
func TestShardTableMatchesMap(t *testing.T) {
	shards := []int{0, 1, 2, 7, denseShards - 1, denseShards, denseShards + 5, -1, -3}
	rapid.Check(t, func(t *rapid.T) {
		var table shardTable[int]
		model := map[int]int{}
		for range rapid.IntRange(0, 60).Draw(t, "steps") {
			s, d := rapid.SampledFrom(shards).Draw(t, "shard"), rapid.SampledFrom([]int{1, -1}).Draw(t, "delta")
			table.set(s, table.get(s)+d)
			if model[s] += d; model[s] == 0 {
				delete(model, s)
			}
			for _, s := range append(shards, 3, 1<<40) {
				if table.get(s) != model[s] {
					t.Fatalf("get(%d) = %d, model %v", s, table.get(s), model)
				}
			}
		}
		// all and anyFrom scan the dense slice (denseShards entries once
		// the boundary shard is set): checked once per run, on the final
		// state.
		got := map[int]int{}
		for s, n := range table.all() {
			got[s] = n
		}
		if !maps.Equal(got, model) {
			t.Fatalf("all() = %v, model %v", got, model)
		}
		for _, n := range []int{-5, 0, 3, 8, denseShards, denseShards + 6} {
			want := false
			for s := range model {
				want = want || s >= n
			}
			if got := table.anyFrom(n); got != want {
				t.Fatalf("anyFrom(%d) = %v, model %v", n, got, model)
			}
		}
	})
}
