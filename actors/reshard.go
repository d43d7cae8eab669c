package actors

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/messages"
)

// ScaleGroup scales one group to req's target shard count (§6.2, endpoint
// #8). It answers once the migration is ACTIVE (routing and targets have
// switched), or with the unstored noop migration for a same-count request.
// A provisioning failure (messages.ErrProvisioning) leaves the migration
// PREPARING; a retry with the same target resumes it.
func (c *Coordinator) ScaleGroup(ctx context.Context, key group.Key, req group.ScaleRequest) (group.Migration, error) {
	return c.scale(ctx, key, req, false)
}

func (c *Coordinator) scale(ctx context.Context, key group.Key, req group.ScaleRequest, streamLevel bool) (group.Migration, error) {
	r := messages.NewReplyTo[group.Migration]()
	msg := &messages.Scale{Routed: messages.Routed{Key: key}, Request: req, NewID: newMigrationID(), StreamLevel: streamLevel, Reply: r}
	return ask(ctx, c, msg, r)
}

// newMigrationID returns a fresh migration id, "reshard-<uuid4>" (§6.1).
func newMigrationID() string { return "reshard-" + uuid.NewString() }

// ScaleStream scales every group of stream prefix (§6.3, endpoint #3):
// STREAM_NOT_FOUND when no group has the prefix; then every group is
// pre-checked (an open correction round or an active migration other than
// a PREPARING one with the same target refuses the whole request before
// anything changes); then the groups are scaled one by one in consumer
// group order. There is no cross-group transaction: a failure midway
// leaves the groups before it scaled.
func (c *Coordinator) ScaleStream(ctx context.Context, prefix string, req group.ScaleRequest) (messages.StreamScale, error) {
	if err := group.ValidateScale(&req, c.opts.Settings); err != nil {
		return messages.StreamScale{}, err
	}
	keys, err := c.streamGroups(ctx, prefix)
	if err != nil {
		return messages.StreamScale{}, err
	}
	if len(keys) == 0 {
		return messages.StreamScale{}, group.Errorf(group.CodeStreamNotFound, "No consumer group is registered for stream prefix '%s'", prefix)
	}
	for _, key := range keys {
		r := messages.NewReplyTo[struct{}]()
		if _, err := ask(ctx, c, &messages.CheckScale{Routed: messages.Routed{Key: key}, Request: req, Reply: r}, r); err != nil {
			return messages.StreamScale{}, err
		}
	}
	out := messages.StreamScale{StreamPrefix: prefix, TargetShardCount: *req.TargetShardCount}
	for _, key := range keys {
		m, err := c.scale(ctx, key, req, true)
		if err != nil {
			return messages.StreamScale{}, err
		}
		out.AffectedConsumerGroups = append(out.AffectedConsumerGroups, key.ConsumerGroup)
		out.Migrations = append(out.Migrations, m)
	}
	return out, nil
}

// streamGroups lists the stored groups of prefix, sorted by consumer group.
func (c *Coordinator) streamGroups(ctx context.Context, prefix string) ([]group.Key, error) {
	sctx, cancel := context.WithTimeout(ctx, c.opts.StoreTimeout)
	defer cancel()
	all, err := c.opts.Store.List(sctx)
	if err != nil {
		return nil, fmt.Errorf("list groups: %w", err)
	}
	var keys []group.Key
	for _, k := range all {
		if k.StreamPrefix == prefix {
			keys = append(keys, k)
		}
	}
	return keys, nil
}

// Rollback rolls migration id of a group back (§6.5, endpoint #10).
func (c *Coordinator) Rollback(ctx context.Context, key group.Key, id string, req group.RollbackRequest) (group.Migration, error) {
	r := messages.NewReplyTo[group.Migration]()
	return ask(ctx, c, &messages.Rollback{Routed: messages.Routed{Key: key}, ID: id, Request: req, Reply: r}, r)
}

// Migration returns migration id of a group (endpoint #9);
// MIGRATION_NOT_FOUND when the group has none with that id.
func (c *Coordinator) Migration(ctx context.Context, key group.Key, id string) (group.Migration, error) {
	r := messages.NewReplyTo[group.Migration]()
	return ask(ctx, c, &messages.GetMigration{Routed: messages.Routed{Key: key}, ID: id, Reply: r}, r)
}

// Migrations returns a group's migration history (endpoint #20).
func (c *Coordinator) Migrations(ctx context.Context, key group.Key) (messages.Migrations, error) {
	r := messages.NewReplyTo[messages.Migrations]()
	return ask(ctx, c, &messages.GetMigrations{Routed: messages.Routed{Key: key}, Reply: r}, r)
}

// Snapshot returns a private copy of the committed group, for read-only
// projections (the data-plane monitoring endpoints).
func (c *Coordinator) Snapshot(ctx context.Context, key group.Key) (*group.Group, error) {
	r := messages.NewReplyTo[*group.Group]()
	return ask(ctx, c, &messages.GetSnapshot{Routed: messages.Routed{Key: key}, Reply: r}, r)
}

// handleResharding serves the resharding commands and queries.
func (a *groupActor) handleResharding(msg messages.Request) {
	switch m := msg.(type) {
	case *messages.Scale:
		op := "scale-group"
		if m.StreamLevel {
			op = "scale-stream"
		}
		a.flush()
		m.Reply.Answer(critical(a, op, true, func() (group.Migration, error) { return a.scale(m) }))
	case *messages.Rollback:
		a.flush()
		m.Reply.Answer(critical(a, "rollback-migration", true, func() (group.Migration, error) { return a.rollback(m) }))
	case *messages.CheckScale:
		answerQuery(a, m.Reply, func(g *group.Group) (struct{}, error) { return struct{}{}, a.checkScale(g, m.Request) })
	case *messages.GetMigration:
		answerQuery(a, m.Reply, func(g *group.Group) (group.Migration, error) { return migration(g, m.ID) })
	case *messages.GetMigrations:
		answerRead(a, m.Reply, migrations)
	case *messages.GetSnapshot:
		answerRead(a, m.Reply, (*group.Group).Clone)
	}
}

// scale runs §6.2 in the critical section: start (or resume) the migration
// and store it PREPARING before touching Redis; provision the new shard
// range; activate it and store that. A failure after the first store leaves
// the migration PREPARING.
func (a *groupActor) scale(m *messages.Scale) (group.Migration, error) {
	if !a.committed.Exists() {
		return group.Migration{}, groupNotFound()
	}
	s := a.c.opts.Settings
	mig, recs, err := a.working.StartScale(group.InstantOf(a.c.opts.Clock()), s, m.Request, m.NewID)
	if err == nil {
		err = a.commit(recs)
	}
	if err != nil || mig.State != group.MigrationPreparing {
		return mig, err
	}
	if err := a.provision(mig.ToShardCount); err != nil {
		return group.Migration{}, err
	}
	mig, recs, err = a.working.ActivateScale(group.InstantOf(a.c.opts.Clock()), s, mig.ReshardingID)
	if err == nil {
		err = a.commit(recs)
	}
	return mig, err
}

// rollback runs §6.5 in the critical section.
func (a *groupActor) rollback(m *messages.Rollback) (group.Migration, error) {
	if !a.committed.Exists() {
		return group.Migration{}, groupNotFound()
	}
	mig, recs, err := a.working.Rollback(group.InstantOf(a.c.opts.Clock()), a.c.opts.Settings, m.ID, m.Request)
	if err == nil {
		err = a.commit(recs)
	}
	return mig, err
}

// checkScale runs the start of a scale on a copy of g and returns its
// refusal, if any.
func (a *groupActor) checkScale(g *group.Group, req group.ScaleRequest) error {
	_, _, err := g.Clone().StartScale(group.InstantOf(a.c.opts.Clock()), a.c.opts.Settings, req, newMigrationID())
	return err
}

// commit stores recs, which an admin command produced on working, and
// applies them to committed. Admin commands flush the batch before they
// run, so recs are the whole difference between working and committed.
func (a *groupActor) commit(recs []group.Record) error {
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
// DRAINING scale-in migration are drained (§6.4) and returns its id when
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

// confirmDrain applies the drain confirmation a tick entry carries.
func (a *groupActor) confirmDrain(e *entry) []group.Record {
	if e.drained == "" {
		return nil
	}
	return a.working.ConfirmDrain(group.InstantOf(e.now), a.c.opts.Settings, e.drained)
}

// migration looks migration id up in g.
func migration(g *group.Group, id string) (group.Migration, error) {
	m, ok := g.Migration(id)
	if !ok {
		return group.Migration{}, group.Errorf(group.CodeMigrationNotFound, "Migration %s not found", id)
	}
	return m, nil
}

// migrations projects g's migration history.
func migrations(g *group.Group) messages.Migrations {
	return messages.Migrations{List: g.MigrationList(), ActiveReshardingID: g.ActiveReshardingID}
}
