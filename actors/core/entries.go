package core

import (
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/persistence"
)

// Input is an entry for Step: Heartbeat, Tick, Flush, Admin or Load.
type Input interface{ input() }

// Heartbeat is a member's heartbeat, arrived at Now, to be answered
// through To. With Refused set the actor could not serve it (the group is
// not owned or not loaded): it is answered from that error at once. With
// Absent set the group is not stored and the actor holds none of it: it
// is answered at once as for no group (the domain's heartbeat on a group
// that does not exist: its envelope checks, then UNKNOWN_MEMBER_ID),
// writing nothing and leaving the core as it was. Otherwise it runs on
// working; with nothing to store and nothing pending (a lease renewal) it
// is answered at once, else it joins the batch.
type Heartbeat[R any] struct {
	Now     time.Time
	Req     *contract.HeartbeatRequest
	To      R
	Refused error
	Absent  bool
}

// Tick is the time-driven maintenance at Now. While a DRAINING scale-in
// waits for its removed shards to drain in Redis, the tick asks for a drain
// check (Ready.DrainCheck) and completes with its outcome. A tick that
// changes nothing in an idle group is dropped.
type Tick struct{ Now time.Time }

// Flush commits the pending batch at Now. Queued marks the flush the core
// asked to queue (Ready.Flush): until it arrives, no other is asked for.
// NotServing is nil while this process may answer for the group without a
// write proving it, else the error to answer a batch that wrote nothing.
// Err is a failure before the flush could start (the state mutex): the
// batch fails with it.
type Flush struct {
	Now        time.Time
	Queued     bool
	NotServing error
	Err        error
}

// Admin is an admin command (Cmd: create, delete, scale, rollback, pause,
// a live reset's steps; see Command) at Now, with the batch flushed. The
// core interprets Cmd, calling its domain handler on working (a group that
// does not exist while none is stored), asks for the write of the records
// the handler applied there (Ready.Write: an insert when no group is
// stored, a removal when they delete it, else an update) and reports the
// outcome, with the handler's answer, in Ready.Done. After a revision
// conflict it reloads and runs Cmd again on the fresh working, at most
// CommitAttempts times. Op names the command in conflict reports. Err is
// a failure before the command could start (the state mutex): it ends
// with that error, and Cmd may be nil.
type Admin struct {
	Now time.Time
	Op  Op
	Cmd Command
	Err error
}

// Load asks for the stored group (Ready.Load): the runtime steps it when
// the actor starts, once it has acquired the group, and to retry a group
// that fails closed. Every Advance(Loaded) answers a Ready.Load.
type Load struct{}

func (Heartbeat[R]) input() {}
func (Tick) input()         {}
func (Flush) input()        {}
func (Admin) input()        {}
func (Load) input()         {}

// Outcome is the result of a Ready's Load, Write or DrainCheck: Loaded,
// Written or DrainChecked.
type Outcome interface{ outcome() }

// Loaded is a group read from the store at Rev (Err: the load failed; a
// group that is not stored is a not-existing group at 0). Legacy marks a
// group in the legacy layout. Now is when it was read: every lease
// restarts then.
type Loaded struct {
	Group  *group.Group
	Rev    persistence.Revision
	Legacy bool
	Err    error
	Now    time.Time
}

// Written is the outcome of a Write: the new revision (0 after a
// removal), or the error of the store call.
type Written struct {
	Rev persistence.Revision
	Err error
}

// DrainChecked is the outcome of a DrainCheck: whether every removed shard
// is drained (false as well when Redis could not tell).
type DrainChecked struct{ Drained bool }

func (Loaded) outcome()       {}
func (Written) outcome()      {}
func (DrainChecked) outcome() {}

// Ready is what the actor must do after a Step or Advance, in this order:
// report the events (Conflicts, Deposed, Ticked, Flushed) and then the
// changes of committed (Changed), answer, perform the Load, the Write or
// the DrainCheck and report its outcome with Advance, then flush as Flush
// asks. Its pointers and Answers are the core's storage, reused by the
// next Step or Advance (so a Ready costs no allocation).
type Ready[R any] struct {
	// Changed: committed changed (a load, a commit); Records are the
	// records applied to it (none for a load). Readers must not see the
	// old committed state once anyone is answered.
	Changed bool
	Records []group.Record
	// Flushed reports a flush that ended.
	Flushed *Flushed
	// Ticked reports a tick that ended: whether it changed the group.
	Ticked *bool
	// Done is the outcome of an Admin command, once known: its error
	// (nil when its records are stored, or it had none to store) and the
	// domain's answer (see Done).
	Done *Done
	// Conflicts reports revision conflicts met.
	Conflicts []Conflict
	// Deposed: the store refused the ownership fence; this process no
	// longer owns the group.
	Deposed bool
	// Answers are the heartbeats to answer, in arrival order.
	Answers []Answer[R]
	// Flush asks for a flush of the pending batch.
	Flush FlushWhen
	// Load asks for the stored group (Advance(Loaded)).
	Load bool
	// Write asks for a commit (Advance(Written)).
	Write *Write
	// DrainCheck asks whether a scale-in's removed shards are drained in
	// Redis (Advance(DrainChecked)).
	DrainCheck *DrainCheck
}

func (r *Ready[R]) empty() bool {
	return !r.Changed && r.Flushed == nil && r.Ticked == nil && r.Done == nil && len(r.Conflicts) == 0 &&
		!r.Deposed && len(r.Answers) == 0 && r.Flush == NoFlush && !r.Load && r.Write == nil && r.DrainCheck == nil
}

// DrainCheck names a DRAINING scale-in and its removed shards.
type DrainCheck struct {
	Migration string
	Shards    []int
}

// FlushWhen says when the pending batch must be flushed.
type FlushWhen uint8

const (
	// NoFlush: nothing to schedule.
	NoFlush FlushWhen = iota
	// FlushQueued: after what is already queued for the actor (the first
	// entry of a batch: everything queued before the flush joins it).
	FlushQueued
	// FlushNow: at once (group commit off, or the batch is full).
	FlushNow
)

// Write asks the runtime to persist Records, already applied to Group
// (working), if the stored group is still at Expected: the runtime's
// commit path encodes them for the store (package persistence) by Kind.
// Group must only be read, and only until the write's Advance.
type Write struct {
	Kind     WriteKind
	Expected persistence.Revision
	Group    *group.Group
	Records  []group.Record
	Now      time.Time
}

// WriteKind says which store call a Write is.
type WriteKind uint8

const (
	// Update commits the delta of Records at Expected (Store.Commit).
	Update WriteKind = iota
	// Rewrite commits the whole of Group at Expected: a group read in the
	// legacy layout is rewritten once before any delta (Store.Commit).
	Rewrite
	// Insert stores Group, not stored before, at revision 1 (Store.Create).
	Insert
	// Remove deletes the group stored at Expected: Records delete it
	// (Store.Delete).
	Remove
)

// String names the store call of the kind, for error messages.
func (k WriteKind) String() string {
	switch k {
	case Insert:
		return "create"
	case Remove:
		return "delete"
	}
	return "commit"
}

// Answer is a heartbeat's answer: its response, or the error.
type Answer[R any] struct {
	To   R
	Resp contract.HeartbeatResponse
	Err  error
}

// Flushed reports one flush: the entries it held, whether it wrote, its
// outcome.
type Flushed struct {
	Size  int
	Wrote bool
	Err   error
}

// Conflict is one revision conflict of operation Op on its Attempt-th try.
type Conflict struct {
	Op      Op
	Attempt int
}
