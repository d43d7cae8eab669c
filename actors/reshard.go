package actors

import (
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/messages"
)

// handleResharding serves the resharding commands and queries.
func (a *groupActor) handleResharding(msg messages.Request) {
	switch m := msg.(type) {
	case *messages.Scale:
		op := "scale-group"
		if m.StreamLevel {
			op = "scale-stream"
		}
		a.flush()
		answerAdmin(a, m.Reply, op, func() (group.Migration, error) { return a.scale(m) })
	case *messages.Rollback:
		a.flush()
		answerAdmin(a, m.Reply, "rollback-migration", func() (group.Migration, error) { return a.rollback(m) })
	case *messages.CheckScale:
		answerQuery(a, m.Reply, func(g *group.Group) (struct{}, error) { return struct{}{}, a.checkScale(g, m.Request) })
	}
}

// scale runs docs/protocol.md §6.2 in the critical section: start (or resume) the migration
// and store it PREPARING before touching Redis; provision the new shard
// range; activate it and store that. A failure after the first store leaves
// the migration PREPARING.
func (a *groupActor) scale(m *messages.Scale) (group.Migration, error) {
	if !a.committed.Exists() {
		return group.Migration{}, groupNotFound()
	}
	s := a.c.opts.Settings
	res := a.working.StartScale(group.InstantOf(a.c.opts.Clock()), s, m.Request, m.NewID)
	if err := a.commit(res); err != nil || res.Answer.State != group.MigrationPreparing {
		return res.Answer, err
	}
	if err := a.provision(res.Answer.ToShardCount); err != nil {
		return group.Migration{}, err
	}
	res = a.working.ActivateScale(group.InstantOf(a.c.opts.Clock()), s, res.Answer.ReshardingID)
	return res.Answer, a.commit(res)
}

// rollback runs docs/protocol.md §6.5 in the critical section.
func (a *groupActor) rollback(m *messages.Rollback) (group.Migration, error) {
	if !a.committed.Exists() {
		return group.Migration{}, groupNotFound()
	}
	res := a.working.Rollback(group.InstantOf(a.c.opts.Clock()), a.c.opts.Settings, m.ID, m.Request)
	return res.Answer, a.commit(res)
}

// checkScale runs the start of a scale on a copy of g and returns its
// refusal, if any.
func (a *groupActor) checkScale(g *group.Group, req group.ScaleRequest) error {
	return g.Clone().StartScale(group.InstantOf(a.c.opts.Clock()), a.c.opts.Settings, req, newMigrationID()).Err
}

// commit stores the records of res, which an admin command produced on
// working, and applies them to committed; a refusal is returned as is.
// Admin commands flush the batch before they run, so the records are the
// whole difference between working and committed.
func (a *groupActor) commit(res group.Result[group.Migration]) error {
	if res.Err != nil {
		return res.Err
	}
	recs := res.Records
	if len(recs) == 0 {
		return nil
	}
	a.records = recs
	defer func() { a.records = nil }()
	if _, err := a.writeBatch(); err != nil {
		return err
	}
	a.applyCommitted(recs)
	return nil
}

// drainedMigration asks Redis whether the removed shards of working's
// DRAINING scale-in migration are drained (docs/protocol.md §6.4) and returns its id when
// they are, "" otherwise. Without a drain check (Redis not configured)
// the domain needs no confirmation. A failed check is logged and retried
// on the next tick.
func (a *groupActor) drainedMigration() string {
	if !a.c.opts.Settings.DrainCheck {
		return ""
	}
	id, removed, ok := a.working.PendingDrain()
	if !ok {
		return ""
	}
	ctx, cancel := a.storeCtx()
	defer cancel()
	drained, err := a.c.opts.Drains.Drained(ctx, a.key.StreamPrefix, removed)
	if err != nil {
		a.c.opts.Logger.Warn("tick: drain check", "group", a.key.String(), "migration", id, "err", err)
		return ""
	}
	if !drained {
		return ""
	}
	return id
}
