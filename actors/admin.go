package actors

import (
	"fmt"

	"github.com/redis-stream-coordinator/coordinator/actors/core"
	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
)

// The admin commands (create, delete, scale, rollback): requests to the
// group's core. Each runs alone in the group's critical section as one or
// more core commands (command): the core runs the domain handler on
// working and asks for the write of its records, which the actor's commit
// path stores (groupActor.commit); the Redis steps (key checks,
// provisioning) run between the commands.

// adminRequest is a request that writes the group through its core: the
// actor flushes the batch, then exec runs it alone in the critical
// section and answers it (answerAdmin). A new admin request (a live
// operation) is a message type with an exec method that runs its steps
// with command.
type adminRequest interface {
	request
	exec(a *groupActor)
}

func (m *createMsg) exec(a *groupActor) {
	answerAdmin(a, m.Reply, "create", func(op string) (group.GroupView, error) { return a.create(op, m) })
}

func (m *deleteMsg) exec(a *groupActor) {
	answerAdmin(a, m.Reply, "delete", func(op string) (group.GroupView, error) { return a.delete(op, m) })
}

func (m *scaleMsg) exec(a *groupActor) {
	op := "scale-group"
	if m.StreamLevel {
		op = "scale-stream"
	}
	answerAdmin(a, m.Reply, op, func(op string) (group.Migration, error) { return a.scale(op, m) })
}

func (m *rollbackMsg) exec(a *groupActor) {
	answerAdmin(a, m.Reply, "rollback-migration", func(op string) (group.Migration, error) { return a.rollback(op, m) })
}

// answerAdmin runs an admin request in the critical section, publishes
// the committed state, then answers: a read after the answer takes the
// snapshot without a mailbox round trip.
func answerAdmin[T any](a *groupActor, r replyTo[T], op string, run func(op string) (T, error)) {
	v, err := critical(a, op, run)
	a.publish()
	r.Answer(v, err)
}

// critical runs run in the group's critical section: under the state
// mutex (Options.Locker), with the group loaded. Its steps between the
// core's commands, like provisioning, are serialised with any other
// process that takes the mutex. A failure to take the mutex is the
// command's failure before it started (core.Admin.Err).
func critical[T any](a *groupActor, op string, run func(op string) (T, error)) (T, error) {
	var zero T
	unlock, err := a.lock()
	if err != nil {
		a.core.Step(core.Admin{Now: a.c.opts.Clock(), Op: op, Err: err})
		a.drive()
		return zero, a.done
	}
	defer unlock()
	if err := a.ready(); err != nil { // a flush just before may have failed the group closed
		return zero, err
	}
	return run(op)
}

// command runs one step of an admin command on the stored group through
// the core (see step). A group that is not stored, or no longer is (the
// reload after a revision conflict found it deleted), answers
// GROUP_NOT_FOUND.
func command[A any](a *groupActor, op string, handler func(w *group.Group, now contract.Instant) group.Result[A]) (A, error) {
	return step(a, op, func(w *group.Group, now contract.Instant) group.Result[A] {
		if !w.Exists() {
			return group.Result[A]{Err: groupNotFound()}
		}
		return handler(w, now)
	})
}

// step runs one step of an admin command through the core (core.Admin):
// the core runs handler on working at now, asks for the write of its
// records (reloading and running it again after a revision conflict) and
// reports the outcome, which drive performs. It returns the answer of
// handler's last run, or the outcome's error (a refusal, a failed write).
func step[A any](a *groupActor, op string, handler func(w *group.Group, now contract.Instant) group.Result[A]) (A, error) {
	now := a.c.opts.Clock()
	var ans A
	a.done = nil
	a.core.Step(core.Admin{Now: now, Op: op, Run: func(w *group.Group) ([]group.Record, error) {
		res := handler(w, contract.InstantOf(now))
		ans = res.Answer
		return res.Records, res.Err
	}})
	a.drive()
	if a.done != nil {
		var zero A
		return zero, a.done
	}
	return ans, nil
}

// create creates the group (docs/protocol.md §2.2): the Redis checks
// first, then the core stores it (an insert), then its streams are
// provisioned.
func (a *groupActor) create(op string, m *createMsg) (group.GroupView, error) {
	if m.StreamLevel {
		if err := a.checkPrefixFree(); err != nil {
			return group.GroupView{}, err
		}
	}
	if a.core.Committed().Exists() {
		return group.GroupView{}, groupExists()
	}
	s := a.c.opts.Settings
	create := func(w *group.Group, now contract.Instant) group.Result[group.GroupView] {
		if w.Exists() {
			return group.Result[group.GroupView]{Err: groupExists()}
		}
		return w.Create(now, s, a.key, m.Request)
	}
	// A dry run on an empty group checks the request and tells the shard
	// count whose stream keys must be free (step 4) before anything is
	// stored.
	dry := create(group.New(), contract.InstantOf(a.c.opts.Clock()))
	if dry.Err != nil {
		return group.GroupView{}, dry.Err
	}
	if err := a.checkStreamKeys(dry.Answer.ShardCount, m.StreamLevel); err != nil {
		return group.GroupView{}, err
	}
	view, err := step(a, op, create)
	if err != nil {
		return group.GroupView{}, err
	}
	if o := a.c.opts.Ownership; o != nil {
		o.Created(a.key)
	}
	if err := a.provisionCreated(op); err != nil {
		return group.GroupView{}, err
	}
	return view, nil
}

// groupExists is the domain error for a create of a stored group.
func groupExists() error {
	return group.Errorf(contract.CodeGroupAlreadyExists, "Group already exists")
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
func (a *groupActor) delete(op string, m *deleteMsg) (group.GroupView, error) {
	s := a.c.opts.Settings
	view, err := command(a, op, func(w *group.Group, now contract.Instant) group.Result[group.GroupView] {
		return w.Delete(now, s, m.Request)
	})
	if err != nil {
		return group.GroupView{}, err
	}
	a.removed()
	return view, nil
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
func (a *groupActor) scale(op string, m *scaleMsg) (group.Migration, error) {
	s := a.c.opts.Settings
	mig, err := command(a, op, func(w *group.Group, now contract.Instant) group.Result[group.Migration] {
		return w.StartScale(now, s, m.Request, m.NewID)
	})
	if err != nil || mig.State != group.MigrationPreparing {
		return mig, err
	}
	if err := a.provision(mig.ToShardCount); err != nil {
		return group.Migration{}, err
	}
	return command(a, op, func(w *group.Group, now contract.Instant) group.Result[group.Migration] {
		return w.ActivateScale(now, s, mig.ReshardingID)
	})
}

// rollback runs docs/protocol.md §6.5.
func (a *groupActor) rollback(op string, m *rollbackMsg) (group.Migration, error) {
	s := a.c.opts.Settings
	return command(a, op, func(w *group.Group, now contract.Instant) group.Result[group.Migration] {
		return w.Rollback(now, s, m.ID, m.Request)
	})
}

// checkScale answers whether a scale would start: a query, not a command,
// so it does not enter the core: it runs the start on a copy of committed
// (read as etcd's RawNode.Status is) and answers its refusal, if any.
func (a *groupActor) checkScale(m *checkScaleMsg) {
	if !a.core.Committed().Exists() {
		m.Reply.Answer(struct{}{}, groupNotFound())
		return
	}
	res := a.core.Committed().Clone().StartScale(contract.InstantOf(a.c.opts.Clock()), a.c.opts.Settings, m.Request, newMigrationID())
	m.Reply.Answer(struct{}{}, res.Err)
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
