package main

import (
	"flag"
	"strings"
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
)

// The live group operations (docs/operations.md): pause, resume, the live
// offset reset behind reset-offsets, and resets.

func init() {
	for _, resume := range []bool{false, true} {
		name, summary, help := "pause", "pause shards of a group: revoked from their readers, granted to nobody",
			`Pauses shards of group GROUP of stream prefix PREFIX: each is revoked from its
reader through the protocol (as in a rebalance) and granted to nobody until
resumed. The pause is stored with the group. Shows the paused shards and
the members still releasing one.`
		if resume {
			name, summary, help = "resume", "resume paused shards of a group", `Resumes paused shards of group GROUP of stream prefix PREFIX: they are
granted again. A shard a live reset holds stays paused until it ends.`
		}
		register(command{
			name: name, synopsis: "PREFIX GROUP --shards 0,1", minArgs: 2, maxArgs: 2, summary: summary, help: help,
			setup: func(fs *flag.FlagSet) func(*call) error {
				shards := fs.String("shards", "", "comma-separated shard `indexes` (required)")
				return func(c *call) error { return pauseShards(c, *shards, resume) }
			},
		})
	}
	register(command{
		name: "resets", synopsis: "PREFIX GROUP [RESET-ID]", minArgs: 2, maxArgs: 3,
		summary: "list a group's live offset resets, or show one",
		help: `Lists the live offset resets of group GROUP of stream prefix PREFIX (the
last 10), or shows RESET-ID with each shard's position before and after.`,
		setup: func(*flag.FlagSet) func(*call) error { return showResets },
	})
}

func pauseShards(c *call, shardFlag string, resume bool) error {
	shards, err := shardList(shardFlag)
	if err != nil {
		return err
	}
	if len(shards) == 0 {
		return usageErrorf("--shards is required")
	}
	coord, err := c.client()
	if err != nil {
		return err
	}
	req := contract.PauseRequest{Shards: shards, RequestedBy: c.requestedBy, Reason: c.reason}
	call := coord.PauseShards
	if resume {
		call = coord.ResumeShards
	}
	v, err := call(c.ctx, c.args[0], c.args[1], req)
	if err != nil {
		return err
	}
	return c.print(v, func(t *tableWriter) {
		t.row("PAUSED", "RESET-HELD", "STILL-RELEASING")
		var releasing []string
		for id, s := range v.Pausing {
			releasing = append(releasing, id+"="+shardText(s))
		}
		t.row(shardText(v.PausedShards), shardText(v.ResetShards), cmpOr(strings.Join(releasing, " "), "-"))
	})
}

// liveResetOffsets runs reset-offsets without --force: a dry run, or a
// live reset followed until it is DONE or FAILED.
func liveResetOffsets(c *call, req contract.OffsetReset, dryRun bool) error {
	coord, err := c.client()
	if err != nil {
		return err
	}
	if dryRun {
		p, err := coord.PreviewReset(c.ctx, c.args[0], c.args[1], req)
		if err != nil {
			return err
		}
		return c.print(p, func(t *tableWriter) {
			t.row("SHARD", "STREAM-KEY", "BEFORE", "AFTER", "REDELIVERED", "SKIPPED", "WOULD-PAUSE")
			for _, s := range p.Shards {
				t.row(s.ShardIndex, s.StreamKey, optional(s.Before.LastDeliveredID), s.After.LastDeliveredID,
					s.Redelivered, s.Skipped, cmpOr(strings.Join(s.WouldPause, ","), "-"))
			}
		})
	}
	r, err := coord.LiveReset(c.ctx, c.args[0], c.args[1], req)
	if err != nil {
		return err
	}
	if r, err = coord.WaitReset(c.ctx, c.args[0], c.args[1], r.ResetID, 200*time.Millisecond); err != nil {
		return err
	}
	return printReset(c, r)
}

func showResets(c *call) error {
	coord, err := c.client()
	if err != nil {
		return err
	}
	if len(c.args) == 3 {
		r, err := coord.Reset(c.ctx, c.args[0], c.args[1], c.args[2])
		if err != nil {
			return err
		}
		return printReset(c, r)
	}
	list, err := coord.Resets(c.ctx, c.args[0], c.args[1])
	if err != nil {
		return err
	}
	return c.print(list, func(t *tableWriter) {
		t.row("RESET-ID", "STATE", "TO", "SHARDS", "REQUESTED-BY", "CREATED")
		for _, r := range list {
			shards := make([]int, len(r.Shards))
			for i, s := range r.Shards {
				shards[i] = s.ShardIndex
			}
			t.row(r.ResetID, r.State, r.Target.To, shardText(shards), r.RequestedBy, r.CreatedAt)
		}
	})
}

// printReset shows a live reset's state and each shard before and after.
func printReset(c *call, r contract.LiveReset) error {
	return c.print(r, func(t *tableWriter) {
		t.row("RESET-ID", "STATE", "SHARD", "PAUSED-FROM", "BEFORE", "LAG-BEFORE", "AFTER", "LAG-AFTER", "PENDING")
		for _, s := range r.Shards {
			before, after := s.Before, s.After
			if before == nil {
				before = &contract.GroupPosition{}
			}
			if after == nil {
				after = &contract.GroupPosition{}
			}
			t.row(r.ResetID, r.State, s.ShardIndex, cmpOr(strings.Join(s.PausedFrom, ","), "-"), optional(before.LastDeliveredID),
				optional(before.Lag), optional(after.LastDeliveredID), optional(after.Lag), optional(after.Pending))
		}
		if r.Error != "" {
			t.row(r.ResetID, r.State, "error:", r.Error)
		}
	})
}
