package actors

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/redis-stream-coordinator/coordinator/cluster"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/messages"
	"github.com/redis-stream-coordinator/coordinator/persistence"
)

// groupActor is the GroupActor of one group: the runtime around the pure
// domain. Every field is owned by the actor's Receive.
//
// State transitions:
//
//	Started            load → committed, working = committed.Clone(); a load
//	                   failure fails closed (loadErr) until a later load works.
//	                   With Options.Ownership nothing is loaded until the
//	                   first request acquires the group (own)
//	(every request)    own: acquire the group if not owned, refuse it once
//	                   this process no longer serves
//	handOver           flush, release the group, passivate: it is placed on
//	                   another coordinator now
//	Heartbeat, Tick    run on working; records join the batch; the first
//	                   entry of a batch queues flush{} (or flush at once when
//	                   group commit is off or the batch is full); a tick of a
//	                   DRAINING scale-in first asks Redis whether the removed
//	                   shards are drained (Options.Drains)
//	flush{}            commit the batch (see flush); answer every entry
//	Create, Delete,    flush, then run alone in the critical section; create
//	Scale, Rollback    and scale provision Redis streams between commits
//	GetSnapshot        publish committed (see snapshot) and answer with it;
//	                   other reads take the published snapshot without
//	                   entering the mailbox (Coordinator.committed)
//	CheckScale         answer from committed (after revalidating a shared store)
//	request, idle      group does not exist, nothing pending: ask the manager
//	                   to passivate (once)
//	ReceiveTimeout     no request for IdleTimeout, nothing pending or due:
//	                   ask the manager to passivate (once)
//	retire             out of the registry: flush what is pending and stop
//	dueTick            the group's next time-driven event is due: run a Tick
//	(after each)       arm the timer for the next one (see arm)
//	Stopping           stop the timer, flush what is pending, so a drain
//	                   answers everything
//	Restarting         stop the timer, report; the panic middleware has
//	                   answered the batch
type groupActor struct {
	c     *Coordinator
	key   group.Key
	depth *mailboxDepth

	// loadErr is the last load failure; while set, the actor fails closed:
	// every request retries the load and is answered with its error.
	loadErr error
	// batch holds committed, working, the stored revision and leases, and
	// the pending entries (group commit without I/O; batch.go).
	batch
	// cell publishes committed to readers.
	cell *snapshotCell
	// owned: this process holds the group's ownership (Options.Ownership).
	owned bool

	flushQueued bool // a flush{} is in the mailbox
	passivating bool // passivate{} was sent to the manager

	// self is the actor's PID (set on Started); timer ticks the group when
	// its next time-driven event is due (see arm).
	self     *actor.PID
	timer    groupTimer
	stopping bool
}

// flush is the message a group actor sends itself when the first entry
// joins an empty batch.
type flush struct{}

func newGroupActor(c *Coordinator, key group.Key, depth *mailboxDepth) *groupActor {
	return &groupActor{c: c, key: key, depth: depth, cell: new(snapshotCell),
		batch: batch{settings: c.opts.Settings}}
}

// Receive dispatches one message; each case is a few lines.
func (a *groupActor) Receive(ctx actor.Context) {
	switch msg := ctx.Message().(type) {
	case *actor.Started:
		a.self = ctx.Self()
		a.c.snapshots.Store(a.key, a.cell)
		ctx.SetReceiveTimeout(a.c.opts.IdleTimeout)
		if a.c.opts.Ownership == nil {
			_ = a.reload() // a failure is kept in loadErr
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
			a.handle(ctx, a.dueTickMessage())
		}
	case flush:
		a.flushQueued = false
		a.flush()
	case retire:
		a.flush()
		ctx.Stop(ctx.Self())
	case handOver:
		a.handOver(ctx)
	case messages.Request:
		if h := a.c.opts.BeforeHandle; h != nil {
			h(a.key, msg)
		}
		a.handle(ctx, msg)
		a.passivateIfIdle(ctx)
	}
	a.withdrawIfFailed()
	a.arm()
}

// passivateIdle asks the manager, once, to retire this actor when nothing
// is pending or due: its group got no request for IdleTimeout. A live
// member always keeps a lease expiry due, so only groups without live
// members passivate.
func (a *groupActor) passivateIdle(ctx actor.Context) {
	if a.passivating || a.loadErr != nil || len(a.entries) > 0 || a.timer.t != nil {
		return
	}
	a.passivating = true
	ctx.Send(a.c.manager, passivate{key: a.key, pid: ctx.Self()})
}

// passivateIfIdle asks the manager, once, to retire this actor when its
// group does not exist and nothing is pending: a request for an unknown
// group must not keep an actor alive. A later request for the group spawns
// a new actor, which loads it from the store.
func (a *groupActor) passivateIfIdle(ctx actor.Context) {
	held := a.owned || a.c.opts.Ownership == nil
	if a.passivating || len(a.entries) > 0 || held && (a.loadErr != nil || a.committed.Exists()) {
		return
	}
	a.passivating = true
	ctx.Send(a.c.manager, passivate{key: a.key, pid: ctx.Self()})
}

// handle serves one request or tick once the group is owned and loaded.
func (a *groupActor) handle(ctx actor.Context, msg messages.Request) {
	err := a.own(msg.Forwarder())
	if err == nil {
		err = a.ready()
	}
	if err != nil {
		if hb, ok := msg.(*messages.Heartbeat); ok {
			a.answerHeartbeat(hb, group.HeartbeatResponse{}, err)
		} else {
			failRequest(msg, err)
		}
		return
	}
	switch m := msg.(type) {
	case *messages.Heartbeat:
		a.heartbeat(ctx, m)
	case *messages.Tick:
		a.tick(ctx, m)
	case *messages.CreateGroup:
		a.flush()
		answerAdmin(a, m.Reply, "create", func() (group.GroupView, error) { return a.create(m) })
	case *messages.DeleteGroup:
		a.flush()
		answerAdmin(a, m.Reply, "delete", func() (group.GroupView, error) { return a.delete(m) })
	case *messages.GetSnapshot:
		m.Reply.Answer(a.snapshot())
	default:
		a.handleResharding(msg)
	}
}

// heartbeat runs a heartbeat on working, at its arrival time, and parks it
// in the batch. With nothing to store and nothing pending (a lease
// renewal), it is answered at once: handle has just checked that this
// process serves.
func (a *groupActor) heartbeat(ctx actor.Context, m *messages.Heartbeat) {
	at := m.Arrived
	if at.IsZero() {
		at = a.c.opts.Clock()
	}
	e := entry{now: at, hb: m}
	recs := a.run(&e)
	if len(recs) == 0 && len(a.entries) == 0 {
		m.Reply.Answer(e.resp, nil)
		return
	}
	a.park(ctx, e, recs)
}

// tick runs the time-driven maintenance; a tick that changes nothing in an
// idle group is dropped.
func (a *groupActor) tick(ctx actor.Context, m *messages.Tick) {
	start := time.Now()
	changed := false
	defer func() { a.c.opts.Observer.TickHandled(changed, time.Since(start)) }()
	e := entry{now: m.Now}
	recs := a.run(&e)
	if e.drained = a.drainedMigration(); e.drained != "" {
		recs = append(recs, a.confirmDrain(&e)...)
	}
	changed = len(recs) > 0
	if !changed && len(a.entries) == 0 {
		return
	}
	a.park(ctx, e, recs)
}

// park adds an entry and its records to the batch and makes sure a flush
// follows.
func (a *groupActor) park(ctx actor.Context, e entry, recs []group.Record) {
	switch n := a.batch.park(e, recs); {
	case !a.c.opts.GroupCommit || n >= a.c.opts.MaxBatch:
		a.flush()
	case !a.flushQueued:
		a.flushQueued = true
		ctx.Send(ctx.Self(), flush{})
	}
}

// answerAdmin runs an admin command in the critical section, publishes the
// committed state, then answers: a read after the answer takes the
// snapshot without a mailbox round trip.
func answerAdmin[T any](a *groupActor, r messages.ReplyTo[T], op string, run func() (T, error)) {
	v, err := critical(a, op, run)
	a.publish()
	r.Answer(v, err)
}

// answerQuery answers a query that must run on the actor (a pre-check of
// an admin command) from committed.
func answerQuery[T any](a *groupActor, r messages.ReplyTo[T], query func(*group.Group) (T, error)) {
	var zero T
	if !a.committed.Exists() {
		r.Answer(zero, groupNotFound())
		return
	}
	r.Answer(query(a.committed))
}

// answerHeartbeat answers a heartbeat with resp, or after a failure with
// status RETRY when its outcome is retryable (persistence.Classify; the
// member keeps its lease and heartbeats again), or with the error: a panic
// or a corrupt group (HTTP 500), or a group owned elsewhere
// (cluster.ErrNotOwner: status RETRY with the owner's address).
func (a *groupActor) answerHeartbeat(hb *messages.Heartbeat, resp group.HeartbeatResponse, err error) {
	switch {
	case err == nil:
		hb.Reply.Answer(resp, nil)
	case errors.Is(err, cluster.ErrNotOwner):
		hb.Reply.Answer(group.HeartbeatResponse{}, err)
	case persistence.Classify(err).Retryable():
		hb.Reply.Answer(group.RetryResponse(a.c.opts.Settings, hb.Request), nil)
	default:
		hb.Reply.Answer(group.HeartbeatResponse{}, err)
	}
}

// answerBatch answers every entry of the batch (err nil: with its computed
// response) and empties it. An entry leaves the batch only once answered,
// so a panic midway leaves the rest to failBatch.
func (a *groupActor) answerBatch(err error) {
	for len(a.entries) > 0 {
		if e := a.entries[0]; e.hb != nil {
			a.answerHeartbeat(e.hb, e.resp, err)
		}
		a.entries = a.entries[1:]
	}
	a.clear()
}

// failBatch answers every parked heartbeat that has no answer yet with err
// and empties the batch. It never blocks; the panic middleware uses it.
func (a *groupActor) failBatch(err error) {
	for _, e := range a.entries {
		if e.hb != nil {
			tryFail(e.hb.Reply, err)
		}
	}
	a.clear()
}

// groupNotFound is the domain error for a group that is not stored.
func groupNotFound() error {
	return group.Errorf(group.CodeGroupNotFound, "Group not found")
}

// serving reports whether this process may answer for the group without a
// write proving its ownership.
func (a *groupActor) serving() bool {
	o := a.c.opts.Ownership
	return o == nil || a.owned && o.Serving()
}

// handOver is sent to a group actor whose group is placed on another
// coordinator now (or whose process leaves the cluster).
type handOver struct{}

// handOver flushes what is pending, releases the group so that the
// coordinator it is placed on can take it at once, and passivates. What
// is still queued is refused with the new owner's address.
func (a *groupActor) handOver(ctx actor.Context) {
	a.flush()
	if a.owned {
		a.disown()
		sctx, cancel := a.storeCtx()
		if err := a.c.opts.Ownership.Release(sctx, a.key); err != nil {
			a.c.opts.Logger.Warn("release group", "group", a.key.String(), "err", err)
		}
		cancel()
		cause := "placement"
		if a.c.opts.Ownership.Leaving() {
			cause = "shutdown"
		}
		a.c.opts.Observer.HandedOver(a.key, cause)
	}
	if !a.passivating {
		a.passivating = true
		ctx.Send(a.c.manager, passivate{key: a.key, pid: ctx.Self()})
	}
}

// storeCtx bounds one store call.
func (a *groupActor) storeCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), a.c.opts.StoreTimeout)
}

// errorf wraps a store error with the operation and the group.
func (a *groupActor) errorf(op string, err error) error {
	return fmt.Errorf("%s group %s: %w", op, a.key, err)
}
