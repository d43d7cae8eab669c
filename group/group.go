package group

import (
	"maps"
	"slices"

	"github.com/redis-stream-coordinator/coordinator/contract"
)

// Group is one consumer group's state: the aggregate of docs/protocol.md §8.5 plus derived
// indexes that keep the heartbeat path independent of the member count.
//
// A Group is not safe for concurrent use; the group actor owns it.
type Group struct {
	Meta
	Members map[string]*Member           // every member record, live or not
	Targets map[string]contract.ShardSet // target assignment of the live members

	idx index // derived from Members and Targets by Apply; never persisted
}

// index holds state derived from the records.
type index struct {
	// liveIDs lists the ACTIVE/STARTING members, sorted.
	liveIDs []string
	// mismatched counts live members whose current set differs from their target.
	mismatched int
	// shards is the per-shard part, which only handlers read: nil until
	// one runs (Group.shardIndex builds it), so a copy that is only read
	// and applied to, like the actor's committed one, never holds it.
	shards *shardIndex
	// nextScanAt is a lower bound of the earliest lease expiry or prune time;
	// nextDeadlineAt of the earliest rebalance deadline. Zero means unknown:
	// the next handler scans all members and recomputes it. Apply keeps
	// both: each member record lowers them (bound), a scan's result sets
	// them (scanned, deadlinesScanned).
	nextScanAt, nextDeadlineAt contract.Instant
	// stats are the counts behind Stats: nil until it is first called.
	stats *statsIndex
}

// shardIndex is the per-shard part of the index.
type shardIndex struct {
	// holders lists, for each shard s, the owners (Member.Holds) whose
	// Holding contains s.
	holders holderTable
	// targetOwner maps each shard to the member whose target holds it
	// (targets are disjoint).
	targetOwner shardTable[string]
	// foreign counts (owner, shard) pairs where the shard is in another
	// member's target: each such pair blocks that member.
	foreign int
}

// New returns an empty, not yet created group. Apply a MetaRecord to create it.
func New() *Group {
	return &Group{
		Members: map[string]*Member{},
		Targets: map[string]contract.ShardSet{},
	}
}

// Exists reports whether the group has been created and not deleted.
func (g *Group) Exists() bool { return g != nil && g.StreamPrefix != "" }

// Clone returns an independent copy. Member records, like every other
// value a record carries (ShardSets, Meta maps and slices), are immutable
// and shared: Apply replaces a member, it never modifies one. The index is
// copied, except its per-shard part, which the copy builds when a handler
// first runs on it, and the counts behind Stats.
func (g *Group) Clone() *Group {
	return &Group{
		Meta:    g.Meta,
		Members: maps.Clone(g.Members),
		Targets: maps.Clone(g.Targets),
		idx: index{
			liveIDs:        slices.Clone(g.idx.liveIDs),
			mismatched:     g.idx.mismatched,
			nextScanAt:     g.idx.nextScanAt,
			nextDeadlineAt: g.idx.nextDeadlineAt,
		},
	}
}

// shardIndex returns the per-shard index, building it on first use. Only
// handlers call it: a Group that is only read never writes to itself.
func (g *Group) shardIndex() *shardIndex {
	if g.idx.shards == nil {
		x := &shardIndex{}
		for id, t := range g.Targets {
			for _, s := range t {
				x.targetOwner.set(s, id)
			}
		}
		for _, m := range g.Members {
			x.addMember(m)
		}
		g.idx.shards = x
	}
	return g.idx.shards
}

// Apply applies one record. It is the only code that changes a Group: the
// parts of the index built on first use (shardIndex, Stats) are derived
// from what Apply keeps and change nothing a reader can tell.
func (g *Group) Apply(r Record) {
	switch r := r.(type) {
	case MetaRecord:
		g.Meta = r.Meta
		if t := g.idx.stats; t != nil {
			t.rebound(g.ShardCount)
		}
	case MemberRecord:
		m := r.Member
		g.bound(m)
		old := g.Members[m.MemberID]
		g.Members[m.MemberID] = m
		if old != nil && sameIndexFields(old, m) {
			return // a lease renewal: nothing the index derives from changed
		}
		if old != nil {
			g.unindexMember(old)
		} else {
			g.countUnknownTarget(m.MemberID, -1)
		}
		g.indexMember(m)
	case MemberRemovedRecord:
		if old := g.Members[r.MemberID]; old != nil {
			g.unindexMember(old)
			delete(g.Members, r.MemberID)
			g.countUnknownTarget(r.MemberID, 1)
		}
	case TargetRecord:
		g.setTarget(r.MemberID, r.Shards, true)
	case TargetRemovedRecord:
		g.setTarget(r.MemberID, nil, false)
	case DeletedRecord:
		*g = *New()
	case scanned:
		g.idx.nextScanAt = r.next
	case deadlinesScanned:
		g.idx.nextDeadlineAt = r.next
	default:
		panic("group: unknown record type")
	}
}

// bound lowers the scan bounds to the time-driven events of m, so that none
// is missed: its lease end while it is live or holds shards as a fenced
// member, its last heartbeat (no later than the end of its retention) while
// it may be pruned, its rebalance deadline.
func (g *Group) bound(m *Member) {
	switch {
	case m.State.Live() || (m.State == MemberFenced && m.Holds()):
		lowerBound(&g.idx.nextScanAt, m.LeaseEnd())
	case prunable(m):
		lowerBound(&g.idx.nextScanAt, m.LastHeartbeatAt)
	}
	lowerBound(&g.idx.nextDeadlineAt, m.RebalanceDeadlineAt)
}

// lowerBound lowers *b to at, treating zero as "unknown" on both sides.
func lowerBound(b *contract.Instant, at contract.Instant) {
	if at != 0 && *b != 0 && at < *b {
		*b = at
	}
}

// sameIndexFields reports whether two values of one member agree on every
// field the index derives from: state and holdings.
func sameIndexFields(a, b *Member) bool {
	return a.State == b.State && a.CurrentAssignment.Equal(b.CurrentAssignment) &&
		a.Revoking.Equal(b.Revoking) && a.GrantedAssignment.Equal(b.GrantedAssignment)
}

// countUnknownTarget adds delta to the stats' count of target entries
// without a member record when id has a target entry.
func (g *Group) countUnknownTarget(id string, delta int) {
	if _, ok := g.Targets[id]; ok && g.idx.stats != nil {
		g.idx.stats.unknownTargets += delta
	}
}

// setTarget replaces one target entry and keeps the index in step.
func (g *Group) setTarget(id string, shards contract.ShardSet, keep bool) {
	m := g.Members[id]
	live := m != nil && m.State.Live()
	if live && !m.CurrentAssignment.Equal(g.Targets[id]) {
		g.idx.mismatched--
	}
	if t := g.idx.stats; t != nil {
		t.target(g.Targets[id], -1)
		if keep {
			t.target(shards, 1)
		}
	}
	if m == nil {
		g.countUnknownTarget(id, -1)
	}
	if x := g.idx.shards; x != nil {
		for _, s := range g.Targets[id] {
			if x.targetOwner.get(s) == id {
				x.retarget(s, "")
			}
		}
		for _, s := range shards {
			x.retarget(s, id)
		}
	}
	if keep {
		g.Targets[id] = shards
	} else {
		delete(g.Targets, id)
	}
	if m == nil {
		g.countUnknownTarget(id, 1)
	}
	if live && !m.CurrentAssignment.Equal(g.Targets[id]) {
		g.idx.mismatched++
	}
}

// retarget moves shard s to a new target owner ("" for none), keeping the
// count of foreign holdings in step.
func (x *shardIndex) retarget(s int, owner string) {
	x.foreign -= x.foreignHolders(s)
	x.targetOwner.set(s, owner)
	x.foreign += x.foreignHolders(s)
}

// foreignHolders counts owners of s other than its target owner.
func (x *shardIndex) foreignHolders(s int) int {
	owner := x.targetOwner.get(s)
	if owner == "" {
		return 0
	}
	return x.holders.others(s, owner)
}

// addMember indexes what m holds.
func (x *shardIndex) addMember(m *Member) {
	if !m.Holds() {
		return
	}
	for _, s := range m.Holding() {
		x.holders.add(s, m.MemberID)
		if owner := x.targetOwner.get(s); owner != "" && owner != m.MemberID {
			x.foreign++
		}
	}
}

// removeMember drops what m holds from the index.
func (x *shardIndex) removeMember(m *Member) {
	if !m.Holds() {
		return
	}
	for _, s := range m.Holding() {
		x.holders.remove(s, m.MemberID)
		if owner := x.targetOwner.get(s); owner != "" && owner != m.MemberID {
			x.foreign--
		}
	}
}

func (g *Group) indexMember(m *Member) {
	if m.State.Live() {
		i, _ := slices.BinarySearch(g.idx.liveIDs, m.MemberID)
		g.idx.liveIDs = slices.Insert(g.idx.liveIDs, i, m.MemberID)
		if !m.CurrentAssignment.Equal(g.Targets[m.MemberID]) {
			g.idx.mismatched++
		}
	}
	if x := g.idx.shards; x != nil {
		x.addMember(m)
	}
	if t := g.idx.stats; t != nil {
		t.member(m, 1)
	}
}

func (g *Group) unindexMember(m *Member) {
	if m.State.Live() {
		if i, ok := slices.BinarySearch(g.idx.liveIDs, m.MemberID); ok {
			g.idx.liveIDs = slices.Delete(g.idx.liveIDs, i, i+1)
		}
		if !m.CurrentAssignment.Equal(g.Targets[m.MemberID]) {
			g.idx.mismatched--
		}
	}
	if x := g.idx.shards; x != nil {
		x.removeMember(m)
	}
	if t := g.idx.stats; t != nil {
		t.member(m, -1)
	}
}

// rebuildIndex recomputes the derived index from scratch (the differential
// tests compare it with the one Apply maintains).
func (g *Group) rebuildIndex() {
	g.idx = index{}
	for _, m := range g.Members {
		g.indexMember(m)
	}
	g.shardIndex()
}

// blocked returns the shards of set held by an owner other than id.
func (g *Group) blocked(id string, set contract.ShardSet) contract.ShardSet {
	x := g.shardIndex()
	var out contract.ShardSet
	for _, s := range set {
		if x.holders.others(s, id) > 0 {
			out = append(out, s)
		}
	}
	return out
}

// LiveMemberIDs returns the ACTIVE/STARTING member ids, sorted. The slice
// must not be modified.
func (g *Group) LiveMemberIDs() []string { return g.idx.liveIDs }
