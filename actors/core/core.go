package core

import (
	"errors"
	"fmt"
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/persistence"
)

// Config is what a Core needs to decide.
type Config struct {
	Key      group.Key
	Settings group.Settings
	// GroupCommit parks heartbeats and ticks for one commit per batch;
	// without it every entry is flushed at once.
	GroupCommit bool
	// MaxBatch flushes a batch at once when it holds that many entries.
	MaxBatch int
	// CommitAttempts bounds the attempts of one commit under revision
	// conflicts.
	CommitAttempts int
	// NotOwner matches the refusals naming another owner (or this process
	// no longer serving): heartbeats get them as they are, never marked
	// contract.ErrNotStored.
	NotOwner error
	// Coordinator is the id of the coordinator the core runs in, which
	// Create and TakeOver record as the group's holder; "" (no cluster)
	// records none.
	Coordinator string
}

// Core is one group's state and pending batch (see the package doc). R is
// what the actor answers a heartbeat through; the core only hands it back.
// A Core is not safe for concurrent use.
type Core[R any] struct {
	cfg Config

	committed *group.Group         // the stored state (a not-existing group when rev is 0)
	working   *group.Group         // committed + the pending entries
	rev       persistence.Revision // committed's store revision, 0 while not stored
	// legacy marks a group decoded from the legacy layout: its next write
	// rewrites the whole group (a Rewrite write).
	legacy bool
	// failed is why the group fails closed (a failed load, a corrupt
	// group, a write of unknown outcome): it serves nothing until a load
	// succeeds.
	failed error

	// The pending entries in arrival order and the records they produced
	// on working.
	entries []entry[R]
	records []group.Record
	// flushQueued: the actor was asked to queue a flush (Ready.Flush).
	flushQueued bool
	// fl is the flush under way while flushing.
	fl       flush
	flushing bool
	// ticking is a tick waiting for its drain check (Ready.DrainCheck).
	ticking *tick[R]
	// loading: a Ready asked for a load whose outcome is not reported yet.
	loading bool

	// done is the outcome of the admin command under way, which end hands
	// over in Ready.Done and forgets: an idle group keeps no answer.
	done *Done

	rd Ready[R]
	// What rd's pointers point to, kept here so that a Ready costs no
	// allocation: valid until the next Step or Advance. Answers are not
	// kept: an idle group would keep its last batch's messages alive.
	flushed     Flushed
	nextWrite   Write
	tickChanged bool
}

// entry is one heartbeat or tick of the pending batch.
type entry[R any] struct {
	now  time.Time
	hb   *contract.HeartbeatRequest // nil for a tick
	to   R
	resp contract.HeartbeatResponse // computed on working; sent once committed
	// drained names the migration a tick found drained in Redis; re-runs
	// replay the confirmation without asking Redis again.
	drained string
}

// tick is a tick entry, run on working, and its records.
type tick[R any] struct {
	e         entry[R]
	recs      []group.Record
	migration string // whose drain is checked
}

// flush is the state of the flush, or admin command, under way.
type flush struct {
	now        time.Time
	notServing error
	size       int
	attempt    int
	wrote      bool
	// admin is the command under way instead of a batch.
	admin *Admin
}

// New returns a core holding a group that does not exist, at revision 0,
// until a load is reported (Step(Load), then Advance(Loaded)).
func New[R any](cfg Config) *Core[R] {
	return &Core[R]{cfg: cfg, committed: group.New(), working: group.New()}
}

// Committed returns the committed group. It must only be read.
func (c *Core[R]) Committed() *group.Group { return c.committed }

// Rev returns the committed group's store revision.
func (c *Core[R]) Rev() persistence.Revision { return c.rev }

// Failed returns why the group fails closed, or nil: a failed core must be
// loaded (Advance(Loaded)) before it serves.
func (c *Core[R]) Failed() error { return c.failed }

// Pending reports how many heartbeats and ticks wait for a flush.
func (c *Core[R]) Pending() int { return len(c.entries) }

// Due says when working next needs a tick (group.NextDue).
func (c *Core[R]) Due() (due contract.Instant, poll bool) { return c.working.NextDue() }

// PendingDrain names working's DRAINING scale-in whose removed shards a
// tick must find drained in Redis (group.PendingDrain).
func (c *Core[R]) PendingDrain() (id string, removed []int, ok bool) {
	if !c.cfg.Settings.DrainCheck {
		return "", nil, false
	}
	return c.working.PendingDrain()
}

// Step feeds the core one entry; see Heartbeat, Tick, Flush, Admin and
// Load.
func (c *Core[R]) Step(in Input) {
	switch in := in.(type) {
	case Heartbeat[R]:
		switch {
		case in.Refused != nil:
			c.answerWith(c.answer(entry[R]{hb: in.Req, to: in.To}, in.Refused))
			return
		case in.Absent:
			res := group.New().Heartbeat(contract.InstantOf(in.Now), c.cfg.Settings, in.Req)
			c.answerWith(Answer[R]{To: in.To, Resp: res.Answer, Err: res.Err})
			return
		}
		e := entry[R]{now: in.Now, hb: in.Req, to: in.To}
		recs := c.run(&e)
		if len(recs) == 0 && len(c.entries) == 0 {
			c.answerWith(Answer[R]{To: e.to, Resp: e.resp})
			return
		}
		c.park(e, recs)
	case Tick:
		e := entry[R]{now: in.Now}
		recs := c.run(&e)
		if !c.cfg.Settings.DrainCheck {
			c.ticked(e, recs)
			return
		}
		if id, removed, ok := c.working.PendingDrain(); ok {
			c.ticking = &tick[R]{e: e, recs: recs, migration: id}
			c.rd.DrainCheck = &DrainCheck{Migration: id, Shards: removed}
			return
		}
		c.ticked(e, recs)
	case Flush:
		if in.Queued {
			c.flushQueued = false
		}
		if len(c.entries) == 0 {
			return
		}
		c.startFlush(flush{now: in.Now, notServing: in.NotServing, size: len(c.entries)})
		switch {
		case in.Err != nil:
			c.finish(c.abort(in.Err))
		case !c.cfg.GroupCommit || c.needsWrite():
			c.write()
		default:
			c.finish(nil)
		}
	case Admin:
		if len(c.entries) > 0 || c.flushing {
			panic("core: an admin command while a batch is pending")
		}
		if in.Cmd == nil && in.Err == nil {
			panic("core: an admin command without a command")
		}
		c.startFlush(flush{now: in.Now, admin: &in})
		if in.Err != nil {
			c.end(c.abort(in.Err))
			return
		}
		c.runAdmin()
	case Load:
		c.askLoad()
	default:
		panic("core: unknown entry")
	}
}

// ticked ends a tick: one that changed nothing in an idle group is
// dropped, any other joins the batch.
func (c *Core[R]) ticked(e entry[R], recs []group.Record) {
	c.tickChanged = len(recs) > 0
	c.rd.Ticked = &c.tickChanged
	if c.tickChanged || len(c.entries) > 0 {
		c.park(e, recs)
	}
}

// drainChecked completes the tick waiting for its drain check: a drained
// migration is confirmed (group.ConfirmDrain), and re-runs replay the
// confirmation without asking Redis again.
func (c *Core[R]) drainChecked(out DrainChecked) {
	t := c.ticking
	if t == nil {
		panic("core: a drain check outcome without a tick")
	}
	c.ticking = nil
	if out.Drained {
		t.e.drained = t.migration
		t.recs = append(t.recs, c.working.ConfirmDrain(contract.InstantOf(t.e.now), c.cfg.Settings, t.e.drained).Records...)
	}
	c.ticked(t.e, t.recs)
}

// Ready returns what the actor must do now and forgets it: the actor does
// it all (reports, answers, then the Load, Write or DrainCheck) and reports
// the outcome with Advance. A Ready is valid until the next Step or
// Advance, which reuse its storage.
func (c *Core[R]) Ready() Ready[R] {
	rd := c.rd
	c.rd = Ready[R]{}
	return rd
}

// answerWith adds an answer to the Ready.
func (c *Core[R]) answerWith(a Answer[R]) {
	c.rd.Answers = append(c.rd.Answers, a)
}

// startFlush starts the flush or admin command fl.
func (c *Core[R]) startFlush(fl flush) { c.fl, c.flushing = fl, true }

// HasReady reports whether Ready holds anything to do.
func (c *Core[R]) HasReady() bool { return !c.rd.empty() }

// Advance reports the outcome of the Load or Write of the last Ready.
func (c *Core[R]) Advance(out Outcome) {
	switch out := out.(type) {
	case Loaded:
		c.loaded(out)
	case Written:
		c.written(out)
	case DrainChecked:
		c.drainChecked(out)
	default:
		panic("core: unknown outcome")
	}
}

// Abandon empties the batch without answering it and returns whom its
// heartbeats were to be answered through. It is the one call outside
// Step/Ready/Advance, for a panic: the actor's recover answers them with
// an error and the actor restarts with a new core that loads from the
// store. A panic may leave this core halfway through a Step or Advance
// (working half-changed, a Ready half-built), so no entry may run on it
// any more; Abandon decides nothing and only hands back the replies.
func (c *Core[R]) Abandon() []R {
	var out []R
	for _, e := range c.entries {
		if e.hb != nil {
			out = append(out, e.to)
		}
	}
	c.entries, c.records, c.flushing, c.ticking = nil, nil, false, nil
	return out
}

// Check answers what cmd would answer now, changing nothing: it runs on
// a copy of committed (a query, as etcd's RawNode.Status is), so an
// actor can check a command before its Redis steps (a create's stream
// keys, a stream scale's groups).
func (c *Core[R]) Check(now time.Time, cmd Command) Done {
	var d Done
	if _, err := interpret(cmd, c.committed.Clone(), contract.InstantOf(now), c.cfg, &d); err != nil {
		return Done{Err: err}
	}
	return d
}

// runAdmin runs the admin command under way on working (interpret) and
// asks for the write of its records (a group that fails closed is loaded
// first); a refusal reverts working and ends it.
func (c *Core[R]) runAdmin() {
	if c.failed != nil {
		c.askLoad()
		return
	}
	ad := c.fl.admin
	c.done = &Done{Op: ad.Op}
	recs, err := interpret(ad.Cmd, c.working, contract.InstantOf(c.fl.now), c.cfg, c.done)
	if err != nil {
		c.revert()
		c.end(err)
		return
	}
	c.records = recs
	c.write()
}

// askLoad asks for the stored group (Ready.Load).
func (c *Core[R]) askLoad() { c.rd.Load, c.loading = true, true }

// retry decides what follows a failed write of the flush or admin command
// under way: after a revision conflict with attempts left, reload
// (Ready.Load) and run it again (true); otherwise working reverts to
// committed and the error is what to answer (see abort).
func (c *Core[R]) retry(err error) (bool, error) {
	if persistence.Classify(err) != persistence.Stale {
		return false, c.abort(err)
	}
	op := OpFlush
	if c.fl.admin != nil {
		op = c.fl.admin.Op
	}
	c.rd.Conflicts = append(c.rd.Conflicts, Conflict{Op: op, Attempt: c.fl.attempt})
	if c.fl.attempt >= c.cfg.CommitAttempts {
		c.revert()
		return false, fmt.Errorf("%s group %s: %w", op, c.cfg.Key, contract.ErrStateConflict)
	}
	c.askLoad()
	return true, nil
}

// run runs one entry on working, recording a heartbeat's response, and
// returns the records it produced.
func (c *Core[R]) run(e *entry[R]) []group.Record {
	at := contract.InstantOf(e.now)
	if e.hb == nil {
		recs := c.working.Tick(at, c.cfg.Settings).Records
		if e.drained != "" {
			recs = append(recs, c.working.ConfirmDrain(at, c.cfg.Settings, e.drained).Records...)
		}
		return recs
	}
	res := c.working.Heartbeat(at, c.cfg.Settings, e.hb)
	e.resp = res.Answer
	return res.Records
}

// park adds an entry, already run, and its records to the batch and asks
// for a flush: at once without group commit or once the batch is full,
// else queued behind what is already in the mailbox.
func (c *Core[R]) park(e entry[R], recs []group.Record) {
	c.entries = append(c.entries, e)
	c.records = append(c.records, recs...)
	switch {
	case !c.cfg.GroupCommit || len(c.entries) >= c.cfg.MaxBatch:
		c.rd.Flush = FlushNow
	case !c.flushQueued:
		c.flushQueued = true
		c.rd.Flush = FlushQueued
	}
}

// rerun re-runs every pending entry, in order, on working (after install).
func (c *Core[R]) rerun() {
	c.records = nil
	for i := range c.entries {
		c.records = append(c.records, c.run(&c.entries[i])...)
	}
}

// revert drops working's changes after a failed write.
func (c *Core[R]) revert() { c.working = c.committed.Clone() }

// install makes g, read from the store at rev, the committed state and
// resets working to a copy of it; the pending entries stay (rerun replays
// them). Every lease starts afresh at now (group.RestartLeases, records
// kept in memory): renewals are not stored, so the stored lease ends may
// be older than what was promised before this load.
func (c *Core[R]) install(g *group.Group, rev persistence.Revision, legacy bool, now time.Time) {
	g.RestartLeases(contract.InstantOf(now), c.cfg.Settings)
	c.committed, c.working, c.rev, c.legacy = g, g.Clone(), rev, legacy
	c.rd.Changed = true
}

// needsWrite reports whether the pending records must be stored: anything
// but lease renewals (or any change of a legacy-layout group).
func (c *Core[R]) needsWrite() bool {
	return c.legacy && len(c.records) > 0 || len(c.writes()) > 0
}

// writes returns the pending records without the liveness-only member
// records (lease renewals): liveness lives in the owner's memory. A
// member never stored is still written, because its record carries more
// than liveness. No other coordinator reads a lease end from the store:
// one that takes the group over starts every lease afresh (install), and
// this one answers nothing once it may have lost the group (docs/cluster.md).
func (c *Core[R]) writes() []group.Record {
	out := make([]group.Record, 0, len(c.records))
	for _, r := range c.records {
		if mr, ok := r.(group.MemberRecord); ok && mr.LivenessOnly {
			if _, stored := c.committed.Members[mr.Member.MemberID]; stored {
				continue
			}
		}
		out = append(out, r)
	}
	return out
}

// write asks for the pending records to be stored (Ready.Write), or
// ends the flush when nothing needs writing. A group that fails closed is
// loaded first. The kind of write follows from the state: an insert while
// no group is stored, a removal when working no longer exists, a rewrite
// of a legacy-layout group, else an update of the records' delta.
func (c *Core[R]) write() {
	if c.failed != nil {
		c.askLoad()
		return
	}
	w := Write{Expected: c.rev, Group: c.working, Now: c.fl.now}
	switch recs := c.writes(); {
	case c.rev == 0 && c.working.Exists():
		w.Kind, w.Records = Insert, c.records
	case c.rev == 0:
		c.finish(nil) // nothing stored, nothing to store
		return
	case !c.working.Exists():
		w.Kind, w.Records = Remove, c.records
	case c.legacy && len(c.records) > 0:
		w.Kind, w.Records = Rewrite, c.records
	case len(recs) == 0:
		c.finish(nil)
		return
	default:
		w.Records = recs
	}
	c.fl.attempt++
	c.nextWrite = w
	c.rd.Write = &c.nextWrite
}

// written takes the outcome of the write a Ready asked for.
func (c *Core[R]) written(out Written) {
	if !c.flushing {
		panic("core: a write outcome without a write")
	}
	c.nextWrite = Write{} // the runtime is done with its records
	if out.Err == nil {
		c.rev, c.legacy, c.fl.wrote = out.Rev, false, true
		c.finish(nil)
		return
	}
	if retry, err := c.retry(out.Err); !retry {
		c.finish(err)
	}
}

// loaded takes a load's outcome: on success the stored group is installed
// and the pending batch re-run on it; a flush or admin command waiting for
// it goes on (the command runs again on the fresh working).
func (c *Core[R]) loaded(out Loaded) {
	if !c.loading {
		panic("core: a load outcome without a load")
	}
	c.loading = false
	if out.Err != nil {
		c.failed = out.Err
		if c.flushing {
			c.finish(out.Err)
		}
		return
	}
	c.failed = nil
	c.install(out.Group, out.Rev, out.Legacy, out.Now)
	c.rerun()
	switch {
	case !c.flushing:
	case c.fl.admin != nil:
		c.runAdmin()
	default:
		c.write()
	}
}

// abort reverts working to committed after err and returns what to
// answer. An error of no known class may hide a completed write, so the
// group fails closed (it is loaded before its next request, not now, so
// that this answer waits for one store call only) and the error is marked
// contract.ErrOutcomeUnknown. A store reporting the group corrupt fails it
// closed; one refusing the ownership fence deposes this process.
func (c *Core[R]) abort(err error) error {
	switch persistence.Classify(err) {
	case persistence.Corrupt:
		c.failed = err
	case persistence.Deposed:
		c.rd.Deposed = true
	}
	if !persistence.Classify(err).KnownWrite() {
		c.failed = err
		err = fmt.Errorf("%w: %w", contract.ErrOutcomeUnknown, err)
	}
	c.revert()
	return err
}

// finish ends a flush with err (nil: stored, or nothing to store): on
// success the records are applied to committed; every entry is answered.
// A batch that stored nothing is answered only while the process serves,
// since no write proved its ownership.
func (c *Core[R]) finish(err error) {
	fl := &c.fl
	if fl.admin != nil {
		c.end(err)
		return
	}
	if err == nil && !fl.wrote && fl.notServing != nil {
		err = fl.notServing
		c.revert()
	}
	c.flushed = Flushed{Size: fl.size, Wrote: fl.wrote, Err: err}
	c.rd.Flushed = &c.flushed
	if err == nil {
		c.apply()
	}
	for _, e := range c.entries {
		if e.hb != nil {
			c.answerWith(c.answer(e, err))
		}
	}
	c.entries, c.records, c.flushing = nil, nil, false
}

// end ends the admin command under way: its records, stored, are applied
// to committed; its outcome and answer are reported in Ready.Done.
func (c *Core[R]) end(err error) {
	if err == nil && len(c.records) > 0 {
		c.apply()
	}
	if err != nil {
		c.done = &Done{Op: c.fl.admin.Op, Err: err}
	}
	c.rd.Done, c.done = c.done, nil
	c.records, c.flushing, c.fl.admin = nil, false, nil
}

// apply applies the pending records to committed once the runtime has
// stored those that needed a write, and hands them to it in
// Ready.Records.
func (c *Core[R]) apply() {
	for _, r := range c.records {
		c.committed.Apply(r)
	}
	c.rd.Changed = true
	if c.rd.Records == nil {
		c.rd.Records = c.records // handed over: the batch starts a new slice
	} else {
		c.rd.Records = append(c.rd.Records, c.records...)
	}
}

// answer is what a heartbeat of the batch gets after a flush ending with
// err: its computed response; or err marked contract.ErrNotStored when the
// failure may pass (persistence.Classify: the member keeps its lease and
// sends the heartbeat again); or err as it is: a corrupt group or a panic,
// or a refusal naming another owner (Config.NotOwner).
func (c *Core[R]) answer(e entry[R], err error) Answer[R] {
	switch {
	case err == nil:
		return Answer[R]{To: e.to, Resp: e.resp}
	case persistence.Classify(err).Retryable() && (c.cfg.NotOwner == nil || !errors.Is(err, c.cfg.NotOwner)):
		err = fmt.Errorf("%w: %w", contract.ErrNotStored, err)
	}
	return Answer[R]{To: e.to, Err: err}
}
