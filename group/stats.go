package group

import "github.com/redis-stream-coordinator/coordinator/contract"

// Stats are the counts behind a group's gauges. Violations and
// DuplicateOwners equal what Violations reports, counted without listing
// them.
type Stats struct {
	GroupEpoch, AssignmentEpoch int64
	// MigrationSince is when the active migration was created; 0 when none.
	MigrationSince contract.Instant
	// Members counts every member record, Live the ACTIVE or STARTING ones,
	// Expired the EXPIRED ones.
	Members, Live, Expired int
	// RevokePending counts the shards in owners' revoking sets
	// (Member.Holds), TargetShards those in the target assignment,
	// CurrentShards those in live members' current sets.
	RevokePending, TargetShards, CurrentShards int
	// Violations counts the invariant violations, DuplicateOwners those of
	// kind DuplicateCurrentOwners.
	Violations, DuplicateOwners int
	// Paused counts the shards granted to nobody (Group.Paused).
	Paused int
}

// Stats returns g's stats. The first call counts them in one pass over the
// members and targets and keeps the counts in g's index; from then on Apply
// keeps them up to date (nothing for a lease renewal, the shards named for
// any other record), so the owner of a group that asks after every commit
// never scans again. Since it writes to g, only g's owner may call it.
// Clone does not copy the counts.
func (g *Group) Stats() Stats {
	if g.idx.stats == nil {
		g.idx.stats = newStatsIndex(g)
	}
	t := g.idx.stats
	s := Stats{
		GroupEpoch: g.GroupEpoch, AssignmentEpoch: g.AssignmentEpoch,
		Members: len(g.Members), Live: len(g.idx.liveIDs), Expired: t.expired,
		RevokePending: t.revoking, TargetShards: t.targets, CurrentShards: t.current,
		DuplicateOwners: t.dupCurrent,
	}
	if id := g.ActiveReshardingID; id != nil {
		s.MigrationSince = g.Migrations[*id].CreatedAt
	}
	s.Violations = t.unknownTargets + t.dupTarget + t.dupCurrent
	paused := g.Paused()
	s.Paused = len(paused)
	if t.active > 0 {
		s.Violations += t.shardCount - t.targeted - t.untargeted(paused)
	}
	if g.State != GroupEmpty && g.AssignmentEpoch != g.GroupEpoch {
		s.Violations++
	}
	return s
}

// statsIndex is the part of the index behind Stats.
type statsIndex struct {
	expired, active            int // active: State ACTIVE (NO_TARGET_OWNER needs one)
	revoking, current, targets int
	unknownTargets             int // target entries whose member has no record

	shardCount int
	// targetOwners[s] counts the target sets holding s; targeted and
	// dupTarget count the shards below shardCount held by at least one
	// and by more than one.
	targetOwners        shardTable[int]
	targeted, dupTarget int
	// currentOwners[s] counts the owners whose current set holds s;
	// dupCurrent the shards held by more than one.
	currentOwners shardTable[int]
	dupCurrent    int
}

// untargeted counts the shards of set in no target set (paused shards
// have no target owner by design).
func (t *statsIndex) untargeted(set contract.ShardSet) int {
	n := 0
	for _, s := range set {
		if t.targetOwners.get(s) == 0 {
			n++
		}
	}
	return n
}

// newStatsIndex counts g from scratch.
func newStatsIndex(g *Group) *statsIndex {
	t := &statsIndex{shardCount: g.ShardCount}
	for id, shards := range g.Targets {
		t.target(shards, 1)
		if g.Members[id] == nil {
			t.unknownTargets++
		}
	}
	for _, m := range g.Members {
		t.member(m, 1)
	}
	return t
}

// member adds (sign 1) or removes (sign -1) m's counts.
func (t *statsIndex) member(m *Member, sign int) {
	switch m.State {
	case MemberExpired:
		t.expired += sign
	case MemberActive:
		t.active += sign
	}
	if m.State.Live() {
		t.current += sign * len(m.CurrentAssignment)
	}
	if !m.Holds() {
		return
	}
	t.revoking += sign * len(m.Revoking)
	for _, s := range m.CurrentAssignment {
		n := t.currentOwners.get(s)
		t.currentOwners.set(s, n+sign)
		switch {
		case sign > 0 && n == 1, sign < 0 && n == 2:
			t.dupCurrent += sign
		}
	}
}

// target adds (sign 1) or removes (sign -1) one target set.
func (t *statsIndex) target(shards contract.ShardSet, sign int) {
	t.targets += sign * len(shards)
	for _, s := range shards {
		n := t.targetOwners.get(s)
		t.targetOwners.set(s, n+sign)
		if s < 0 || s >= t.shardCount {
			continue
		}
		switch {
		case sign > 0 && n == 0, sign < 0 && n == 1:
			t.targeted += sign
		case sign > 0 && n == 1, sign < 0 && n == 2:
			t.dupTarget += sign
		}
	}
}

// rebound recounts the target owners below a new shard count.
func (t *statsIndex) rebound(shardCount int) {
	if shardCount == t.shardCount {
		return
	}
	t.shardCount, t.targeted, t.dupTarget = shardCount, 0, 0
	for s, n := range t.targetOwners.all() {
		if s >= 0 && s < shardCount {
			t.targeted++
			if n > 1 {
				t.dupTarget++
			}
		}
	}
}
