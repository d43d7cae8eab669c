package actors

import "github.com/redis-stream-coordinator/coordinator/group"

// GroupStats are the gauges of one committed group (Observer.GroupStats).
// Violations and DuplicateOwners equal what group.(*Group).Violations
// reports, counted without listing them.
type GroupStats struct {
	GroupEpoch, AssignmentEpoch int64
	// MigrationSince is when the active migration was created; 0 when none.
	MigrationSince group.Instant
	// Members counts every member record, Live the ACTIVE or STARTING ones,
	// Expired the EXPIRED ones.
	Members, Live, Expired int
	// RevokePending counts the shards in owners' revoking sets
	// (group.Member.Holds), TargetShards those in the target assignment,
	// CurrentShards those in live members' current sets.
	RevokePending, TargetShards, CurrentShards int
	// Violations counts the invariant violations, DuplicateOwners those of
	// kind group.DuplicateCurrentOwners.
	Violations, DuplicateOwners int
}

// StatsOf computes g's stats with one pass over its members and targets.
func StatsOf(g *group.Group) GroupStats {
	var t statsTracker
	t.reset(g)
	return t.stats(g)
}

// statsTracker keeps a group's stats up to date as records are applied to
// it: O(1) per lease renewal, O(shards named) for any other record, so
// that a commit costs no pass over the members. Its counts derive from
// the group it tracks; reset recomputes them.
type statsTracker struct {
	expired, active            int // active: State ACTIVE (NO_TARGET_OWNER needs one)
	revoking, current, targets int
	unknownTargets             int // target entries whose member has no record

	shardCount int
	// targetOwners[s] counts the target sets holding s; targeted and
	// dupTargets count the shards below shardCount held by at least one
	// and by more than one.
	targetOwners        map[int]int
	targeted, dupTarget int
	// currentOwners[s] counts the owners whose current set holds s;
	// dupCurrent the shards held by more than one.
	currentOwners map[int]int
	dupCurrent    int
}

// reset recomputes every count from g.
func (t *statsTracker) reset(g *group.Group) {
	*t = statsTracker{targetOwners: map[int]int{}, currentOwners: map[int]int{}, shardCount: g.ShardCount}
	for id, shards := range g.Targets {
		t.target(shards, 1)
		t.unknownTargets += t.unknown(g, id)
	}
	for _, m := range g.Members {
		t.member(m, 1)
	}
}

// apply applies r to g (which t tracks) and updates the counts.
func (t *statsTracker) apply(g *group.Group, r group.Record) {
	switch r := r.(type) {
	case group.MemberRecord:
		old := g.Members[r.Member.MemberID]
		if old != nil && sameStats(old, r.Member) {
			g.Apply(r)
			return
		}
		t.change(g, r.Member.MemberID, r, func() { t.member(old, -1); t.member(r.Member, 1) })
	case group.MemberRemovedRecord:
		t.change(g, r.MemberID, r, func() { t.member(g.Members[r.MemberID], -1) })
	case group.TargetRecord:
		t.change(g, r.MemberID, r, func() { t.target(g.Targets[r.MemberID], -1); t.target(r.Shards, 1) })
	case group.TargetRemovedRecord:
		t.change(g, r.MemberID, r, func() { t.target(g.Targets[r.MemberID], -1) })
	case group.MetaRecord:
		g.Apply(r)
		if g.ShardCount != t.shardCount {
			t.rebound(g.ShardCount)
		}
	default: // DeletedRecord
		g.Apply(r)
		t.reset(g)
	}
}

// change applies r, which concerns member id, after update has moved the
// counts from the old to the new records; the unknown-target count is
// recomputed for id.
func (t *statsTracker) change(g *group.Group, id string, r group.Record, update func()) {
	before := t.unknown(g, id)
	update()
	g.Apply(r)
	t.unknownTargets += t.unknown(g, id) - before
}

// stats returns the stats of g, which t tracks.
func (t *statsTracker) stats(g *group.Group) GroupStats {
	s := GroupStats{
		GroupEpoch: g.GroupEpoch, AssignmentEpoch: g.AssignmentEpoch,
		Members: len(g.Members), Live: len(g.LiveMemberIDs()), Expired: t.expired,
		RevokePending: t.revoking, TargetShards: t.targets, CurrentShards: t.current,
		DuplicateOwners: t.dupCurrent,
	}
	if id := g.ActiveReshardingID; id != nil {
		s.MigrationSince = g.Migrations[*id].CreatedAt
	}
	s.Violations = t.unknownTargets + t.dupTarget + t.dupCurrent
	if t.active > 0 {
		s.Violations += t.shardCount - t.targeted
	}
	if g.State != group.GroupEmpty && g.AssignmentEpoch != g.GroupEpoch {
		s.Violations++
	}
	return s
}

// sameStats reports whether two values of one member count the same.
func sameStats(a, b *group.Member) bool {
	return a.State == b.State && a.CurrentAssignment.Equal(b.CurrentAssignment) && a.Revoking.Equal(b.Revoking) &&
		a.Holds() == b.Holds()
}

// member adds (sign 1) or removes (sign -1) m's counts; m may be nil.
func (t *statsTracker) member(m *group.Member, sign int) {
	if m == nil {
		return
	}
	switch m.State {
	case group.MemberExpired:
		t.expired += sign
	case group.MemberActive:
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
		n := t.currentOwners[s]
		t.currentOwners[s] = n + sign
		switch {
		case sign > 0 && n == 1, sign < 0 && n == 2:
			t.dupCurrent += sign
		}
		if n+sign == 0 {
			delete(t.currentOwners, s)
		}
	}
}

// target adds (sign 1) or removes (sign -1) one target set.
func (t *statsTracker) target(shards group.ShardSet, sign int) {
	t.targets += sign * len(shards)
	for _, s := range shards {
		n := t.targetOwners[s]
		t.targetOwners[s] = n + sign
		if n+sign == 0 {
			delete(t.targetOwners, s)
		}
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
func (t *statsTracker) rebound(shardCount int) {
	t.shardCount, t.targeted, t.dupTarget = shardCount, 0, 0
	for s, n := range t.targetOwners {
		if s >= 0 && s < shardCount {
			t.targeted++
			if n > 1 {
				t.dupTarget++
			}
		}
	}
}

// unknown is 1 when id has a target entry in g but no member record.
func (t *statsTracker) unknown(g *group.Group, id string) int {
	if _, ok := g.Targets[id]; ok && g.Members[id] == nil {
		return 1
	}
	return 0
}

// reportStats reports the stats of an existing committed group.
func (a *groupActor) reportStats() {
	if a.committed.Exists() {
		a.c.opts.Observer.GroupStats(a.key, a.stats.stats(a.committed))
	}
}
