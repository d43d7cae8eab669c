package actors

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"golang.org/x/sync/errgroup"

	"github.com/redis-stream-coordinator/coordinator/actors/core"
	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/persistence"
)

// The System's reads, run on the caller's goroutine. Each takes the
// group's published snapshot (snapshot.go) without entering the group
// actor's mailbox when it is current, so a read that starts after this
// coordinator answered a request sees that request's change. Otherwise one
// GetSnapshot round trip through the mailbox has the actor publish;
// concurrent readers of one version share it.
//
// A group placed on another coordinator (Options.Ownership) is read from
// the store instead (stored): the HTTP layer forwards a group's own reads
// to its owner, so only lists and dashboards read groups owned elsewhere;
// their member leases are as last stored, not as renewed since.

// groupsReadParallelism bounds the snapshot reads Groups runs at once.
const groupsReadParallelism = 16

// committed returns key's committed group, shared and immutable: callers
// must not modify it. A group that does not exist is contract.CodeGroupNotFound.
func (c *System) committed(ctx context.Context, key group.Key) (*group.Group, error) {
	var version uint64
	if v, ok := c.snapshots.Load(key); ok {
		cell := v.(*snapshotCell)
		version = cell.version.Load()
		if s := cell.current(); s != nil {
			return existing(s.g)
		}
	}
	if own := c.opts.Ownership; own != nil && !own.PlacedHere(key.StreamPrefix) {
		return c.stored(ctx, key)
	}
	// The flight is keyed by the version seen: a reader that saw a newer
	// version never joins a flight started before that version was
	// committed.
	flight := c.builds.DoChan(fmt.Sprintf("%q %q %d", key.StreamPrefix, key.ConsumerGroup, version), func() (any, error) {
		r := newReplyTo[*group.Group]()
		return ask(context.Background(), c, &snapshotMsg{routed: routed{Key: key}, Reply: r}, r, c.opts.RequestTimeout)
	})
	select {
	case res := <-flight:
		if res.Err != nil {
			return nil, res.Err
		}
		return existing(res.Val.(*group.Group))
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// stored reads key's group from the store, for a group owned elsewhere.
func (c *System) stored(ctx context.Context, key group.Key) (*group.Group, error) {
	sctx, cancel := context.WithTimeout(ctx, c.opts.StoreTimeout)
	defer cancel()
	doc, rev, err := c.opts.Store.Load(sctx, key)
	if errors.Is(err, persistence.ErrNotFound) {
		return nil, core.GroupNotFound()
	}
	if err != nil {
		return nil, fmt.Errorf("read group %s: %w", key, err)
	}
	g, err := persistence.Decode(doc, rev)
	if err != nil {
		return nil, fmt.Errorf("read group %s: %w", key, err)
	}
	return existing(g)
}

// existing returns g, or the not-found error when g does not exist.
func existing(g *group.Group) (*group.Group, error) {
	if !g.Exists() {
		return nil, core.GroupNotFound()
	}
	return g, nil
}

// Snapshot returns the committed group, shared and immutable (callers must
// not modify it), for read-only projections (the data-plane monitoring
// endpoints, Grafana rows, member metric series).
func (c *System) Snapshot(ctx context.Context, key group.Key) (*group.Group, error) {
	return c.committed(ctx, key)
}

// Group returns the committed GroupResponse.
func (c *System) Group(ctx context.Context, key group.Key) (contract.GroupView, error) {
	return project(ctx, c, key, (*group.Group).View)
}

// Members returns the committed member records sorted by id.
func (c *System) Members(ctx context.Context, key group.Key) ([]group.Member, error) {
	return project(ctx, c, key, (*group.Group).MemberList)
}

// Assignments returns the committed /assignments projection.
func (c *System) Assignments(ctx context.Context, key group.Key) (contract.AssignmentsView, error) {
	return project(ctx, c, key, (*group.Group).Assignments)
}

// Routing returns the committed producer routing metadata. With
// provisioning enabled it first provisions the group's shards (docs/protocol.md §2.4),
// outside the group's actor; a failure matches contract.ErrProvisioning.
func (c *System) Routing(ctx context.Context, key group.Key) (group.Routing, error) {
	rt, err := project(ctx, c, key, routing)
	if err != nil {
		return group.Routing{}, err
	}
	pctx, cancel := context.WithTimeout(ctx, c.opts.StoreTimeout)
	defer cancel()
	if err := provisionShards(pctx, c.opts.Provisioner, key, rt.ShardCount); err != nil {
		return group.Routing{}, err
	}
	return rt, nil
}

// Migration returns migration id of a group (endpoint #9);
// MIGRATION_NOT_FOUND when the group has none with that id.
func (c *System) Migration(ctx context.Context, key group.Key, id string) (group.Migration, error) {
	g, err := c.committed(ctx, key)
	if err != nil {
		return group.Migration{}, err
	}
	m, ok := g.Migration(id)
	if !ok {
		return group.Migration{}, group.Errorf(contract.CodeMigrationNotFound, "Migration %s not found", id)
	}
	return m, nil
}

// Migrations returns a group's migration history (endpoint #20).
func (c *System) Migrations(ctx context.Context, key group.Key) (group.Migrations, error) {
	return project(ctx, c, key, func(g *group.Group) group.Migrations {
		return group.Migrations{List: g.MigrationList(), ActiveReshardingID: g.ActiveReshardingID}
	})
}

// Groups returns the view of every stored group, sorted by stream prefix
// then consumer group. The groups are read concurrently (at most
// groupsReadParallelism at a time); a group deleted while the list is read
// is skipped.
func (c *System) Groups(ctx context.Context) ([]contract.GroupView, error) {
	keys, err := c.opts.Store.List(ctx)
	if err != nil {
		return nil, fmt.Errorf("list groups: %w", err)
	}
	slices.SortFunc(keys, compareKeys)
	views := make([]*contract.GroupView, len(keys))
	eg, ectx := errgroup.WithContext(ctx)
	eg.SetLimit(groupsReadParallelism)
	for i, k := range keys {
		eg.Go(func() error {
			v, err := c.Group(ectx, k)
			if ge, ok := errors.AsType[*group.Error](err); ok && ge.Code == contract.CodeGroupNotFound {
				return nil
			}
			if err != nil {
				return err
			}
			views[i] = &v
			return nil
		})
	}
	if err := eg.Wait(); err != nil {
		return nil, err
	}
	out := make([]contract.GroupView, 0, len(keys))
	for _, v := range views {
		if v != nil {
			out = append(out, *v)
		}
	}
	return out, nil
}

// project reads key's committed group and projects it.
func project[T any](ctx context.Context, c *System, key group.Key, view func(*group.Group) T) (T, error) {
	g, err := c.committed(ctx, key)
	if err != nil {
		var zero T
		return zero, err
	}
	return view(g), nil
}

// routing projects the producer routing metadata of g.
func routing(g *group.Group) group.Routing {
	return group.Routing{
		StreamPrefix:    g.StreamPrefix,
		ConsumerGroup:   g.ConsumerGroup,
		MetadataVersion: g.MetadataVersion,
		ShardCount:      g.ShardCount,
	}
}

// Settle waits until key's group actor has handled every message queued
// for it before the call (a tick sent by TickNow, say) and the commit
// those queued, so that the reads after it see their outcome. Reads
// themselves do not wait for queued work.
func (c *System) Settle(ctx context.Context, key group.Key) error {
	for range 2 { // the first round trip may queue a flush behind it
		r := newReplyTo[*group.Group]()
		if _, err := ask(ctx, c, &snapshotMsg{routed: routed{Key: key}, Reply: r}, r, c.opts.RequestTimeout); err != nil {
			return err
		}
	}
	return nil
}
