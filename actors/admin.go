package actors

import (
	"fmt"

	"github.com/redis-stream-coordinator/coordinator/actors/core"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/persistence"
)

// The admin commands (create, delete, scale, rollback): each runs alone in
// the group's critical section, with the Redis steps (provisioning, key
// checks) between its commits. The core runs the domain handlers and
// commits their records (core.Run, core.Commit).

// create runs a create command in the critical section.
func (a *groupActor) create(m *createMsg) (group.GroupView, error) {
	if m.StreamLevel {
		if err := a.checkPrefixFree(); err != nil {
			return group.GroupView{}, err
		}
	}
	if a.core.Committed().Exists() {
		return group.GroupView{}, group.Errorf(group.CodeGroupAlreadyExists, "Group already exists")
	}
	g := group.New()
	res := g.Create(group.InstantOf(a.c.opts.Clock()), a.c.opts.Settings, a.key, m.Request)
	if res.Err != nil {
		return group.GroupView{}, res.Err
	}
	if err := a.checkStreamKeys(g.ShardCount, m.StreamLevel); err != nil {
		return group.GroupView{}, err
	}
	ctx, cancel := a.storeCtx()
	defer cancel()
	rev, err := a.c.opts.Store.Create(ctx, a.key, persistence.Encode(g))
	if err != nil {
		return group.GroupView{}, a.errorf("create", err)
	}
	a.install(g, rev)
	if o := a.c.opts.Ownership; o != nil {
		o.Created(a.key)
	}
	if err := a.provisionCreated(); err != nil {
		return group.GroupView{}, err
	}
	return res.Answer, nil
}

// install makes g, just written whole at rev (0: deleted), the core's
// committed state.
func (a *groupActor) install(g *group.Group, rev persistence.Revision) {
	a.core.Advance(core.Loaded{Group: g, Rev: rev, Now: a.c.opts.Clock()})
	a.drive()
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
		return group.Errorf(group.CodeStreamPrefixAlreadyExists,
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

// delete runs a delete command in the critical section; it answers the
// view from before the delete.
func (a *groupActor) delete(m *deleteMsg) (group.GroupView, error) {
	if !a.core.Committed().Exists() {
		return group.GroupView{}, groupNotFound()
	}
	res := core.Run(a.core, func(w *group.Group) group.Result[group.GroupView] {
		return w.Delete(group.InstantOf(a.c.opts.Clock()), a.c.opts.Settings, m.Request)
	})
	if res.Err != nil {
		return group.GroupView{}, res.Err
	}
	ctx, cancel := a.storeCtx()
	defer cancel()
	if err := a.c.opts.Store.Delete(ctx, a.key, a.core.Rev()); err != nil {
		return group.GroupView{}, a.errorf("delete", err)
	}
	a.install(group.New(), 0)
	// The store deleted the ownership record with the group: a create
	// acquires the group anew.
	a.disown()
	a.mayHold = false
	return res.Answer, nil
}

// scale runs docs/protocol.md §6.2 in the critical section: start (or resume) the migration
// and store it PREPARING before touching Redis; provision the new shard
// range; activate it and store that. A failure after the first store leaves
// the migration PREPARING.
func (a *groupActor) scale(m *scaleMsg) (group.Migration, error) {
	if !a.core.Committed().Exists() {
		return group.Migration{}, groupNotFound()
	}
	s := a.c.opts.Settings
	res := a.commit(func(w *group.Group) group.Result[group.Migration] {
		return w.StartScale(group.InstantOf(a.c.opts.Clock()), s, m.Request, m.NewID)
	})
	if res.Err != nil || res.Answer.State != group.MigrationPreparing {
		return res.Answer, res.Err
	}
	if err := a.provision(res.Answer.ToShardCount); err != nil {
		return group.Migration{}, err
	}
	id := res.Answer.ReshardingID
	res = a.commit(func(w *group.Group) group.Result[group.Migration] {
		return w.ActivateScale(group.InstantOf(a.c.opts.Clock()), s, id)
	})
	return res.Answer, res.Err
}

// rollback runs docs/protocol.md §6.5 in the critical section.
func (a *groupActor) rollback(m *rollbackMsg) (group.Migration, error) {
	if !a.core.Committed().Exists() {
		return group.Migration{}, groupNotFound()
	}
	res := a.commit(func(w *group.Group) group.Result[group.Migration] {
		return w.Rollback(group.InstantOf(a.c.opts.Clock()), a.c.opts.Settings, m.ID, m.Request)
	})
	return res.Answer, res.Err
}

// checkScale answers whether a scale would start: it runs the start on a
// copy of committed and answers its refusal, if any.
func (a *groupActor) checkScale(m *checkScaleMsg) {
	if !a.core.Committed().Exists() {
		m.Reply.Answer(struct{}{}, groupNotFound())
		return
	}
	res := core.Check(a.core, func(g *group.Group) group.Result[group.Migration] {
		return g.StartScale(group.InstantOf(a.c.opts.Clock()), a.c.opts.Settings, m.Request, newMigrationID())
	})
	m.Reply.Answer(struct{}{}, res.Err)
}

// commit runs a migration command on working and stores its records
// (core.Commit); a refusal or a failed write is its error.
func (a *groupActor) commit(handler func(*group.Group) group.Result[group.Migration]) group.Result[group.Migration] {
	res := core.Run(a.core, handler)
	if res.Err != nil || len(res.Records) == 0 {
		return res
	}
	a.commitErr = nil
	a.core.Step(core.Commit{Now: a.c.opts.Clock(), Records: res.Records})
	a.drive()
	res.Err = a.commitErr
	return res
}

// critical runs try in the group's critical section: under the state mutex
// (Options.Locker), then as guarded. Admin commands use it: their steps
// between commits, like provisioning, are serialised with any other
// process that takes the mutex.
func critical[T any](a *groupActor, op string, try func() (T, error)) (T, error) {
	var zero T
	unlock, err := a.lock()
	if err != nil {
		return zero, a.fail(op, 1, err)
	}
	defer unlock()
	return guarded(a, op, try)
}

// guarded runs try, and again after each revision conflict (the core
// reloads) up to CommitAttempts times; the core decides (core.Fail), and
// any failure reverts working to committed. The store's compare-and-set
// and the ownership fence guard the write: this process is the group's
// only writer, so a conflict is a safety net, not the normal path.
func guarded[T any](a *groupActor, op string, try func() (T, error)) (T, error) {
	var zero T
	if err := a.ready(); err != nil { // a flush just before may have failed the group closed
		return zero, err
	}
	for attempt := 1; ; attempt++ {
		v, err := try()
		if err == nil {
			return v, nil
		}
		retry, err := a.core.Fail(op, attempt, err)
		a.drive() // reports, and the reload a retry asks for
		if !retry {
			return zero, err
		}
		if err := a.core.Failed(); err != nil {
			return zero, err
		}
	}
}

// fail reports a failure of an admin command outside its attempts (the
// state mutex) to the core and returns what to answer.
func (a *groupActor) fail(op string, attempt int, err error) error {
	_, err = a.core.Fail(op, attempt, err)
	a.drive()
	return err
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
