// Package core is the pure core of one group actor, in the shape of etcd
// raft's RawNode: it holds the group's state between the domain (package
// group) and the store, and decides everything the actor does with it,
// while the actor performs the I/O.
//
// A Core keeps the committed group (what the store holds at its revision,
// plus the lease renewals, which live in memory only), the working copy
// (committed plus the pending batch) and the pending batch: heartbeats and
// ticks run on working in arrival order, their records waiting for one
// commit (group commit, docs/architecture.md principle 5).
//
// The handshake:
//
//   - Step feeds the core an entry: a heartbeat (one for a group that is
//     not stored is answered at once as for no group), a tick, a flush
//     (commit what is pending), an admin command (Admin carrying a typed
//     Command: Create, Delete, StartScale, ActivateScale, Rollback, Pause,
//     Resume, and a live reset's StartReset, BeginApply, FinishReset and
//     FailReset, which the core interprets by calling the domain), or a
//     request for the stored group (Load).
//   - Ready says what to do now: a group to load (Load), records to
//     persist (Write), whom to answer with what (Answers), whether a flush
//     must follow (Flush), what changed in committed (Changed, Records),
//     an admin command's outcome and answer (Done) and what to report
//     (Flushed, Conflicts with their typed Op, Deposed). Due says when the
//     group next needs a tick; Check answers what a command would answer,
//     changing nothing.
//   - Advance reports the outcome of the Load, Write or DrainCheck a Ready
//     asked for (an outcome nobody asked for panics); the next Ready
//     follows from it.
//
// Every change of the group goes through this cycle as records: the core
// runs the domain (package group) on working and asks for the records to
// be written; the runtime's commit path encodes them for the store by the
// Write's kind (an insert for a create, a removal for a delete, else a
// commit) and reports the outcome; the core applies the stored records to
// committed and hands them to the runtime (Ready.Records). Nothing else
// writes a group (actors/commitpath_test.go). Queries read Committed; the
// only call outside the cycle is Abandon, on a panic.
//
// Its rules are the runtime's: nobody is answered before the commit holding
// their change returned; a revision conflict reloads and re-runs the whole
// batch (or the admin command), at most CommitAttempts times; any other failure reverts working to
// committed and fails heartbeats with contract.ErrNotStored when it may
// pass (persistence.Classify decides; the HTTP layer answers them RETRY);
// a write of unknown outcome, a corrupt group or a failed load fail the
// group closed until a load succeeds; a fence refusal (persistence.Deposed)
// tells the actor it lost the group; a batch that wrote nothing is answered
// only while the process serves.
//
// The core does no I/O, reads no clock (time comes in with each entry) and
// starts no goroutine; core_test.go drives it without protoactor or a
// store, and deps_test.go keeps it that way.
package core
