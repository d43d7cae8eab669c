package main

import (
	"flag"
	"fmt"
	"time"

	"github.com/redis-stream-coordinator/coordinator/client"
	"github.com/redis-stream-coordinator/coordinator/contract"
)

// history: why the shards of a group moved (docs/observability.md,
// "Assignment history").

func init() {
	register(command{
		name: "history", synopsis: "PREFIX GROUP [--shard N] [--since T]", minArgs: 2, maxArgs: 2,
		summary: "show why a group's shards moved: its assignment history",
		help: `Shows the assignment history of group GROUP of stream prefix PREFIX, oldest
first: each change of a shard's target owner with its time, group epoch,
the member it left and the one it joined ("-" for nobody) and its cause:
join, leave, lease-expired, fenced, work-rebalance (with the shard's weight
and the two members' loads), pause, resume, live-reset or scale; and each
handover of the group between coordinators, on a line of its own with
shard "-", from and to the coordinators.
--shard N shows one shard's entries (no handovers); --since T those at or
after T, an RFC 3339 time (2006-01-02T15:04:05Z) or a duration back from
now (90m).`,
		setup: func(fs *flag.FlagSet) func(*call) error {
			shard := fs.Int("shard", -1, "only this shard `index`")
			since := fs.String("since", "", "only entries at or after this `time` (RFC 3339, or a duration ago: 90m)")
			return func(c *call) error { return showHistory(c, *shard, *since) }
		},
	})
}

func showHistory(c *call, shard int, since string) error {
	var q client.HistoryQuery
	if shard >= 0 {
		q.Shard = &shard
	} else if shard != -1 {
		return usageErrorf("history: --shard %d: want a shard index (0 or more)", shard)
	}
	if since != "" {
		at, err := sinceTime(since, time.Now())
		if err != nil {
			return err
		}
		q.Since = at
	}
	coord, err := c.client()
	if err != nil {
		return err
	}
	h, err := coord.History(c.ctx, c.args[0], c.args[1], q)
	if err != nil {
		return err
	}
	return c.print(h, func(t *tableWriter) {
		t.row("AT", "EPOCH", "SHARD", "FROM", "TO", "CAUSE", "WEIGHTS")
		for _, e := range h.Entries {
			t.row(historyRow(e)...)
		}
	})
}

// historyRow is an entry's row: a handover names shard "-" and the
// coordinators ("coordinator ID"), every other entry its shard and members
// ("-" for nobody).
func historyRow(e contract.HistoryEntry) []any {
	shard, from, to := any(e.Shard), cmpOr(e.FromMember, "-"), cmpOr(e.ToMember, "-")
	if e.Shard == contract.GroupLevelShard {
		shard, from, to = "-", "coordinator "+e.FromCoordinator, "coordinator "+e.ToCoordinator
	}
	return []any{instantText(int64(e.At)), e.GroupEpoch, shard, from, to, e.Cause, weightsText(e.Weights)}
}

// sinceTime reads --since: an RFC 3339 time, or a duration before now.
func sinceTime(s string, now time.Time) (time.Time, error) {
	if at, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return at, nil
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, usageErrorf("history: --since %q: want an RFC 3339 time (2006-01-02T15:04:05Z) or a duration ago (90m)", s)
}

// weightsText renders a work-rebalance's weights, "-" for none.
func weightsText(w *contract.MoveWeights) string {
	if w == nil {
		return "-"
	}
	return fmt.Sprintf("shard=%g from=%g to=%g", w.ShardWeight, w.FromLoad, w.ToLoad)
}
