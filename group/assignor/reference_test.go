package assignor

import (
	"slices"
	"sort"
)

// normalized is prev after rule 1: owner[s] is the index (into ids) of the
// live member that claims shard s, or -1.
type normalized struct {
	ids   []string
	owner []int
}

// normalize applies rule 1 the obvious way: members in id order, each
// claiming its in-range shards that nobody claimed before.
func normalize(shardCount int, live []string, prev map[string][]int) normalized {
	ids := slices.Clone(live)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	owner := make([]int, max(shardCount, 0))
	for s := range owner {
		owner[s] = -1
	}
	for m, id := range ids {
		for _, s := range prev[id] {
			if s >= 0 && s < len(owner) && owner[s] == -1 {
				owner[s] = m
			}
		}
	}
	return normalized{ids: ids, owner: owner}
}

// claimedCounts returns how many shards each member claims.
func (n normalized) claimedCounts() []int {
	claimed := make([]int, len(n.ids))
	for _, m := range n.owner {
		if m >= 0 {
			claimed[m]++
		}
	}
	return claimed
}

// referenceAssign is the naive, obviously-correct statement of the package
// rules: normalize, rank members by claimed count to hand out the larger
// quotas, keep the lowest shards up to the quota, then give every free shard
// (ascending) to the least loaded member below quota by a linear scan.
func referenceAssign(shardCount int, live []string, prev map[string][]int) map[string][]int {
	n := normalize(shardCount, live, prev)
	next := map[string][]int{}
	if len(n.ids) == 0 {
		return next
	}
	owner := slices.Clone(n.owner)
	claimed := n.claimedCounts()

	rank := make([]int, len(n.ids))
	for m := range rank {
		rank[m] = m
	}
	sort.SliceStable(rank, func(a, b int) bool { return claimed[rank[a]] > claimed[rank[b]] })
	quota := make([]int, len(n.ids))
	for r, m := range rank {
		quota[m] = len(owner) / len(n.ids)
		if r < len(owner)%len(n.ids) {
			quota[m]++
		}
	}

	size := make([]int, len(n.ids))
	for s, m := range owner {
		if m < 0 {
			continue
		}
		if size[m] < quota[m] {
			size[m]++
		} else {
			owner[s] = -1
		}
	}
	for s, m := range owner {
		if m >= 0 {
			continue
		}
		best := -1
		for c := range n.ids {
			if size[c] < quota[c] && (best < 0 || size[c] < size[best]) {
				best = c
			}
		}
		owner[s] = best
		size[best]++
	}

	for _, id := range n.ids {
		next[id] = nil
	}
	for s, m := range owner {
		next[n.ids[m]] = append(next[n.ids[m]], s)
	}
	return next
}

// minimumMoves is the fewest shards any balanced assignment must move away
// from their normalized owner (an unowned shard always counts): member m can
// retain at most min(claimed, quota) shards, exactly extra members get
// floor+1, and that helps only members claiming more than floor.
func minimumMoves(shardCount int, live []string, prev map[string][]int) int {
	n := normalize(shardCount, live, prev)
	if len(n.ids) == 0 {
		return 0
	}
	floor, extra := len(n.owner)/len(n.ids), len(n.owner)%len(n.ids)
	retained, over := 0, 0
	for _, k := range n.claimedCounts() {
		retained += min(k, floor)
		if k > floor {
			over++
		}
	}
	return len(n.owner) - retained - min(extra, over)
}

// moves counts shards whose owner in next differs from their normalized
// previous owner; unowned shards always count. Without live members nothing
// is assigned and nothing moves.
func moves(shardCount int, live []string, prev, next map[string][]int) int {
	n := normalize(shardCount, live, prev)
	if len(n.ids) == 0 {
		return 0
	}
	moved := 0
	for s, m := range n.owner {
		if m < 0 || !slices.Contains(next[n.ids[m]], s) {
			moved++
		}
	}
	return moved
}
