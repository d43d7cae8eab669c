package actors

import (
	"errors"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/redis-stream-coordinator/coordinator/actors/core"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/persistence"
)

// groupActor is the GroupActor of one group: a thin loop around its pure
// core (package core), which holds the group and decides; the actor moves
// messages, arms the timer and performs the I/O the core asks for (drive).
// Every field is owned by the actor's Receive.
//
// State transitions:
//
//	Started            load (see reload: the core asks for it); a load
//	                   failure fails closed until
//	                   a later load works. With Options.Ownership nothing
//	                   is loaded until the first request acquires the
//	                   group (own)
//	(every request)    own: if not owned, read whether the group is
//	                   stored and acquire it only then (or for a create);
//	                   a request for a group not stored is answered as for
//	                   no group, writing nothing; refuse every request once
//	                   this process no longer serves; once owned and
//	                   loaded, a group naming another holder (or none)
//	                   records this coordinator (takeOver: a handover
//	                   entry when it named another)
//	handOver, strayMsg flush, release the group, passivate: it is placed on
//	                   another coordinator now (strayMsg: and the sweep
//	                   found its ownership record naming this process)
//	Heartbeat, Tick    stepped into the core, which parks them in its batch
//	                   and asks for a flush (queued as flush{}, or at once
//	                   when group commit is off or the batch is full); a
//	                   tick of a DRAINING scale-in first asks Redis whether
//	                   the removed shards are drained (Options.Drains)
//	flush{}            flush (the queued one): the core commits the batch and
//	                   answers it
//	Create, Delete,    (adminRequest) flush, then run alone in the critical
//	Scale, Rollback    section as commands to the core, which asks for
//	                   their writes; create and scale provision Redis
//	                   streams between commands
//	GetSnapshot        publish committed (see snapshot) and answer with it;
//	                   other reads take the published snapshot without
//	                   entering the mailbox (System.committed)
//	CheckScale         answer from committed
//	request, idle      group does not exist, nothing pending: ask the manager
//	                   to passivate (once)
//	ReceiveTimeout     no request for IdleTimeout, nothing pending or due:
//	                   ask the manager to passivate (once)
//	retire             out of the registry: flush what is pending, release
//	                   the ownership record if it may name this process,
//	                   and stop
//	dueTick            the group's next time-driven event is due: run a Tick
//	(after each)       arm the timer for the next one (see arm)
//	Stopping           stop the timer, flush what is pending, so a drain
//	                   answers everything
//	Restarting         stop the timer, report; the panic middleware has
//	                   answered the batch
type groupActor struct {
	c     *System
	key   group.Key
	depth *mailboxDepth

	// core holds committed, working, the stored revision and the pending
	// batch, and decides what to write and whom to answer.
	core *core.Core[*heartbeatMsg]
	// cell publishes committed to readers.
	cell *snapshotCell
	// owned: this process holds the group's ownership (Options.Ownership).
	owned bool
	// mayHold: the group's ownership record may name this process (an
	// acquire that succeeded or whose outcome is unknown, and no release
	// since); the actor releases the record before it stops.
	mayHold bool

	passivating bool      // passivate{} was sent to the manager
	flushStart  time.Time // when the flush under way started
	tickStart   time.Time // when the tick under way started
	// done is the outcome of the admin command under way (core.Admin),
	// from Ready.Done, until step or critical takes it (takeDone): its
	// error or the domain's answer.
	done *core.Done
	// unanswered are the answers of the Ready being performed that are not
	// sent yet (a panic midway leaves them to failBatch).
	unanswered []core.Answer[*heartbeatMsg]

	// self is the actor's PID (set on Started); timer ticks the group when
	// its next time-driven event is due (see arm).
	self     *actor.PID
	timer    groupTimer
	stopping bool
	// live counts the active live reset's failed steps (liveops.go).
	live liveState
}

// flush is the message a group actor sends itself when the first entry
// joins an empty batch.
type flush struct{}

func newGroupActor(c *System, key group.Key, depth *mailboxDepth) *groupActor {
	return &groupActor{c: c, key: key, depth: depth, cell: new(snapshotCell),
		core: core.New[*heartbeatMsg](core.Config{
			Key:            key,
			Settings:       c.opts.Settings,
			GroupCommit:    c.opts.GroupCommit,
			MaxBatch:       c.opts.MaxBatch,
			CommitAttempts: c.opts.CommitAttempts,
			NotOwner:       persistence.ErrNotOwner,
			Coordinator:    coordinatorID(c.opts.Ownership),
		})}
}

// coordinatorID is o's coordinator id, "" without a cluster.
func coordinatorID(o Ownership) string {
	if o == nil {
		return ""
	}
	return o.ID()
}

// Receive dispatches one message; each case is a few lines.
func (a *groupActor) Receive(ctx actor.Context) {
	switch msg := ctx.Message().(type) {
	case *actor.Started:
		a.self = ctx.Self()
		a.c.snapshots.Store(a.key, a.cell)
		ctx.SetReceiveTimeout(a.c.opts.IdleTimeout)
		if a.c.opts.Ownership == nil {
			_ = a.reload() // a failure fails the core closed
		}
	case *actor.ReceiveTimeout:
		a.passivateIdle(ctx)
		ctx.SetReceiveTimeout(a.c.opts.IdleTimeout) // a fired timeout is cancelled
	case *actor.Stopping:
		a.stopping = true
		a.disarm()
		a.flush()
	case *actor.Stopped:
		a.c.snapshots.CompareAndDelete(a.key, a.cell)
	case *actor.Restarting:
		a.stopping = true // a new instance takes over
		a.disarm()
		a.c.opts.Observer.ActorRestarted(a.key)
	case dueTick:
		if a.fired(msg) {
			a.handle(a.dueTickMessage())
		}
	case flush:
		a.flushBatch(true)
	case retire:
		a.flush()
		a.release()
		ctx.Stop(ctx.Self())
	case handOver:
		a.handOver(ctx)
		ctx.Respond(handedOver{})
	case *strayMsg:
		if !a.c.placedHere(a.key) || !a.c.opts.Ownership.Serving() {
			a.mayHold = true // the sweep read the record naming this process
			a.handOver(ctx)
		}
	case request:
		a.handle(msg)
		a.passivateIfIdle(ctx)
	}
	a.advanceReset()
	a.withdrawIfFailed()
	a.arm()
}

// passivateIdle asks the manager, once, to retire this actor when nothing
// is pending or due: its group got no request for IdleTimeout. A live
// member always keeps a lease expiry due, so only groups without live
// members passivate.
func (a *groupActor) passivateIdle(ctx actor.Context) {
	if a.passivating || a.core.Failed() != nil || a.core.Pending() > 0 || a.timer.t != nil {
		return
	}
	a.passivate(ctx)
}

// passivateIfIdle asks the manager, once, to retire this actor when its
// group does not exist and nothing is pending: a request for an unknown
// group must not keep an actor alive. A later request for the group spawns
// a new actor, which loads it from the store.
func (a *groupActor) passivateIfIdle(ctx actor.Context) {
	held := a.owned || a.c.opts.Ownership == nil
	if a.passivating || a.core.Pending() > 0 || held && (a.core.Failed() != nil || a.core.Committed().Exists()) {
		return
	}
	a.passivate(ctx)
}

// passivate asks the manager, once, to retire this actor.
func (a *groupActor) passivate(ctx actor.Context) {
	if !a.passivating {
		a.passivating = true
		ctx.Send(a.c.manager, passivate{key: a.key, pid: ctx.Self()})
	}
}

// handle serves one request or tick once the group is owned and loaded.
func (a *groupActor) handle(msg request) {
	err := a.own(msg)
	if errors.Is(err, errAbsent) {
		a.answerAbsent(msg)
		return
	}
	if err == nil {
		err = a.ready()
	}
	if err == nil {
		a.takeOver()
	}
	if err != nil {
		if hb, ok := msg.(*heartbeatMsg); ok {
			a.core.Step(core.Heartbeat[*heartbeatMsg]{Req: hb.Request, To: hb, Refused: err})
			a.drive()
		} else {
			failRequest(msg, err)
		}
		return
	}
	switch m := msg.(type) {
	case *heartbeatMsg:
		a.core.Step(core.Heartbeat[*heartbeatMsg]{Now: m.arrived(a.c.opts.Clock), Req: m.Request, To: m})
		a.drive()
	case *tickMsg:
		a.tick(m)
	case adminRequest:
		a.flush()
		m.exec(a)
	case *checkScaleMsg:
		a.checkScale(m)
	case *snapshotMsg:
		m.Reply.Answer(a.snapshot())
	}
}

// takeOver records this coordinator as the holder of the group it owns
// (core.TakeOver, in the critical section) when the stored group names
// another holder or none: once per takeover, since the group then names
// this one. A failed write is logged; the next request tries again.
func (a *groupActor) takeOver() {
	id := coordinatorID(a.c.opts.Ownership)
	if g := a.core.Committed(); id == "" || !g.Exists() || g.Coordinator == id {
		return
	}
	a.flush()
	if _, err := critical(a, core.OpTakeOver, func(op core.Op) (bool, error) {
		d := a.step(op, core.TakeOver{})
		return d.HandedOver, d.Err
	}); err != nil {
		a.c.opts.Logger.Warn("record the group's coordinator", "group", a.key.String(), "err", err)
	}
}

// answerAbsent answers msg, a request for a group that is not stored, as
// for no group, from no state: a heartbeat is stepped into the core, which
// answers it at once as the domain does for no group (core.Heartbeat's
// Absent), a snapshot read gets the empty group (GROUP_NOT_FOUND to its
// reader), a tick nothing, and every command GROUP_NOT_FOUND.
func (a *groupActor) answerAbsent(msg request) {
	switch m := msg.(type) {
	case *heartbeatMsg:
		a.core.Step(core.Heartbeat[*heartbeatMsg]{Now: m.arrived(a.c.opts.Clock), Req: m.Request, To: m, Absent: true})
		a.drive()
	case *snapshotMsg:
		m.Reply.Answer(group.New(), nil)
	case *tickMsg:
	default:
		failRequest(msg, core.GroupNotFound())
	}
}

// tick runs the time-driven maintenance.
func (a *groupActor) tick(m *tickMsg) {
	a.tickStart = time.Now()
	a.core.Step(core.Tick{Now: m.Now})
	a.drive()
}

// flush commits the pending batch and answers every entry (group commit,
// docs/architecture.md principle 5; the core decides, see package core).
// Without group commit the batch is written in the critical section.
func (a *groupActor) flush() { a.flushBatch(false) }

// flushBatch is flush; queued marks the flush{} message the core asked to
// queue.
func (a *groupActor) flushBatch(queued bool) {
	if a.core.Pending() == 0 {
		if queued {
			a.core.Step(core.Flush{Queued: true})
		}
		return
	}
	a.flushStart = time.Now()
	a.c.opts.Observer.MailboxDepth(a.key, int(a.depth.n.Load()))
	var err error
	if !a.c.opts.GroupCommit {
		var unlock func()
		if unlock, err = a.lock(); err == nil {
			defer unlock()
		}
	}
	a.core.Step(core.Flush{Now: a.c.opts.Clock(), Queued: queued, NotServing: a.notServing(), Err: err})
	a.drive()
}

// drive does what the core's Ready asks until it asks nothing more: it
// reports the events and the changes of committed (outdating the published
// snapshot before anyone is answered), takes an admin command's outcome,
// answers, schedules the flush, and performs the load, the write (commit:
// the runtime's commit path) or the drain check, reporting its outcome
// with Advance.
func (a *groupActor) drive() {
	for a.core.HasReady() {
		rd := a.core.Ready()
		a.unanswered = rd.Answers
		for _, c := range rd.Conflicts {
			a.c.opts.Observer.Conflict(a.key, c.Op, c.Attempt)
		}
		if rd.Deposed {
			a.disown()
		}
		if rd.Ticked != nil {
			a.c.opts.Observer.TickHandled(*rd.Ticked, time.Since(a.tickStart))
		}
		if f := rd.Flushed; f != nil {
			a.c.opts.Observer.BatchFlushed(a.key, f.Size, f.Wrote, time.Since(a.flushStart), f.Err)
		}
		if rd.Changed {
			a.committedChanged()
			committed := a.core.Committed()
			a.c.opts.Observer.GroupCommitted(a.key, committed, rd.Records)
			if committed.Exists() {
				a.c.opts.Observer.GroupStats(a.key, committed.Stats())
			}
		}
		if rd.Done != nil {
			a.done = rd.Done
		}
		a.withdrawIfFailed() // a failed group's readers wait for its reload
		for len(a.unanswered) > 0 {
			ans := a.unanswered[0]
			ans.To.Reply.Answer(ans.Resp, ans.Err)
			a.unanswered = a.unanswered[1:]
		}
		a.unanswered = nil // an empty tail still holds the answered batch
		switch {
		case rd.Load:
			a.core.Advance(a.load())
		case rd.Write != nil:
			a.core.Advance(a.commit(rd.Write))
		case rd.DrainCheck != nil:
			a.core.Advance(core.DrainChecked{Drained: a.drained(rd.DrainCheck)})
		}
		switch rd.Flush {
		case core.FlushQueued:
			a.c.system.Root.Send(a.self, flush{})
		case core.FlushNow:
			a.flush()
		}
	}
}

// failBatch answers every parked heartbeat that has no answer yet (and
// those of a Ready not yet sent) with err and empties the batch. It never
// blocks; the panic middleware uses it.
func (a *groupActor) failBatch(err error) {
	for _, ans := range a.unanswered {
		tryFail(ans.To.Reply, err)
	}
	a.unanswered = nil
	for _, hb := range a.core.Abandon() {
		tryFail(hb.Reply, err)
	}
}

// handOver is sent to a group actor whose group is placed on another
// coordinator now (or whose process leaves the cluster); it answers
// handedOver.
type handOver struct{}

// handedOver answers handOver once the group is released.
type handedOver struct{}

// handOver flushes what is pending, releases the group so that the
// coordinator it is placed on can take it at once, and passivates. What
// is still queued is refused with the new owner's address.
func (a *groupActor) handOver(ctx actor.Context) {
	a.flush()
	owned := a.owned
	a.disown()
	a.release()
	if owned {
		cause := "placement"
		if a.c.opts.Ownership.Leaving() {
			cause = "shutdown"
		}
		a.c.opts.Observer.HandedOver(a.key, cause)
	}
	a.passivate(ctx)
}

// release clears the group's ownership record if it may name this process
// (the store clears only a record naming this process). A failed release
// is logged and left to the next sweep (System.TickNow), which finds
// the record and sends the group's actor a strayMsg.
func (a *groupActor) release() {
	if !a.mayHold {
		return
	}
	sctx, cancel := a.storeCtx()
	defer cancel()
	if err := a.c.opts.Ownership.Release(sctx, a.key); err != nil {
		a.c.opts.Logger.Warn("release group", "group", a.key.String(), "err", err)
		return
	}
	a.mayHold = false
}
