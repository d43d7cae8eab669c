package group

import "slices"

// Group is one consumer group's state: the aggregate of §8.5 plus derived
// indexes that make the heartbeat path independent of the member count.
//
// A Group is not safe for concurrent use; the group actor owns it.
type Group struct {
	Meta
	Members map[string]*Member  // every member record, live or not
	Targets map[string]ShardSet // target assignment of the live members

	idx index // derived from Members and Targets; rebuilt by Apply
}

// index holds state derived from the records. It is never persisted.
type index struct {
	// holders[s] lists the live members whose current ∪ revoking holds s.
	holders map[int][]string
	// targetOwner[s] is the member whose target holds s (targets are disjoint).
	targetOwner map[int]string
	// mismatched counts live members whose current set differs from their target.
	mismatched int
	// foreign counts (live holder, shard) pairs where the shard is in another
	// member's target: each such pair blocks that member.
	foreign int
	// live counts ACTIVE/STARTING members.
	live int
	// nextCheckAt is a lower bound of the earliest lease expiry, rebalance
	// deadline or prune time; maintenance scans run only once it has passed.
	nextCheckAt Instant
}

// Exists reports whether the group has been created and not deleted.
func (g *Group) Exists() bool { return g != nil && g.StreamPrefix != "" }

// New returns an empty, not yet created group. Apply a MetaRecord to create it.
func New() *Group {
	return &Group{
		Members: map[string]*Member{},
		Targets: map[string]ShardSet{},
		idx:     index{holders: map[int][]string{}, targetOwner: map[int]string{}},
	}
}

// Clone returns a deep-enough copy: member structs are copied, immutable
// values (ShardSets, Meta maps) are shared.
func (g *Group) Clone() *Group {
	c := New()
	c.Meta = g.Meta
	for id, m := range g.Members {
		cp := *m
		c.Members[id] = &cp
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
		if old := g.Members[m.MemberID]; old != nil {
			g.unindexMember(old)
		}
		g.Members[m.MemberID] = &m
		g.indexMember(&m)
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

// setTarget replaces one target entry and keeps the index in step.
func (g *Group) setTarget(id string, shards ShardSet, keep bool) {
	m := g.Members[id]
	if m != nil {
		g.unindexMember(m)
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
	if m != nil {
		g.indexMember(m)
	}
}

// retargetShard moves shard s to a new target owner, updating the count of
// foreign holdings of s.
func (g *Group) retargetShard(s int, owner string) {
	before := g.foreignHolders(s)
	if owner == "" {
		delete(g.idx.targetOwner, s)
	} else {
		g.idx.targetOwner[s] = owner
	}
	g.idx.foreign += g.foreignHolders(s) - before
}

// foreignHolders counts live holders of s other than its target owner, when
// s has a target owner.
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
	g.noteDeadlines(m)
	if !m.State.Live() {
		return
	}
	g.idx.live++
	if !m.CurrentAssignment.Equal(g.Targets[m.MemberID]) {
		g.idx.mismatched++
	}
	for _, s := range m.Holding() {
		g.idx.holders[s] = append(g.idx.holders[s], m.MemberID)
		if owner, ok := g.idx.targetOwner[s]; ok && owner != m.MemberID {
			g.idx.foreign++
		}
	}
}

func (g *Group) unindexMember(m *Member) {
	if !m.State.Live() {
		return
	}
	g.idx.live--
	if !m.CurrentAssignment.Equal(g.Targets[m.MemberID]) {
		g.idx.mismatched--
	}
	for _, s := range m.Holding() {
		hs := g.idx.holders[s]
		if i := slices.Index(hs, m.MemberID); i >= 0 {
			hs = slices.Delete(slices.Clone(hs), i, i+1)
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

// noteDeadlines lowers nextCheckAt to the member's earliest time-driven event.
func (g *Group) noteDeadlines(m *Member) {
	for _, t := range []Instant{m.MemberLeaseExpiresAt, m.RebalanceDeadlineAt} {
		if t != 0 && (g.idx.nextCheckAt == 0 || t < g.idx.nextCheckAt) {
			g.idx.nextCheckAt = t
		}
	}
	if !m.State.Live() && m.LastHeartbeatAt != 0 && g.idx.nextCheckAt == 0 {
		// Prune times depend on the retention setting; a dead record makes
		// every scan due until it is pruned (§4.6).
		g.idx.nextCheckAt = m.LastHeartbeatAt
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
