package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"strings"

	"github.com/redis-stream-coordinator/coordinator/client"
	"github.com/redis-stream-coordinator/coordinator/contract"
)

func init() {
	register(command{
		name: "dead-letters", synopsis: "PREFIX GROUP [list | redrive ID... | delete ID...]", minArgs: 2, maxArgs: -1,
		summary: "list, redrive or delete a group's dead letters (needs Redis)",
		help: `list (the default) shows the newest dead letters of group GROUP in the
dead-letter stream of prefix PREFIX (PREFIX-dead-letter, the only one the
coordinator reads): those GROUP dead-lettered and those that name no group
(listed only: they cannot be redriven or deleted);
--all-groups lists every group's. redrive appends the entries with the
given ids to the shards they came from and removes them from the
dead-letter stream; delete removes them. An id that fails (another
group's, not found) is listed with its error and the exit code is 1.
A coordinator without Redis answers REDIS_NOT_CONFIGURED (exit 7).`,
		setup: func(fs *flag.FlagSet) func(*call) error {
			limit := fs.Int("limit", 100, "list at most `N` entries")
			stream := fs.String("stream", "", "the dead-letter stream `NAME` (PREFIX-dead-letter, the only one accepted)")
			allGroups := fs.Bool("all-groups", false, "list the entries of every group sharing the stream")
			return func(c *call) error {
				return deadLetters(c, client.DeadLetterQuery{Limit: *limit, Stream: *stream, AllGroups: *allGroups})
			}
		},
	})
}

func deadLetters(c *call, q client.DeadLetterQuery) error {
	p, g := c.args[0], c.args[1]
	action := "list"
	if len(c.args) > 2 {
		action = c.args[2]
	}
	ids := c.args[min(3, len(c.args)):]
	switch action {
	case "list":
		if len(ids) > 0 {
			return usageErrorf("dead-letters list takes no ids")
		}
		return deadLetterList(c, p, g, q)
	case "redrive", "delete":
		if q.AllGroups {
			return usageErrorf("dead-letters %s: --all-groups only lists (a group acts on its own entries)", action)
		}
		if len(ids) == 0 {
			return usageErrorf("dead-letters %s: want at least one id", action)
		}
		return deadLetterAction(c, p, g, action, contract.DeadLetterAction{IDs: ids, Stream: q.Stream, RequestedBy: c.requestedBy, Reason: c.reason})
	}
	return usageErrorf("dead-letters %s: want list, redrive or delete", action)
}

func deadLetterList(c *call, p, g string, q client.DeadLetterQuery) error {
	coord, err := c.client()
	if err != nil {
		return err
	}
	page, err := coord.DeadLetters(c.ctx, p, g, q)
	if err != nil {
		return err
	}
	return c.print(page, func(t *tableWriter) {
		t.row("ID", "GROUP", "SHARD", "SOURCE-ID", "DELIVERIES", "ERROR", "FIELDS")
		for _, d := range page.Entries {
			fields, _ := json.Marshal(d.Fields)
			t.row(d.ID, cmpOr(d.Group, "-"), optional(d.SourceShard), d.SourceID, d.Deliveries, cmpOr(d.Error, "-"), string(fields))
		}
	})
}

func deadLetterAction(c *call, p, g, action string, req contract.DeadLetterAction) error {
	coord, err := c.client()
	if err != nil {
		return err
	}
	do := coord.RedriveDeadLetters
	if action == "delete" {
		do = coord.DeleteDeadLetters
	}
	answer, err := do(c.ctx, p, g, req)
	if err != nil {
		return err
	}
	failed := 0
	err = c.print(answer, func(t *tableWriter) {
		t.row("ID", "STATUS", "TO", "NEW-ID", "ERROR")
		for _, r := range answer.Results {
			t.row(r.ID, r.Status, cmpOr(r.Stream, "-"), cmpOr(r.NewID, "-"), cmpOr(strings.TrimSpace(r.ErrorCode+" "+r.Message), "-"))
		}
	})
	for _, r := range answer.Results {
		if r.Status == "FAILED" {
			failed++
		}
	}
	if err == nil && failed > 0 {
		err = &exitError{exitFailure, fmt.Sprintf("%d of %d dead letters failed", failed, len(answer.Results))}
	}
	return err
}
