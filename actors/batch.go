package actors

import (
	"time"

	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/messages"
	"github.com/redis-stream-coordinator/coordinator/persistence"
)

// batch is a group actor's state between the domain and the store, with no
// I/O, clock read or actor in it (docs/architecture.md §5, "a pure batch, a thin
// actor"): the committed group (what the store holds at rev, plus the
// lease renewals that are never written), the working copy (committed plus
// the parked entries), and the entries parked since the last flush with
// the records they produced.
//
// The actor drives it: run an entry on working and park it; at a flush ask
// what must be written (mutation), perform the store call, and report the
// outcome: stored (then apply the records to committed and answer),
// install (a reload after a conflict, followed by rerun) or revert (a
// failure: working goes back to committed). Tests drive it without
// protoactor or a store (batch_test.go).
type batch struct {
	settings group.Settings

	committed *group.Group         // the stored state (a not-existing group when rev is 0)
	working   *group.Group         // committed + the pending entries
	rev       persistence.Revision // committed's store revision, 0 while not stored
	// legacy marks a group decoded from the legacy layout: its next write
	// rewrites the whole group (persistence.Rewrite).
	legacy bool

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

// install makes g, read from the store at rev, the committed state and
// resets working to a copy of it; the pending entries stay (rerun replays
// them). Every lease starts afresh at now (group.RestartLeases): renewals
// are not stored, so the stored lease ends may be older than what was
// promised before this load.
func (b *batch) install(g *group.Group, rev persistence.Revision, legacy bool, now time.Time) {
	g.RestartLeases(group.InstantOf(now), b.settings)
	b.committed, b.working, b.rev, b.legacy = g, g.Clone(), rev, legacy
}

// run runs one entry on working, recording a heartbeat's response, and
// returns the records it produced.
func (b *batch) run(e *entry) []group.Record {
	at := group.InstantOf(e.now)
	if e.hb == nil {
		return append(b.working.Tick(at, b.settings).Records, b.confirmDrain(e)...)
	}
	res := b.working.Heartbeat(at, b.settings, e.hb.Request)
	e.resp = res.Answer
	return res.Records
}

// confirmDrain applies the drain confirmation a tick entry carries.
func (b *batch) confirmDrain(e *entry) []group.Record {
	if e.drained == "" {
		return nil
	}
	return b.working.ConfirmDrain(group.InstantOf(e.now), b.settings, e.drained).Records
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

// needsWrite reports whether the pending records must be stored: anything
// but lease renewals (or any change of a legacy-layout group).
func (b *batch) needsWrite() bool {
	return b.legacy && len(b.records) > 0 || len(b.writes()) > 0
}

// mutation returns what the pending records must write at now, or false
// when nothing needs writing. A group read from the legacy layout is
// rewritten whole.
func (b *batch) mutation(now time.Time) (persistence.Mutation, bool) {
	if b.legacy && len(b.records) > 0 {
		return persistence.Rewrite(b.working, now), true
	}
	recs := b.writes()
	if len(recs) == 0 {
		return persistence.Mutation{}, false
	}
	return persistence.MutationOf(b.working, recs, now), true
}

// writes returns the pending records without the liveness-only member
// records (lease renewals): liveness lives in the owner's memory. A
// member never stored is still written, because its record carries more
// than liveness. No other coordinator reads a lease end from the store:
// one that takes the group over starts every lease afresh (install), and
// this one answers nothing once it may have lost the group (docs/cluster.md).
func (b *batch) writes() []group.Record {
	out := make([]group.Record, 0, len(b.records))
	for _, r := range b.records {
		if mr, ok := r.(group.MemberRecord); ok && mr.LivenessOnly {
			if _, stored := b.committed.Members[mr.Member.MemberID]; stored {
				continue
			}
		}
		out = append(out, r)
	}
	return out
}

// stored records that the batch was written at rev. The records still
// have to be applied to committed (the actor does, observing them).
func (b *batch) stored(rev persistence.Revision) { b.rev, b.legacy = rev, false }
