package streams

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis-stream-coordinator/coordinator/group"
)

// ResetPositions performs the Redis steps of a group's live offset resets
// on the group's shard streams (actors.Positions): it plans each shard
// (PlanReset) and sets it (SetID), in the domain's types.
type ResetPositions struct{ op *Operator }

// NewResetPositions returns the live-reset steps over o.
func NewResetPositions(o *Operator) ResetPositions { return ResetPositions{op: o} }

// PlanReset reads the group's position on shard and resolves target
// against it. A target Redis cannot take wraps group.ErrResetTarget.
func (p ResetPositions) PlanReset(ctx context.Context, key group.Key, shard int, target group.ResetTarget) (group.ShardReset, error) {
	pos := Position{Kind: PositionKind(target.To), ID: target.EntryID, TimestampMs: target.TimestampMs, By: target.By}
	plan, err := p.op.PlanReset(ctx, StreamKey(key.StreamPrefix, shard), key.ConsumerGroup, pos)
	if errors.Is(err, ErrInvalidPosition) || errors.Is(err, ErrInvalidID) {
		err = fmt.Errorf("%w: %w", group.ErrResetTarget, err)
	}
	if err != nil {
		return group.ShardReset{}, err
	}
	before := group.ShardPosition(plan.Before)
	return group.ShardReset{ShardIndex: shard, SetID: plan.SetID, Before: &before}, nil
}

// SetID sets the group's last-delivered id on shard, acknowledges what is
// pending there (AckPending: the group goes on from the id set, nothing
// from before it is claimed again) and reads its position after.
func (p ResetPositions) SetID(ctx context.Context, key group.Key, shard int, id string) (*group.ShardPosition, error) {
	k := StreamKey(key.StreamPrefix, shard)
	if err := p.op.SetID(ctx, k, key.ConsumerGroup, id); err != nil {
		return nil, err
	}
	if _, err := p.op.AckPending(ctx, k, key.ConsumerGroup); err != nil {
		return nil, err
	}
	pos, err := p.op.GroupPosition(ctx, k, key.ConsumerGroup)
	if err != nil {
		return nil, err
	}
	after := group.ShardPosition(pos)
	return &after, nil
}
