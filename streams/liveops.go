package streams

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis-stream-coordinator/coordinator/contract"
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
	plan, err := p.op.PlanReset(ctx, contract.StreamKey(key.StreamPrefix, shard), key.ConsumerGroup, positionOf(target))
	if err = targetError(err); err != nil {
		return group.ShardReset{}, err
	}
	before := plan.Before
	return group.ShardReset{ShardIndex: shard, SetID: plan.SetID, Before: &before}, nil
}

// SetID sets the group's last-delivered id on shard s.ShardIndex to
// s.SetID, acknowledges the pending entries the group reads again or skips
// (every one when the reset moves forward, since the position before
// s.Before; those above s.SetID when it moves back: the entries reads from
// s.SetID deliver again, not claimed a second time, while older ones never
// acknowledged stay pending and are claimed as after any change of reader)
// and reads the position after.
func (p ResetPositions) SetID(ctx context.Context, key group.Key, s group.ShardReset) (*contract.GroupPosition, error) {
	k := contract.StreamKey(key.StreamPrefix, s.ShardIndex)
	if err := p.op.SetID(ctx, k, key.ConsumerGroup, s.SetID); err != nil {
		return nil, err
	}
	after := "" // forward: every pending entry is at or before the id set
	if movesBack(s) {
		after = s.SetID
	}
	if _, err := p.op.AckPending(ctx, k, key.ConsumerGroup, after); err != nil {
		return nil, err
	}
	pos, err := p.op.GroupPosition(ctx, k, key.ConsumerGroup)
	if err != nil {
		return nil, err
	}
	return &pos, nil
}

// ForceSet sets the group's position on shard to target at once (XGROUP
// SETID, resolved against the stream as it is now: SetPosition), racing
// any member reading the shard, and returns the position before and
// after: a forced offset reset, which the runtime performs
// (actors.System.ForceReset). It acknowledges nothing. A target
// Redis cannot take wraps group.ErrResetTarget.
func (p ResetPositions) ForceSet(ctx context.Context, key group.Key, shard int, target group.ResetTarget) (before, after contract.GroupPosition, err error) {
	k := contract.StreamKey(key.StreamPrefix, shard)
	if before, err = p.op.GroupPosition(ctx, k, key.ConsumerGroup); err != nil {
		return before, after, err
	}
	if err = targetError(p.op.SetPosition(ctx, k, key.ConsumerGroup, positionOf(target))); err != nil {
		return before, after, err
	}
	after, err = p.op.GroupPosition(ctx, k, key.ConsumerGroup)
	return before, after, err
}

// Preview reads the group's position on shard and what a reset to target
// would do there (PlanReset: the id it would set, the entries it would
// deliver again or skip), changing nothing: a reset's dry run
// (actors.System.PreviewReset). A target Redis cannot take wraps
// group.ErrResetTarget.
func (p ResetPositions) Preview(ctx context.Context, key group.Key, shard int, target group.ResetTarget) (contract.ResetPreviewShard, error) {
	k := contract.StreamKey(key.StreamPrefix, shard)
	plan, err := p.op.PlanReset(ctx, k, key.ConsumerGroup, positionOf(target))
	if err = targetError(err); err != nil {
		return contract.ResetPreviewShard{}, err
	}
	return contract.ResetPreviewShard{ShardIndex: shard, StreamKey: k, Before: plan.Before, After: contract.PreviewedAfter{LastDeliveredID: plan.SetID},
		Redelivered: plan.Redelivered, Skipped: plan.Skipped, CountCapped: plan.CountCapped}, nil
}

// positionOf is the Position of a reset's target.
func positionOf(t group.ResetTarget) Position {
	return Position{Kind: PositionKind(t.To), ID: t.EntryID, TimestampMs: t.TimestampMs, By: t.By}
}

// targetError marks err, when the reset's target is what Redis refused
// (an invalid position or id), as group.ErrResetTarget.
func targetError(err error) error {
	if errors.Is(err, ErrInvalidPosition) || errors.Is(err, ErrInvalidID) {
		return fmt.Errorf("%w: %w", group.ErrResetTarget, err)
	}
	return err
}

// movesBack reports whether s sets an id below its position before.
func movesBack(s group.ShardReset) bool {
	if s.Before == nil || s.Before.LastDeliveredID == nil {
		return false
	}
	before, err1 := parseID(*s.Before.LastDeliveredID)
	to, err2 := parseID(s.SetID)
	return err1 == nil && err2 == nil && to.compare(before) < 0
}
