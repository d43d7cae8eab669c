package assignor

import (
	"math/bits"
	"slices"
)

// Assign returns the target assignment of shards 0..shardCount-1 over the
// live members, computed from the previous target prev by the rules in the
// package documentation, and the live ids (ascending) whose set differs from
// prev[id], an absent entry counting as the empty set.
//
// Contract:
//   - next has one entry per distinct live id (empty sets included) and is
//     empty when live is; each set is sorted ascending;
//   - with at least one live member, every shard 0..shardCount-1 is in
//     exactly one set, and set sizes differ by at most one;
//   - the number of moved shards is the minimum over balanced assignments;
//   - live may be in any order and contain duplicates; passing it sorted
//     ascending without duplicates skips an O(N log N) sort;
//   - prev may be any map: entries of members that are not live, shards
//     outside [0, shardCount), duplicates, unsorted sets and shards listed by
//     several members are normalized as documented;
//   - a shardCount below zero is treated as zero;
//   - inputs are never modified. Returned sets may share storage with prev's
//     slices (an unchanged member gets its prev slice back), so all sets are
//     immutable for caller and callee alike.
//
// Cost: O(N + S) time and memory, plus O(N log N) when live is unsorted. A
// caller that keeps its live members in id order can save the map lookups
// and the map construction with AssignOrdered.
func Assign(shardCount int, live []string, prev map[string][]int) (next map[string][]int, changed []string) {
	ids := distinctSorted(live)
	old := make([][]int, len(ids))
	for i, id := range ids {
		old[i] = prev[id]
	}
	changedAt, sets := AssignOrdered(shardCount, old)
	next = make(map[string][]int, len(ids))
	if len(changedAt) > 0 {
		changed = make([]string, 0, len(changedAt))
	}
	for i, id := range ids {
		set := old[i]
		if j := len(changed); j < len(changedAt) && changedAt[j] == i {
			set = sets[j]
			changed = append(changed, id)
		}
		next[id] = set
	}
	return next, changed
}

// AssignOrdered is Assign for a caller that holds its live members sorted by
// ascending id without duplicates: prev[i] is the previous set of the i-th
// member (nil when it had none). It returns the ascending indexes i whose set
// changes and, aligned with them, their new sets; every other member keeps
// prev[i] unchanged.
//
// The result equals Assign's for the same members: ids are only needed to
// break ties, so only their order must be guaranteed by the caller (members
// in another order still get a balanced, fewest-moves result, with ties
// broken by position instead of id). The rest of Assign's contract applies
// (any prev content is normalized, inputs are never modified, sets are
// immutable). Cost: O(N + S) time with no map or
// string operation, and memory O(N + S/64) plus the changed sets, which makes
// it the entry point for frequent recomputations on large groups.
func AssignOrdered(shardCount int, prev [][]int) (changed []int, sets [][]int) {
	if len(prev) == 0 {
		return nil, nil
	}
	p := newPlan(max(shardCount, 0), prev)
	p.setQuotas()
	released := p.release()
	return p.collect(released, p.handOut())
}

// distinctSorted returns live sorted ascending without duplicates; live
// itself when it already is.
func distinctSorted(live []string) []string {
	for i := 1; i < len(live); i++ {
		if live[i] <= live[i-1] {
			ids := slices.Clone(live)
			slices.Sort(ids)
			return slices.Compact(ids)
		}
	}
	return live
}

// plan is the working state of one assignment; member i is the i-th live
// member in id order and prev[i] its previous set.
type plan struct {
	shardCount int
	prev       [][]int
	// held has bit s set while shard s is owned by some member.
	held []uint64
	// size[i] is the number of shards member i claimed, then kept.
	size  []int
	quota []int
	// normal holds the claimed shards of the members whose claim is not a
	// prefix of prev[i] (invalid previous sets only), sorted.
	normal map[int][]int
}

// newPlan normalizes prev (rule 1): every member claims its shards.
func newPlan(shardCount int, prev [][]int) *plan {
	p := &plan{
		shardCount: shardCount,
		prev:       prev,
		held:       make([]uint64, (shardCount+63)/64),
		size:       make([]int, len(prev)),
		quota:      make([]int, len(prev)),
	}
	for i := range prev {
		p.claim(i)
	}
	return p
}

// isNormal reports whether member i's claim differs from its previous set.
func (p *plan) isNormal(i int) bool {
	if p.normal == nil {
		return false
	}
	_, ok := p.normal[i]
	return ok
}

// kept returns member i's claimed shards, up to its current size.
func (p *plan) kept(i int) []int {
	set := p.prev[i]
	if p.isNormal(i) {
		set = p.normal[i]
	}
	return set[:p.size[i]:p.size[i]]
}

// claim marks as held the shards of prev[i] that are in range and not yet
// held. A valid previous set (ascending, in range, disjoint from the sets of
// smaller ids) is claimed whole and used in place; otherwise the claimed
// shards are recorded, sorted, in normal.
func (p *plan) claim(i int) {
	set, last := p.prev[i], -1
	for j, s := range set {
		if s <= last || s >= p.shardCount || p.isHeld(s) {
			p.claimFrom(i, j)
			return
		}
		p.hold(s)
		last = s
	}
	p.size[i] = len(set)
}

// claimFrom finishes claim(i) when entry j of prev[i] is the first one that
// is out of order, out of range or held.
func (p *plan) claimFrom(i, j int) {
	set := p.prev[i]
	out := slices.Clone(set[:j])
	for _, s := range set[j:] {
		if s >= 0 && s < p.shardCount && !p.isHeld(s) {
			p.hold(s)
			out = append(out, s)
		}
	}
	slices.Sort(out)
	if p.normal == nil {
		p.normal = map[int][]int{}
	}
	p.normal[i] = out
	p.size[i] = len(out)
}

func (p *plan) isHeld(s int) bool { return p.held[s>>6]&(1<<(s&63)) != 0 }
func (p *plan) hold(s int)        { p.held[s>>6] |= 1 << (s & 63) }
func (p *plan) unhold(s int)      { p.held[s>>6] &^= 1 << (s & 63) }

// setQuotas applies rule 2: the extra members with the most claimed shards
// (ties: smallest id) get floor+1, the others floor.
func (p *plan) setQuotas() {
	floor, extra := p.shardCount/len(p.size), p.shardCount%len(p.size)
	count := make([]int, slices.Max(p.size)+1)
	for _, k := range p.size {
		count[k]++
	}
	// Members claiming more than cut shards all get floor+1; so do the first
	// ties members (by id) claiming exactly cut.
	cut, above := len(count)-1, 0
	for extra > 0 && above+count[cut] < extra {
		above += count[cut]
		cut--
	}
	ties := extra - above
	for i, k := range p.size {
		p.quota[i] = floor
		if k > cut || k == cut && ties > 0 {
			p.quota[i]++
			if k == cut {
				ties--
			}
		}
	}
}

// release applies rule 3: members above quota give up their highest
// shards. It returns how many members did.
func (p *plan) release() (members int) {
	for i, k := range p.size {
		if q := p.quota[i]; k > q {
			for _, s := range p.kept(i)[q:] {
				p.unhold(s)
			}
			p.size[i] = q
			members++
		}
	}
	return members
}

// freeShards yields the shards that are not held, ascending. The caller
// draws exactly as many as there are in [0, shardCount), so the unused bits
// past shardCount in the last word are never reached.
type freeShards struct {
	held []uint64
	w    int
	word uint64 // free bits of held[w] not yet yielded
}

func (f *freeShards) next() int {
	for f.word == 0 {
		f.w++
		f.word = ^f.held[f.w]
	}
	s := f.w*64 + bits.TrailingZeros64(f.word)
	f.word &= f.word - 1
	return s
}

// grants are the new sets of the receivers, the members below quota after
// release: receiver r is member of[r] (ascending), and its set is
// backing[end[r]-quota, end[r]).
type grants struct {
	of, end []int
	backing []int
}

// handOut applies rule 4.
//
// It walks the sizes upwards ("water filling"): at size level L the members
// below quota holding exactly L shards form the active list, in id order;
// each receives the next lowest free shard in turn, then members that
// reached their quota leave the list and members holding L+1 shards join it.
// This hands out shards exactly as "lowest shard to the member with the
// fewest shards, ties to the smallest id" in time linear in the number of
// shards handed out.
//
// Received shards arrive ascending at the tail of each receiver's region,
// after room for its kept shards, which are merged in at the end.
func (p *plan) handOut() grants {
	n, total := 0, 0 // receivers, shards to hand out
	for i, k := range p.size {
		if k < p.quota[i] {
			n++
			total += p.quota[i] - k
		}
	}
	g := grants{of: make([]int, 0, n), end: make([]int, 0, n)}
	start := make([]int, p.shardCount/len(p.size)+2) // receivers by kept size, then offsets
	regions := 0
	for i, k := range p.size {
		if k < p.quota[i] {
			g.of = append(g.of, i)
			g.end = append(g.end, regions+k)
			regions += p.quota[i]
			start[k+1]++
		}
	}
	for l := 1; l < len(start); l++ {
		start[l] += start[l-1]
	}
	order := make([]int, n) // receivers by (kept size, id)
	pos := slices.Clone(start[:len(start)-1])
	for r, i := range g.of {
		order[pos[p.size[i]]] = r
		pos[p.size[i]]++
	}

	g.backing = make([]int, regions)
	active := make([]int, 0, n)
	merged := make([]int, 0, n)
	free := freeShards{held: p.held, w: -1}
	for level, handed := 0, 0; handed < total; level++ {
		merged = mergeAscending(merged[:0], active, order[start[level]:start[level+1]])
		active, merged = merged, active
		below := active[:0]
		for _, r := range active {
			g.backing[g.end[r]] = free.next()
			g.end[r]++
			handed++
			if level+1 < p.quota[g.of[r]] {
				below = append(below, r)
			}
		}
		active = below
	}

	for r, i := range g.of {
		region := g.backing[g.end[r]-p.quota[i] : g.end[r] : g.end[r]]
		mergeInto(region, p.kept(i))
	}
	return g
}

// collect returns the ascending indexes of the members whose final set
// differs from their previous one, and those sets; released is the number
// of members that gave up shards.
func (p *plan) collect(released int, g grants) (changed []int, sets [][]int) {
	// Only receivers, releasers and normalized members can change.
	changed = make([]int, 0, len(g.of)+released+len(p.normal))
	sets = make([][]int, 0, cap(changed))
	r := 0
	for i, k := range p.size {
		set, normal := []int(nil), p.isNormal(i)
		switch {
		case r < len(g.of) && g.of[r] == i:
			set = g.backing[g.end[r]-p.quota[i] : g.end[r] : g.end[r]]
			r++
		case !normal && k == len(p.prev[i]):
			continue // a valid previous set kept whole
		default:
			set = p.kept(i)
		}
		// A valid previous set cut to a prefix or extended always differs.
		if !normal || !slices.Equal(set, p.prev[i]) {
			changed = append(changed, i)
			sets = append(sets, set)
		}
	}
	return changed, sets
}

// mergeAscending appends the merge of two ascending lists to dst.
func mergeAscending(dst, a, b []int) []int {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		if a[i] < b[j] {
			dst = append(dst, a[i])
			i++
		} else {
			dst = append(dst, b[j])
			j++
		}
	}
	dst = append(dst, a[i:]...)
	return append(dst, b[j:]...)
}

// mergeInto merges kept into region, whose tail region[len(kept):] holds
// the received shards; both ascending. Writing front to back never
// overtakes the unread tail, and once kept is used up the rest of the tail
// is already in place.
func mergeInto(region, kept []int) {
	j := len(kept)
	for i, w := 0, 0; i < len(kept); w++ {
		if j < len(region) && region[j] < kept[i] {
			region[w] = region[j]
			j++
		} else {
			region[w] = kept[i]
			i++
		}
	}
}
