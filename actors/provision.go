package actors

import (
	"context"
	"fmt"
	"strings"

	"github.com/redis-stream-coordinator/coordinator/actors/core"
	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
)

// Provisioner creates the Redis streams and consumer groups behind a
// group's shards (docs/protocol.md §6.6); streams.Provisioner implements it. Both methods
// must be safe for concurrent use.
type Provisioner interface {
	// Provision makes sure consumer group group exists on the stream of
	// every shard in shards, creating missing streams. It is idempotent.
	Provision(ctx context.Context, prefix, group string, shards []int) error
	// ExistingKeys returns which of the keys prefix, prefix:0, …,
	// prefix:n-1 exist.
	ExistingKeys(ctx context.Context, prefix string, n int) ([]string, error)
}

// DrainChecker reports whether the removed shards of a scale-in are drained
// in Redis (docs/protocol.md §6.4); streams.Observer implements it. It must be safe for
// concurrent use and must report a failure to observe as an error, never
// as drained.
type DrainChecker interface {
	// Drained reports whether every consumer group of the stream of every
	// shard in shards has pending 0 and a known lag of 0.
	Drained(ctx context.Context, prefix string, shards []int) (bool, error)
}

// provisionShards provisions shards 0..n-1 of key with p (docs/protocol.md §6.6); it does
// nothing when p is nil (provisioning disabled) or n is 0. Failures match
// contract.ErrProvisioning.
func provisionShards(ctx context.Context, p Provisioner, key group.Key, n int) error {
	if p == nil || n == 0 {
		return nil
	}
	if err := p.Provision(ctx, key.StreamPrefix, key.ConsumerGroup, contract.Range(0, n)); err != nil {
		return fmt.Errorf("provision group %s: %w: %w", key, outsideStore(contract.ErrProvisioning), err)
	}
	return nil
}

// provision provisions shards 0..n-1 of the actor's group, bounded by the
// store timeout.
func (a *groupActor) provision(n int) error {
	ctx, cancel := a.storeCtx()
	defer cancel()
	return provisionShards(ctx, a.c.opts.Provisioner, a.key, n)
}

// checkStreamKeys refuses (409 STREAM_PREFIX_ALREADY_EXISTS) to create the
// first group of a stream prefix with n shards while provisioning is
// enabled and Redis already holds key P or any of P:0..P:n-1 (docs/protocol.md §2.2 step
// 4). A stream-level create has already made sure no group of P exists.
func (a *groupActor) checkStreamKeys(n int, streamLevel bool) error {
	p := a.c.opts.Provisioner
	if p == nil {
		return nil
	}
	if !streamLevel {
		if used, err := a.prefixInUse(); err != nil || used {
			return err
		}
	}
	ctx, cancel := a.storeCtx()
	defer cancel()
	keys, err := p.ExistingKeys(ctx, a.key.StreamPrefix, n)
	if err != nil {
		return fmt.Errorf("check stream keys of %s: %w: %w", a.key.StreamPrefix, outsideStore(contract.ErrProvisioning), err)
	}
	if len(keys) > 0 {
		return group.Errorf(contract.CodeStreamPrefixAlreadyExists,
			"Stream prefix '%s' already has Redis key(s): %s", a.key.StreamPrefix, strings.Join(keys, ", "))
	}
	return nil
}

// provisionCreated provisions the shards of the group create has just
// stored (docs/protocol.md §2.2 step 6). On failure it deletes the group
// again through the core (a forced delete, guarded by its revision), so
// that a failed create leaves nothing behind; if that delete fails too
// the group stays stored and both errors are reported.
func (a *groupActor) provisionCreated(op core.Op) error {
	err := a.provision(a.core.Committed().ShardCount)
	if err == nil {
		return nil
	}
	undo := contract.DeleteRequest{RequestedBy: "coordinator", Reason: "provisioning the created group failed", Force: true}
	if d := a.step(op, core.Delete{Request: undo}); d.Err != nil {
		return fmt.Errorf("%w (deleting the group again failed: %v)", err, d.Err)
	}
	a.removed()
	return err
}
