package actors

import (
	"time"

	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/messages"
	"github.com/redis-stream-coordinator/coordinator/persistence"
)

// batch is a group actor's state between the domain and the store, with no
// I/O, clock read or actor in it (docs/architecture.md §5, "a pure batch, a thin
// actor"): the committed group (what the store holds at rev), the working
// copy (committed plus the parked entries), the entries parked since the
// last flush with the records they produced, and each member's stored
// lease, which coalescing compares against.
//
// The actor drives it: run an entry on working and park it; at a flush ask
// what must be written (mutation), perform the store call, and report the
// outcome: stored (then apply the records to committed and answer),
// install (a reload after a conflict, followed by rerun) or revert (a
// failure: working goes back to committed). Tests drive it without
// protoactor or a store (batch_test.go).
type batch struct {
	settings group.Settings
	// sharedStore: other processes write the store, so every group read
	// from it holds its leases for the coalescing window (HoldLeases).
	sharedStore bool

	committed *group.Group         // the stored state (a not-existing group when rev is 0)
	working   *group.Group         // committed + the pending entries
	rev       persistence.Revision // committed's store revision, 0 while not stored
	// legacy marks a group decoded from the legacy layout: its next write
	// rewrites the whole group (persistence.Rewrite).
	legacy bool
	// leases holds each member's memberLeaseExpiresAt as stored, the basis
	// of lease-renewal coalescing.
	leases map[string]group.Instant

	// The pending entries in arrival order and the records they produced
	// on working.
	entries []entry
	records []group.Record
}

// entry is one heartbeat or tick of the pending batch.
type entry struct {
	now  time.Time
	hb   *messages.Heartbeat     // nil for a tick
	resp group.HeartbeatResponse // computed on working; sent once committed
	// drained names the migration a tick found drained in Redis; re-runs
	// replay the confirmation without asking Redis again.
	drained string
}

// install makes g, stored at rev, the committed state and resets working
// to a copy of it; the pending entries stay (rerun replays them). A group
// read from a shared store holds every lease for the coalescing window:
// its writer, maybe an earlier run of this process, may have granted
// renewals that it never wrote.
func (b *batch) install(g *group.Group, rev persistence.Revision, legacy bool) {
	if b.sharedStore {
		g.HoldLeases(b.settings)
	}
	b.committed, b.working, b.rev, b.legacy = g, g.Clone(), rev, legacy
	b.leases = make(map[string]group.Instant, len(g.Members))
	for id, m := range g.Members {
		b.leases[id] = m.MemberLeaseExpiresAt
	}
}

// run runs one entry on working, recording a heartbeat's response, and
// returns the records it produced.
func (b *batch) run(e *entry) []group.Record {
	at := group.InstantOf(e.now)
	if e.hb == nil {
		return append(b.working.Tick(at, b.settings), b.confirmDrain(e)...)
	}
	resp, recs := b.working.Heartbeat(at, b.settings, e.hb.Request)
	e.resp = resp
	return recs
}

// confirmDrain applies the drain confirmation a tick entry carries.
func (b *batch) confirmDrain(e *entry) []group.Record {
	if e.drained == "" {
		return nil
	}
	return b.working.ConfirmDrain(group.InstantOf(e.now), b.settings, e.drained)
}

// park adds an entry, already run, and its records to the batch and
// returns how many entries are pending.
func (b *batch) park(e entry, recs []group.Record) int {
	b.entries = append(b.entries, e)
	b.records = append(b.records, recs...)
	return len(b.entries)
}

// rerun re-runs every pending entry, in order, on working (after install).
func (b *batch) rerun() {
	b.records = nil
	for i := range b.entries {
		b.records = append(b.records, b.run(&b.entries[i])...)
	}
}

// clear empties the batch once every entry is answered.
func (b *batch) clear() { b.entries, b.records = nil, nil }

// revert drops working's changes after a failed write.
func (b *batch) revert() { b.working = b.committed.Clone() }

// needsWrite reports whether the pending records must be stored at now:
// anything but coalesced lease renewals (or any change of a legacy-layout
// group).
func (b *batch) needsWrite(now time.Time) bool {
	return b.legacy && len(b.records) > 0 || len(b.writes(now)) > 0
}

// mutation returns what the pending records must write at now, or false
// when nothing needs writing. A group read from the legacy layout is
// rewritten whole.
func (b *batch) mutation(now time.Time) (persistence.Mutation, bool) {
	if b.legacy && len(b.records) > 0 {
		return persistence.Rewrite(b.working, now), true
	}
	recs := b.writes(now)
	if len(recs) == 0 {
		return persistence.Mutation{}, false
	}
	return persistence.MutationOf(b.working, recs, now), true
}

// writes returns the pending records without the lease renewals that need
// no write. A liveness-only member record is one whose lease this process
// granted before (group.Member.LeaseWriter; a renewal answered by another
// process is never liveness-only); it is dropped while the stored lease is
// at most the coalescing window shorter than the new one
// (group.Settings.CoalesceWindow). Every coordinator that reads the group
// holds the stored lease for that window (group.HoldLeases), so none
// expires the member before the lease this process granted has run out. A
// member never stored is always written. docs/safety.md has the argument.
func (b *batch) writes(now time.Time) []group.Record {
	s := b.settings
	fresh := group.InstantOf(now).Add(s.MemberLeaseTTL - s.CoalesceWindow())
	out := make([]group.Record, 0, len(b.records))
	for _, r := range b.records {
		if mr, ok := r.(group.MemberRecord); ok && mr.LivenessOnly {
			if stored, ok := b.leases[mr.Member.MemberID]; ok && stored >= fresh {
				continue
			}
		}
		out = append(out, r)
	}
	return out
}

// stored records that m was written at rev: the store's revision and the
// stored leases move on. The records still have to be applied to
// committed (the actor does, observing them).
func (b *batch) stored(rev persistence.Revision, m persistence.Mutation) {
	b.rev, b.legacy = rev, false
	for id := range m.PutMembers {
		b.leases[id] = b.working.Members[id].MemberLeaseExpiresAt
	}
	for _, id := range m.DeleteMembers {
		delete(b.leases, id)
	}
}
