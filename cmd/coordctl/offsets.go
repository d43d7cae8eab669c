package main

import (
	"flag"
	"strconv"
	"strings"
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
)

func init() {
	register(command{
		name: "reset-offsets", synopsis: "PREFIX GROUP --to earliest|latest|ID|TIME|by:N [--shards 0,1] [--dry-run] [--force]",
		minArgs: 2, maxArgs: 2,
		summary: "move a group's position on its shards, live (needs Redis)",
		help: `Moves the Redis consumer group GROUP on the shards of stream prefix PREFIX
(XGROUP SETID) and shows each shard's position and lag before and after.
--to takes earliest, latest, an entry id (1718000000000-0: continue after
it), a time (RFC 3339, or Unix milliseconds: deliver entries from then
on) or by:N (N entries forward, or back when negative).
The reset is live: the group pauses the shards (their readers release
them), sets them once nobody reads them and grants them again; the command
waits until it is DONE or FAILED (docs/operations.md). --dry-run shows
what it would do (positions, entries delivered again or skipped, members
that would pause) and changes nothing. --force sets the positions at once,
racing any member reading the shards.
A coordinator without Redis answers REDIS_NOT_CONFIGURED (exit 7).`,
		setup: func(fs *flag.FlagSet) func(*call) error {
			to := fs.String("to", "", "target: earliest, latest, an entry `ID`, a time or by:N (required)")
			shards := fs.String("shards", "", "comma-separated shard `indexes` (default: every shard)")
			force := fs.Bool("force", false, "set the positions at once, racing members that read the shards")
			dryRun := fs.Bool("dry-run", false, "show what the reset would do; change nothing")
			return func(c *call) error { return resetOffsets(c, *to, *shards, *force, *dryRun) }
		},
	})
}

// resetTarget turns --to into the reset body's target fields.
func resetTarget(to string) (contract.OffsetReset, error) {
	switch strings.ToLower(to) {
	case "earliest":
		return contract.OffsetReset{To: contract.ResetToEarliest}, nil
	case "latest":
		return contract.OffsetReset{To: contract.ResetToLatest}, nil
	case "":
		return contract.OffsetReset{}, usageErrorf("reset-offsets: --to is required")
	}
	if n, ok := strings.CutPrefix(strings.ToLower(to), "by:"); ok {
		by, err := strconv.ParseInt(n, 10, 64)
		if err != nil || by == 0 {
			return contract.OffsetReset{}, usageErrorf("reset-offsets: --to %q: want by:N with N a non-zero number of entries", to)
		}
		return contract.OffsetReset{To: contract.ResetToBy, By: by}, nil
	}
	if strings.Contains(to, "-") && !strings.Contains(to, "T") {
		return contract.OffsetReset{To: contract.ResetToID, EntryID: to}, nil
	}
	if ms, err := strconv.ParseInt(to, 10, 64); err == nil {
		return contract.OffsetReset{To: contract.ResetToTimestamp, TimestampMs: ms}, nil
	}
	if at, err := time.Parse(time.RFC3339, to); err == nil {
		return contract.OffsetReset{To: contract.ResetToTimestamp, TimestampMs: at.UnixMilli()}, nil
	}
	return contract.OffsetReset{}, usageErrorf("reset-offsets: --to %q: want earliest, latest, an entry id, Unix milliseconds or an RFC 3339 time", to)
}

// shardList parses "0,1,3".
func shardList(s string) ([]int, error) {
	if s == "" {
		return nil, nil
	}
	var out []int
	for part := range strings.SplitSeq(s, ",") {
		i, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil || i < 0 {
			return nil, usageErrorf("--shards %q: want shard indexes such as 0,1,3", s)
		}
		out = append(out, i)
	}
	return out, nil
}

func resetOffsets(c *call, to, shardFlag string, force, dryRun bool) error {
	req, err := resetTarget(to)
	if err != nil {
		return err
	}
	if req.Shards, err = shardList(shardFlag); err != nil {
		return err
	}
	req.RequestedBy, req.Reason = c.requestedBy, c.reason
	if !force || dryRun {
		return liveResetOffsets(c, req, dryRun)
	}
	coord, err := c.client()
	if err != nil {
		return err
	}
	answer, err := coord.ResetOffsets(c.ctx, c.args[0], c.args[1], req)
	if err != nil {
		return err
	}
	return c.print(answer, func(t *tableWriter) {
		t.row("SHARD", "STREAM-KEY", "BEFORE", "LAG-BEFORE", "AFTER", "LAG-AFTER", "PENDING", "HELD-BY")
		for _, s := range answer.Shards {
			t.row(s.ShardIndex, s.StreamKey, optional(s.Before.LastDeliveredID), optional(s.Before.Lag),
				optional(s.After.LastDeliveredID), optional(s.After.Lag), optional(s.After.Pending), cmpOr(strings.Join(s.HeldBy, ","), "-"))
		}
	})
}
