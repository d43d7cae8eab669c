package actors

import (
	"fmt"

	"github.com/redis-stream-coordinator/coordinator/actors/core"
	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
)

// The admin commands (create, delete, scale, rollback, and the live
// operations of liveops.go): requests to the group's core. Each runs
// alone in the group's critical section as one or more typed core
// commands (core.Command, stepped by step): the core calls the domain
// handler on working and asks for the write of its records, which the
// actor's commit path stores (groupActor.commit), and hands back the
// outcome and the handler's answer in Ready.Done. The Redis steps (key
// checks, provisioning) run between the commands.

// adminRequest is a request that writes the group through its core: the
// actor flushes the batch, then exec runs it alone in the critical
// section and answers it (answerAdmin). A new admin request (a live
// operation) is a message type with an exec method that runs its steps
// with step.
type adminRequest interface {
	request
	exec(a *groupActor)
}

func (m *createMsg) exec(a *groupActor) {
	answerAdmin(a, m.Reply, core.OpCreateGroup, func(op core.Op) (contract.GroupView, error) { return a.create(op, m) })
}

func (m *deleteMsg) exec(a *groupActor) {
	answerAdmin(a, m.Reply, core.OpDeleteGroup, func(op core.Op) (contract.GroupView, error) { return a.delete(op, m) })
}

func (m *scaleMsg) exec(a *groupActor) {
	op := core.OpScaleGroup
	if m.StreamLevel {
		op = core.OpScaleStream
	}
	answerAdmin(a, m.Reply, op, func(op core.Op) (group.Migration, error) { return a.scale(op, m) })
}

func (m *rollbackMsg) exec(a *groupActor) {
	answerAdmin(a, m.Reply, core.OpRollbackMigration, func(op core.Op) (group.Migration, error) {
		d := a.step(op, core.Rollback{ReshardingID: m.ID, Request: m.Request})
		return d.Migration, d.Err
	})
}

// answerAdmin runs an admin request in the critical section, publishes
// the committed state, then answers: a read after the answer takes the
// snapshot without a mailbox round trip.
func answerAdmin[T any](a *groupActor, r replyTo[T], op core.Op, run func(op core.Op) (T, error)) {
	v, err := critical(a, op, run)
	a.publish()
	r.Answer(v, err)
}

// critical runs run in the group's critical section: under the state
// mutex (Options.Locker), with the group loaded. Its steps between the
// core's commands, like provisioning, are serialised with any other
// process that takes the mutex. A failure to take the mutex is the
// command's failure before it started (core.Admin.Err).
func critical[T any](a *groupActor, op core.Op, run func(op core.Op) (T, error)) (T, error) {
	var zero T
	unlock, err := a.lock()
	if err != nil {
		a.core.Step(core.Admin{Now: a.c.opts.Clock(), Op: op, Err: err})
		a.drive()
		return zero, a.takeDone().Err
	}
	defer unlock()
	if err := a.ready(); err != nil { // a flush just before may have failed the group closed
		return zero, err
	}
	return run(op)
}

// step runs one admin command through the core (core.Admin): the core
// interprets cmd on working at the clock's now (a group that is not
// stored, or no longer is after a reload, answers GROUP_NOT_FOUND to
// anything but a create), asks for the write of its records (reloading
// and running it again after a revision conflict) and reports the
// outcome, which drive performs and keeps. It returns that outcome:
// its error, or the domain's answer.
func (a *groupActor) step(op core.Op, cmd core.Command) core.Done {
	a.done = nil
	a.core.Step(core.Admin{Now: a.c.opts.Clock(), Op: op, Cmd: cmd})
	a.drive()
	return a.takeDone()
}

// takeDone returns the outcome drive kept (none: the zero Done) and
// forgets it.
func (a *groupActor) takeDone() core.Done {
	d := a.done
	a.done = nil
	if d == nil {
		return core.Done{}
	}
	return *d
}

// create creates the group (docs/protocol.md §2.2): the Redis checks
// first, then a slot under the group caps (reserveGroup: admitted one at
// a time, so concurrent creates do not pass a cap together), then the
// core stores it (an insert), then its streams are provisioned.
func (a *groupActor) create(op core.Op, m *createMsg) (contract.GroupView, error) {
	if m.StreamLevel {
		if err := a.checkPrefixFree(); err != nil {
			return contract.GroupView{}, err
		}
	}
	cmd := core.Create{Request: m.Request}
	// A check on committed refuses a stored group or an invalid request
	// and tells the shard count whose stream keys must be free (step 4)
	// before anything is stored.
	dry := a.core.Check(a.c.opts.Clock(), cmd)
	if dry.Err != nil {
		return contract.GroupView{}, dry.Err
	}
	if err := a.checkStreamKeys(dry.View.ShardCount, m.StreamLevel); err != nil {
		return contract.GroupView{}, err
	}
	release, err := a.c.reserveGroup(a.key)
	if err != nil {
		return contract.GroupView{}, err
	}
	d := a.step(op, cmd)
	release()
	if d.Err != nil {
		return contract.GroupView{}, d.Err
	}
	if o := a.c.opts.Ownership; o != nil {
		o.Created(a.key)
	}
	if err := a.provisionCreated(op); err != nil {
		return contract.GroupView{}, err
	}
	return d.View, nil
}

// checkPrefixFree refuses a stream-level create when any stored group has
// the stream prefix. Stream-level creates of one prefix all run in the
// actor of group G = P, so they cannot race each other.
func (a *groupActor) checkPrefixFree() error {
	used, err := a.prefixInUse()
	if err != nil {
		return err
	}
	if used {
		return group.Errorf(contract.CodeStreamPrefixAlreadyExists,
			"Stream prefix '%s' is already managed by coordinator metadata", a.key.StreamPrefix)
	}
	return nil
}

// prefixInUse reports whether any stored group has the actor's stream
// prefix.
func (a *groupActor) prefixInUse() (bool, error) {
	ctx, cancel := a.storeCtx()
	defer cancel()
	keys, err := a.c.opts.Store.List(ctx)
	if err != nil {
		return false, fmt.Errorf("list groups: %w", err)
	}
	for _, k := range keys {
		if k.StreamPrefix == a.key.StreamPrefix {
			return true, nil
		}
	}
	return false, nil
}

// delete deletes the group (docs/protocol.md §2.3): the core removes it
// from the store (its records end with group.DeletedRecord). It answers
// the view from before the delete.
func (a *groupActor) delete(op core.Op, m *deleteMsg) (contract.GroupView, error) {
	d := a.step(op, core.Delete{Request: m.Request})
	if d.Err != nil {
		return contract.GroupView{}, d.Err
	}
	a.removed()
	return d.View, nil
}

// removed follows a delete the store made: it deleted the group's
// ownership record with the group, so this process no longer owns it and
// a create acquires it anew.
func (a *groupActor) removed() {
	a.disown()
	a.mayHold = false
}

// scale runs docs/protocol.md §6.2: start (or resume) the migration and
// store it PREPARING before touching Redis; provision the new shard
// range; activate it and store that. A failure after the first store
// leaves the migration PREPARING.
func (a *groupActor) scale(op core.Op, m *scaleMsg) (group.Migration, error) {
	d := a.step(op, core.StartScale{Request: m.Request, NewID: m.NewID})
	if d.Err != nil || d.Migration.State != group.MigrationPreparing {
		return d.Migration, d.Err
	}
	if err := a.provision(d.Migration.ToShardCount); err != nil {
		return group.Migration{}, err
	}
	d = a.step(op, core.ActivateScale{ReshardingID: d.Migration.ReshardingID})
	return d.Migration, d.Err
}

// checkScale answers whether a scale would start: a query, not a command
// (core.Check runs it on a copy of committed), so it changes nothing and
// answers the scale's refusal, if any.
func (a *groupActor) checkScale(m *checkScaleMsg) {
	d := a.core.Check(a.c.opts.Clock(), core.StartScale{Request: m.Request, NewID: newMigrationID()})
	m.Reply.Answer(struct{}{}, d.Err)
}

// drained asks Redis whether the removed shards of a DRAINING scale-in
// are drained (docs/protocol.md §6.4). A failed check is logged and
// answered false: the next tick asks again.
func (a *groupActor) drained(d *core.DrainCheck) bool {
	ctx, cancel := a.storeCtx()
	defer cancel()
	drained, err := a.c.opts.Drains.Drained(ctx, a.key.StreamPrefix, d.Shards)
	if err != nil {
		a.c.opts.Logger.Warn("tick: drain check", "group", a.key.String(), "migration", d.Migration, "err", err)
		return false
	}
	return drained
}
