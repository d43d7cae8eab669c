package actors

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
)

// The System's resharding commands (docs/protocol.md §6), run on the caller's
// goroutine; the group actor's side is in admin.go.

// ScaleGroup scales one group to req's target shard count (docs/protocol.md §6.2, endpoint
// #8). It answers once the migration is ACTIVE (routing and targets have
// switched), or with the unstored noop migration for a same-count request.
// A provisioning failure (contract.ErrProvisioning) leaves the migration
// PREPARING; a retry with the same target resumes it.
func (c *System) ScaleGroup(ctx context.Context, key group.Key, req contract.ScaleRequest) (group.Migration, error) {
	return c.scale(ctx, key, req, false)
}

func (c *System) scale(ctx context.Context, key group.Key, req contract.ScaleRequest, streamLevel bool) (group.Migration, error) {
	r := newReplyTo[group.Migration]()
	msg := &scaleMsg{routed: routed{Key: key}, Request: req, NewID: newMigrationID(), StreamLevel: streamLevel, Reply: r}
	return ask(ctx, c, msg, r, c.opts.RequestTimeout)
}

// newMigrationID returns a fresh migration id, "reshard-<uuid4>" (docs/protocol.md §6.1).
func newMigrationID() string { return "reshard-" + uuid.NewString() }

// ScaleStream scales every group of stream prefix (docs/protocol.md §6.3, endpoint #3):
// STREAM_NOT_FOUND when no group has the prefix; then every group is
// pre-checked (an open correction round or an active migration other than
// a PREPARING one with the same target refuses the whole request before
// anything changes); then the groups are scaled one by one in consumer
// group order. There is no cross-group transaction: a failure midway
// leaves the groups before it scaled.
func (c *System) ScaleStream(ctx context.Context, prefix string, req contract.ScaleRequest) (group.StreamScale, error) {
	if err := group.ValidateScale(&req, c.opts.Settings); err != nil {
		return group.StreamScale{}, err
	}
	keys, err := c.streamGroups(ctx, prefix)
	if err != nil {
		return group.StreamScale{}, err
	}
	if len(keys) == 0 {
		return group.StreamScale{}, group.Errorf(contract.CodeStreamNotFound, "No consumer group is registered for stream prefix '%s'", prefix)
	}
	for _, key := range keys {
		r := newReplyTo[struct{}]()
		if _, err := ask(ctx, c, &checkScaleMsg{routed: routed{Key: key}, Request: req, Reply: r}, r, c.opts.RequestTimeout); err != nil {
			return group.StreamScale{}, err
		}
	}
	out := group.StreamScale{StreamPrefix: prefix, TargetShardCount: *req.TargetShardCount}
	for _, key := range keys {
		m, err := c.scale(ctx, key, req, true)
		if err != nil {
			return group.StreamScale{}, err
		}
		out.AffectedConsumerGroups = append(out.AffectedConsumerGroups, key.ConsumerGroup)
		out.Migrations = append(out.Migrations, m)
	}
	return out, nil
}

// streamGroups lists the stored groups of prefix, sorted by consumer group.
func (c *System) streamGroups(ctx context.Context, prefix string) ([]group.Key, error) {
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

// Rollback rolls migration id of a group back (docs/protocol.md §6.5, endpoint #10).
func (c *System) Rollback(ctx context.Context, key group.Key, id string, req contract.RollbackRequest) (group.Migration, error) {
	r := newReplyTo[group.Migration]()
	return ask(ctx, c, &rollbackMsg{routed: routed{Key: key}, ID: id, Request: req, Reply: r}, r, c.opts.RequestTimeout)
}
