package streams

import (
	"cmp"
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/redis-stream-coordinator/coordinator/contract"
)

// MaxPlanCount bounds the entries PlanReset counts between two positions;
// beyond it the count is MaxPlanCount and ResetPlan.CountCapped is set.
const MaxPlanCount = 100_000

// planPage is the XRANGE page size of the counts and relative moves.
const planPage = 1000

// ResetPlan is what a reset of one shard does: the group's position
// before, the last-delivered id it sets (absolute: "0" or "<ms>-<seq>",
// so setting it twice is the same as once), and how many entries are
// delivered again (between SetID and the position before) or skipped
// (between the position before and SetID).
type ResetPlan struct {
	Before      contract.GroupPosition `json:"before"`
	SetID       string                 `json:"setId"`
	Redelivered int64                  `json:"redelivered"`
	Skipped     int64                  `json:"skipped"`
	CountCapped bool                   `json:"countCapped"`
}

// PlanReset reads group's position on the stream key and resolves p
// against it and the stream: EARLIEST is "0", LATEST the stream's last
// entry, BY n the id n entries after (n > 0) or before (n < 0) the group's
// last-delivered id, stopping at the stream's ends. It changes nothing.
func (o *Operator) PlanReset(ctx context.Context, key, group string, p Position) (ResetPlan, error) {
	if err := p.Validate(); err != nil {
		return ResetPlan{}, err
	}
	before, err := o.GroupPosition(ctx, key, group)
	if err != nil {
		return ResetPlan{}, err
	}
	plan := ResetPlan{Before: before}
	from := "0"
	if before.LastDeliveredID != nil {
		from = *before.LastDeliveredID
	}
	if plan.SetID, err = o.targetID(ctx, key, from, p); err != nil {
		return ResetPlan{}, err
	}
	a, errA := parseID(from)
	b, errB := parseID(plan.SetID)
	if errA != nil || errB != nil {
		return plan, nil
	}
	var n int64
	switch c := a.compare(b); {
	case c > 0:
		n, err = o.countBetween(ctx, key, plan.SetID, from)
		plan.Redelivered = n
	case c < 0:
		n, err = o.countBetween(ctx, key, from, plan.SetID)
		plan.Skipped = n
	}
	plan.CountCapped = n >= MaxPlanCount
	return plan, err
}

// targetID resolves p to an absolute last-delivered id; from is the
// group's last-delivered id.
func (o *Operator) targetID(ctx context.Context, key, from string, p Position) (string, error) {
	switch p.Kind {
	case Latest:
		last, err := o.client.XRevRangeN(ctx, key, "+", "-", 1).Result()
		if err != nil || len(last) == 0 {
			return "0", replyOrNil(err)
		}
		return last[0].ID, nil
	case By:
		return o.moveBy(ctx, key, from, p.By)
	}
	return p.lastDeliveredID()
}

// moveBy returns the last-delivered id n entries after from (n > 0), or
// the one that delivers the n entries up to from again (n < 0).
func (o *Operator) moveBy(ctx context.Context, key, from string, n int64) (string, error) {
	id := from
	if n > 0 {
		for n > 0 {
			page, err := o.client.XRangeN(ctx, key, exclusive(id), "+", min(n, planPage)).Result()
			if err != nil {
				return "", fmt.Errorf("streams: XRANGE %s: %w", key, err)
			}
			if len(page) == 0 {
				break
			}
			id = page[len(page)-1].ID
			n -= int64(len(page))
		}
		return id, nil
	}
	for back := -n; ; {
		// The entries up to id, newest first: the one past the back-th is
		// the new last-delivered id.
		page, err := o.client.XRevRangeN(ctx, key, id, "-", min(back+1, planPage)).Result()
		if err != nil {
			return "", fmt.Errorf("streams: XREVRANGE %s: %w", key, err)
		}
		if int64(len(page)) > back {
			return page[back].ID, nil
		}
		if int64(len(page)) < min(back+1, planPage) {
			return "0", nil
		}
		back -= int64(len(page))
		id = exclusive(page[len(page)-1].ID)
	}
}

// exclusive is the XRANGE bound just past id ("-" for "0").
func exclusive(id string) string {
	if id == "0" || id == "0-0" {
		return "-"
	}
	return "(" + id
}

// countBetween counts the entries with ids in (lo, hi], at most MaxPlanCount.
func (o *Operator) countBetween(ctx context.Context, key, lo, hi string) (int64, error) {
	var n int64
	for n < MaxPlanCount {
		page, err := o.client.XRangeN(ctx, key, exclusive(lo), hi, planPage).Result()
		if err != nil {
			return n, fmt.Errorf("streams: XRANGE %s: %w", key, err)
		}
		n += int64(len(page))
		if len(page) < planPage {
			return n, nil
		}
		lo = page[len(page)-1].ID
	}
	return MaxPlanCount, nil
}

// SetID sets group's last-delivered id on the stream key to id (XGROUP
// SETID); when the stream or the group does not exist yet, the group is
// created there (XGROUP CREATE … MKSTREAM). Entries already delivered and
// pending stay pending.
func (o *Operator) SetID(ctx context.Context, key, group, id string) error {
	err := o.client.XGroupSetID(ctx, key, group, id).Err()
	if err != nil && isReply(err) {
		err = o.client.XGroupCreateMkStream(ctx, key, group, id).Err()
	}
	if err != nil {
		return fmt.Errorf("streams: setting %s of %s to %s: %w", group, key, id, err)
	}
	return nil
}

// AckPending acknowledges the entries pending in group's PEL on the stream
// key whose ids are above after ("" or "0": every one), in pages of
// planPage, and returns how many it acknowledged. A live reset runs it on a
// shard nobody reads (ResetPositions.SetID).
func (o *Operator) AckPending(ctx context.Context, key, group, after string) (int64, error) {
	var n int64
	start := exclusive(cmp.Or(after, "0"))
	for {
		page, err := o.client.XPendingExt(ctx, &redis.XPendingExtArgs{Stream: key, Group: group, Start: start, End: "+", Count: planPage}).Result()
		if err != nil {
			return n, replyOrNil(err)
		}
		if len(page) == 0 {
			return n, nil
		}
		ids := make([]string, len(page))
		for i, p := range page {
			ids[i] = p.ID
		}
		acked, err := o.client.XAck(ctx, key, group, ids...).Result()
		if err != nil {
			return n, fmt.Errorf("streams: XACK %s: %w", key, err)
		}
		n += acked
		if len(page) < planPage {
			return n, nil
		}
		start = exclusive(ids[len(ids)-1])
	}
}
