package group

import "slices"

// Group is one consumer group's state: the aggregate of §8.5 plus derived
// indexes that keep the heartbeat path independent of the member count.
//
// A Group is not safe for concurrent use; the group actor owns it.
type Group struct {
	Meta
	Members map[string]*Member  // every member record, live or not
	Targets map[string]ShardSet // target assignment of the live members

	idx index // derived from Members and Targets by Apply; never persisted
}

// index holds state derived from the records.
type index struct {
	// liveIDs lists the ACTIVE/STARTING members, sorted.
	liveIDs []string
	// holders[s] lists the owners (Member.Holds) whose current ∪ revoking holds s.
	holders map[int][]string
	// targetOwner[s] is the member whose target holds s (targets are disjoint).
	targetOwner map[int]string
	// mismatched counts live members whose current set differs from their target.
	mismatched int
	// foreign counts (owner, shard) pairs where the shard is in another
	// member's target: each such pair blocks that member.
	foreign int
	// nextScanAt is a lower bound of the earliest lease expiry or prune time;
	// nextDeadlineAt of the earliest rebalance deadline. Zero means unknown:
	// the next handler scans all members and recomputes it.
	nextScanAt, nextDeadlineAt Instant
}

// New returns an empty, not yet created group. Apply a MetaRecord to create it.
func New() *Group {
	return &Group{
		Members: map[string]*Member{},
		Targets: map[string]ShardSet{},
		idx:     index{holders: map[int][]string{}, targetOwner: map[int]string{}},
	}
}

// Exists reports whether the group has been created and not deleted.
func (g *Group) Exists() bool { return g != nil && g.StreamPrefix != "" }

// Clone returns an independent copy. Member records, like every other
// value a record carries (ShardSets, Meta maps and slices), are immutable
// and shared: Apply replaces a member, it never modifies one.
func (g *Group) Clone() *Group {
	c := New()
	c.Meta = g.Meta
	for id, m := range g.Members {
		c.Members[id] = m
	}
	for id, t := range g.Targets {
		c.Targets[id] = t
	}
	c.rebuildIndex()
	return c
}

// Apply applies one record. It is the only code that mutates a Group.
func (g *Group) Apply(r Record) {
	switch r := r.(type) {
	case MetaRecord:
		g.Meta = r.Meta
	case MemberRecord:
		m := r.Member
		old := g.Members[m.MemberID]
		g.Members[m.MemberID] = m
		if old != nil && sameIndexFields(old, m) {
			return // a lease renewal: nothing the index derives from changed
		}
		if old != nil {
			g.unindexMember(old)
		}
		g.indexMember(m)
	case MemberRemovedRecord:
		if old := g.Members[r.MemberID]; old != nil {
			g.unindexMember(old)
			delete(g.Members, r.MemberID)
		}
	case TargetRecord:
		g.setTarget(r.MemberID, r.Shards, true)
	case TargetRemovedRecord:
		g.setTarget(r.MemberID, nil, false)
	case DeletedRecord:
		*g = *New()
	default:
		panic("group: unknown record type")
	}
}

// sameIndexFields reports whether two values of one member agree on every
// field the index derives from: state and holdings.
func sameIndexFields(a, b *Member) bool {
	return a.State == b.State && a.CurrentAssignment.Equal(b.CurrentAssignment) &&
		a.Revoking.Equal(b.Revoking) && a.GrantedAssignment.Equal(b.GrantedAssignment)
}

// setTarget replaces one target entry and keeps the index in step.
func (g *Group) setTarget(id string, shards ShardSet, keep bool) {
	m := g.Members[id]
	live := m != nil && m.State.Live()
	if live && !m.CurrentAssignment.Equal(g.Targets[id]) {
		g.idx.mismatched--
	}
	for _, s := range g.Targets[id] {
		if g.idx.targetOwner[s] == id {
			g.retargetShard(s, "")
		}
	}
	if keep {
		g.Targets[id] = shards
		for _, s := range shards {
			g.retargetShard(s, id)
		}
	} else {
		delete(g.Targets, id)
	}
	if live && !m.CurrentAssignment.Equal(g.Targets[id]) {
		g.idx.mismatched++
	}
}

// retargetShard moves shard s to a new target owner ("" for none), keeping
// the count of foreign holdings in step.
func (g *Group) retargetShard(s int, owner string) {
	g.idx.foreign -= g.foreignHolders(s)
	if owner == "" {
		delete(g.idx.targetOwner, s)
	} else {
		g.idx.targetOwner[s] = owner
	}
	g.idx.foreign += g.foreignHolders(s)
}

// foreignHolders counts owners of s other than its target owner.
func (g *Group) foreignHolders(s int) int {
	owner, ok := g.idx.targetOwner[s]
	if !ok {
		return 0
	}
	n := 0
	for _, h := range g.idx.holders[s] {
		if h != owner {
			n++
		}
	}
	return n
}

func (g *Group) indexMember(m *Member) {
	if m.State.Live() {
		i, _ := slices.BinarySearch(g.idx.liveIDs, m.MemberID)
		g.idx.liveIDs = slices.Insert(g.idx.liveIDs, i, m.MemberID)
		if !m.CurrentAssignment.Equal(g.Targets[m.MemberID]) {
			g.idx.mismatched++
		}
	}
	if !m.Holds() {
		return
	}
	for _, s := range m.Holding() {
		g.idx.holders[s] = append(g.idx.holders[s], m.MemberID)
		if owner, ok := g.idx.targetOwner[s]; ok && owner != m.MemberID {
			g.idx.foreign++
		}
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
	if !m.Holds() {
		return
	}
	for _, s := range m.Holding() {
		hs := g.idx.holders[s]
		if i := slices.Index(hs, m.MemberID); i >= 0 {
			hs = slices.Delete(hs, i, i+1)
		}
		if len(hs) == 0 {
			delete(g.idx.holders, s)
		} else {
			g.idx.holders[s] = hs
		}
		if owner, ok := g.idx.targetOwner[s]; ok && owner != m.MemberID {
			g.idx.foreign--
		}
	}
}

// rebuildIndex recomputes the derived index from scratch.
func (g *Group) rebuildIndex() {
	g.idx = index{holders: map[int][]string{}, targetOwner: map[int]string{}}
	for id, t := range g.Targets {
		for _, s := range t {
			g.idx.targetOwner[s] = id
		}
	}
	for _, m := range g.Members {
		g.indexMember(m)
	}
}

// blocked returns the shards of set held by an owner other than id.
func (g *Group) blocked(id string, set ShardSet) ShardSet {
	var out ShardSet
	for _, s := range set {
		for _, h := range g.idx.holders[s] {
			if h != id {
				out = append(out, s)
				break
			}
		}
	}
	return out
}

// LiveMemberIDs returns the ACTIVE/STARTING member ids, sorted. The slice
// must not be modified.
func (g *Group) LiveMemberIDs() []string { return g.idx.liveIDs }
