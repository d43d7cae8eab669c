package group

import (
	"math"
	"slices"
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
)

// never is the scan bound of a group with no pending time-driven event.
const never = contract.Instant(math.MaxInt64)

// Tick runs the time-driven maintenance of docs/protocol.md §7: lease expiry, pruning,
// rebalance timeouts and migration advancement. It costs O(1) when no
// deadline is due and returns no records when nothing changed.
func (g *Group) Tick(now contract.Instant, s Settings) Result[Done] {
	if !g.Exists() {
		return Result[Done]{}
	}
	t := newTx(g, s, now)
	t.maintain()
	t.enforceTimeouts("")
	t.advanceMigration()
	return result(t, Done{})
}

// maintain expires leases, releases what fenced members held once their
// leases have run out, and prunes stale records (docs/protocol.md §4.6; §4.2 step 4). It
// scans the members only when the earliest pending event is due, and
// reconciles when something changed. It reports whether anything changed.
func (t *tx) maintain() bool {
	g := t.g
	if g.idx.nextScanAt != 0 && t.now < g.idx.nextScanAt {
		return false
	}
	next := never
	var expired, released, pruned []string
	for _, id := range sortedMemberIDs(g) {
		m := g.Members[id]
		switch {
		case m.State.Live() && t.now > m.LeaseEnd():
			expired = append(expired, id)
			next = min(next, t.pruneAt(m.LastHeartbeatAt))
		case m.State.Live():
			next = min(next, m.LeaseEnd())
		case m.State == MemberFenced && m.Holds() && t.now > m.LeaseEnd():
			released = append(released, id)
			next = min(next, t.pruneAt(m.LastHeartbeatAt))
		case m.State == MemberFenced && m.Holds():
			next = min(next, m.LeaseEnd())
		case prunable(m) && t.s.StaleMemberRetention > 0:
			if at := t.pruneAt(m.LastHeartbeatAt); t.now >= at {
				pruned = append(pruned, id)
			} else {
				next = min(next, at)
			}
		}
	}
	for _, id := range expired {
		m := t.member(id)
		m.State = MemberExpired
		m.MemberEpoch++
		t.putMemberRecord(MemberRecord{Member: m, Event: MemberExpiredEvent})
	}
	if len(expired) > 0 {
		t.bumpGroupEpoch(CauseLeaseExpired)
	}
	for _, id := range released {
		m := t.member(id)
		m.CurrentAssignment, m.GrantedAssignment, m.GrantEpochs, m.Revoking = nil, nil, nil, nil
		t.putMember(*m, false)
	}
	for _, id := range pruned {
		t.apply(MemberRemovedRecord{MemberID: id})
		if _, ok := g.Targets[id]; ok {
			t.apply(TargetRemovedRecord{MemberID: id})
		}
	}
	if len(pruned) > 0 {
		t.bumpMetadataVersion()
	}
	g.Apply(scanned{next})
	changed := len(expired)+len(released)+len(pruned) > 0
	if changed {
		t.reconcile()
	}
	return changed
}

// RestartLeases starts every live member's lease, and that of every
// member still holding shards, afresh at now: run it on a group this
// coordinator has just taken over (loaded from the store). Lease renewals
// are never written (liveness lives in the owner's memory), so the stored
// lease ends say nothing about what the previous owner promised; but it
// answered nothing after it stopped owning the group, which was before
// now, so no lease it promised runs past now + MemberLeaseTTL. Nobody is
// expired, and no fenced member's shards are released, before then.
//
// A running rebalance deadline restarts too (as Kafka's coordinator
// reschedules every member's timers when it loads a group): the member
// could not report its revocations while no coordinator owned the group,
// so an owner that is not stuck is not fenced for the gap. This costs
// liveness only, at most one rebalance timeout per takeover; safety never
// rests on the deadline. The records are liveness-only: kept in memory,
// never written.
func (g *Group) RestartLeases(now contract.Instant, s Settings) Result[Done] {
	t := newTx(g, s, now)
	until := now.Add(s.MemberLeaseTTL)
	for _, id := range sortedMemberIDs(g) {
		m := g.Members[id]
		if !m.State.Live() && !m.Holds() {
			continue
		}
		deadline := m.RebalanceDeadlineAt
		if m.releasing() && deadline != 0 {
			deadline = max(deadline, now.Add(msDuration(m.RebalanceTimeoutMs)))
		}
		if m.LeaseHold < until || deadline != m.RebalanceDeadlineAt {
			cp := *m // members are shared between copies: replace, never modify
			cp.LeaseHold, cp.RebalanceDeadlineAt = max(m.LeaseHold, until), deadline
			t.apply(MemberRecord{Member: &cp, LivenessOnly: true})
		}
	}
	return result(t, Done{})
}

// pruneAt is when a record last heard from at lastHeartbeat may be pruned.
func (t *tx) pruneAt(lastHeartbeat contract.Instant) contract.Instant {
	if t.s.StaleMemberRetention <= 0 {
		return never
	}
	return lastHeartbeat.Add(t.s.StaleMemberRetention)
}

// prunable reports whether a record is a pruning candidate (docs/protocol.md §4.6).
func prunable(m *Member) bool {
	switch m.State {
	case MemberExpired:
		return true
	case MemberFenced:
		return !m.Holds()
	case MemberLeaving:
		return len(m.CurrentAssignment) == 0 && len(m.Revoking) == 0
	}
	return false
}

// enforceTimeouts applies the rebalance timeout of docs/protocol.md §4.6 to the owners. For
// the member named only, whose answer is being computed, a deadline starts
// when it holds shards outside its target (the clock of a reduced
// assignment starts when the member is told of it, not when the target
// changed) and is cleared once it holds none. Every other owner is looked
// at only once its deadline has passed: it is fenced if it still holds
// shards outside its target, and loses the deadline otherwise. Owners are
// scanned when a deadline is due or the bound is unknown; what the pass
// does never depends on which (a clone with an unknown bound behaves the
// same). It reports whether it fenced anyone.
func (t *tx) enforceTimeouts(only string) bool {
	g := t.g
	ids := []string{only}
	all := g.idx.nextDeadlineAt == 0 || t.now >= g.idx.nextDeadlineAt
	if all {
		ids = sortedMemberIDs(g)
	}
	next := never
	var fenced []string
	for _, id := range ids {
		m := g.Members[id]
		if m == nil || !m.releasing() {
			continue
		}
		release := m.Holding().Minus(g.Targets[id])
		due := m.RebalanceDeadlineAt != 0 && t.now >= m.RebalanceDeadlineAt
		switch {
		case len(release) == 0 && m.RebalanceDeadlineAt != 0 && (id == only || due):
			cp := *m
			cp.RebalanceDeadlineAt = 0
			t.putMember(cp, false)
		case len(release) > 0 && m.RebalanceDeadlineAt == 0 && id == only:
			cp := *m
			cp.RebalanceDeadlineAt = t.now.Add(msDuration(m.RebalanceTimeoutMs))
			t.putMember(cp, false)
			next = min(next, cp.RebalanceDeadlineAt)
		case len(release) > 0 && due:
			fenced = append(fenced, id)
		case m.RebalanceDeadlineAt != 0 && !due:
			next = min(next, m.RebalanceDeadlineAt)
		}
	}
	if all {
		g.Apply(deadlinesScanned{next})
	}
	if len(fenced) == 0 {
		return false
	}
	epoch := g.GroupEpoch
	for _, id := range fenced {
		t.fence(t.member(id), epoch)
	}
	t.bumpGroupEpoch(CauseFenced)
	t.reconcile()
	return true
}

// fence marks a member FENCED with an epoch above both its own and the
// group's (groupEpoch is the value before this pass's G bump). It keeps
// what the member holds: the member may not hear of the fence and reads
// until its lease runs out, so those shards stay blocked until then
// (maintain releases them).
func (t *tx) fence(m *Member, groupEpoch int64) {
	m.State = MemberFenced
	m.MemberEpoch = max(groupEpoch+1, m.MemberEpoch+1)
	m.RebalanceDeadlineAt = 0
	t.putMemberRecord(MemberRecord{Member: m, Event: MemberFencedEvent})
}

// sortedMemberIDs returns every member id in ascending order.
func sortedMemberIDs(g *Group) []string {
	ids := make([]string, 0, len(g.Members))
	for id := range g.Members {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// NextDue tells the runtime when the group next needs a Tick to make
// progress on its own (no request arriving): at due, some lease may have
// run out, a fenced member's holdings may be releasable, a record may be
// prunable or a rebalance deadline may have passed. due is a lower bound
// derived from the applied state (an early Tick finds nothing and costs one
// scan); zero means the bound is unknown (the group was just loaded or its
// targets changed), and the next Tick computes it. poll is set while an
// active migration waits for something only a Tick observes (a scale-in
// draining in Redis, docs/protocol.md §6.4): the runtime then ticks at its own polling
// pace. A group with nothing pending returns never and no poll.
func (g *Group) NextDue() (due contract.Instant, poll bool) {
	if !g.Exists() {
		return never, false
	}
	if m := g.activeMigration(); m != nil && (m.State == MigrationActive || m.State == MigrationDraining) {
		poll = true
	}
	poll = poll || g.ActiveReset() != nil // its runtime steps (liveops.go)
	scan, deadline := g.idx.nextScanAt, g.idx.nextDeadlineAt
	if scan == 0 || deadline == 0 {
		return 0, poll
	}
	return min(scan, deadline), poll
}

// Never is the due instant of a group with nothing pending (NextDue).
const Never = never

// msDuration converts milliseconds to a time.Duration.
func msDuration(ms int64) time.Duration { return time.Duration(ms) * time.Millisecond }
