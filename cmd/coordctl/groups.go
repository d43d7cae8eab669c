package main

import (
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis-stream-coordinator/coordinator/client"
	"github.com/redis-stream-coordinator/coordinator/contract"
)

func init() {
	register(command{
		name: "groups list", synopsis: "", minArgs: 0, maxArgs: 0,
		summary: "list every group: state, shards, members, epochs, migration",
		help:    `Lists every consumer group of the coordinator (GET /monitoring/groups).`,
		setup:   func(*flag.FlagSet) func(*call) error { return groupsList },
	})
	register(command{
		name: "groups describe", synopsis: "PREFIX GROUP", minArgs: 2, maxArgs: 2,
		summary: "one group and its shards: length, lag, pending, owners",
		help: `Shows group GROUP of stream prefix PREFIX (state, epochs, migration) and,
when the coordinator has Redis, each shard's stream length, lag, pending
count, last delivered id and owners (GET …/offsets).`,
		setup: func(*flag.FlagSet) func(*call) error { return groupsDescribe },
	})
	register(command{
		name: "groups create", synopsis: "PREFIX GROUP [--shards N]", minArgs: 2, maxArgs: 2,
		summary: "create a group (create-groups creates many from a file)",
		help: `Creates consumer group GROUP of stream prefix PREFIX. Every group of a
prefix must have the prefix's shard count: producers route by it.
Creations are rate limited per user (api.rate-limit.max-group-creates,
default 60 a minute): see create-groups for many.`,
		setup: func(fs *flag.FlagSet) func(*call) error {
			shards := fs.Int("shards", 0, "initial shard `count` (default: the coordinator's defaults.initial-shard-count)")
			return func(c *call) error { return groupsCreate(c, *shards) }
		},
	})
	register(command{
		name: "groups delete", synopsis: "PREFIX GROUP [--force]", minArgs: 2, maxArgs: 2,
		summary: "delete a group's metadata (its streams stay)",
		help: `Deletes group GROUP of stream prefix PREFIX from the coordinator. Its
Redis streams and consumer groups are not touched. A group with live
members is refused (exit 5) unless --force.`,
		setup: func(fs *flag.FlagSet) func(*call) error {
			force := fs.Bool("force", false, "delete even while members are live")
			return func(c *call) error { return groupsDelete(c, *force) }
		},
	})
	register(command{
		name: "members", synopsis: "PREFIX GROUP", minArgs: 2, maxArgs: 2,
		summary: "a group's members: state, epoch, shards, workers, lease",
		help:    `Lists the member records of group GROUP of stream prefix PREFIX, every state.`,
		setup:   func(*flag.FlagSet) func(*call) error { return members },
	})
}

func groupsList(c *call) error {
	coord, err := c.client()
	if err != nil {
		return err
	}
	groups, err := coord.Groups(c.ctx)
	if err != nil {
		return err
	}
	return c.print(map[string]any{"groups": groups}, func(t *tableWriter) {
		t.row("PREFIX", "GROUP", "STATE", "SHARDS", "MEMBERS", "GROUP-EPOCH", "ASSIGNMENT-EPOCH", "MIGRATION")
		for _, g := range groups {
			t.row(g.StreamPrefix, g.ConsumerGroup, g.State, g.ShardCount, len(g.CurrentAssignmentSummary), g.GroupEpoch, g.AssignmentEpoch, migrationText(g.ActiveMigration))
		}
	})
}

func migrationText(m *contract.Migration) string {
	if m == nil {
		return "-"
	}
	return fmt.Sprintf("%s %d→%d %s", m.ReshardingID, m.FromShardCount, m.ToShardCount, m.State)
}

// description is the answer of groups describe: the group, and its
// shards' offsets when the coordinator reads them (nil otherwise, with
// OffsetsUnavailable saying why).
type description struct {
	Group              contract.GroupView `json:"group"`
	Offsets            *contract.Offsets  `json:"offsets"`
	OffsetsUnavailable string             `json:"offsetsUnavailable,omitempty"`
}

func groupsDescribe(c *call) error {
	coord, err := c.client()
	if err != nil {
		return err
	}
	p, g := c.args[0], c.args[1]
	var d description
	if d.Group, err = coord.Group(c.ctx, p, g); err != nil {
		return err
	}
	o, err := coord.Offsets(c.ctx, p, g)
	switch ae, _ := errors.AsType[*client.APIError](err); {
	case err == nil:
		d.Offsets = &o
	case ae != nil && (ae.ErrorCode == client.CodeRedisNotConfigured || ae.ErrorCode == client.CodeRedisUnavailable):
		d.OffsetsUnavailable = ae.Message
	default:
		return err
	}
	return c.print(d, func(t *tableWriter) {
		v := d.Group
		t.row("Group:", v.StreamPrefix+"/"+v.ConsumerGroup)
		t.row("State:", v.State)
		t.row("Shards:", v.ShardCount)
		t.row("Epochs:", fmt.Sprintf("group %d, assignment %d, metadata version %d", v.GroupEpoch, v.AssignmentEpoch, v.MetadataVersion))
		t.row("Migration:", migrationText(v.ActiveMigration))
		t.row("")
		if d.Offsets == nil {
			t.row("Shard offsets unavailable: " + d.OffsetsUnavailable)
			return
		}
		t.row("SHARD", "STREAM-KEY", "LENGTH", "LAG", "PENDING", "LAST-DELIVERED", "OWNERS")
		for _, s := range d.Offsets.Shards {
			t.row(s.Shard.ShardIndex, s.StreamKey, s.StreamLength, optional(s.Lag), s.PendingCount, optional(s.GroupLastDeliveredID), cmpOr(strings.Join(s.OwnerMemberIDs, ","), "-"))
		}
		t.row("TOTAL", "", d.Offsets.TotalStreamLength, optional(d.Offsets.TotalLag), d.Offsets.TotalPendingCount, "", "")
	})
}

func groupsCreate(c *call, shards int) error {
	coord, err := c.client()
	if err != nil {
		return err
	}
	v, err := coord.CreateGroupWith(c.ctx, c.args[0], c.args[1], c.createRequest(shards))
	if err != nil {
		return err
	}
	return c.print(v, func(t *tableWriter) {
		t.row(fmt.Sprintf("group %s/%s created with %d shards", v.StreamPrefix, v.ConsumerGroup, v.ShardCount))
	})
}

// createRequest is the create body with shards (0: the coordinator's
// default) and the call's operator and reason.
func (c *call) createRequest(shards int) contract.CreateRequest {
	req := contract.CreateRequest{RequestedBy: c.requestedBy}
	if c.reason != "" {
		req.Reason = &c.reason
	}
	if shards > 0 {
		req.InitialShardCount = &shards
	}
	return req
}

func groupsDelete(c *call, force bool) error {
	coord, err := c.client()
	if err != nil {
		return err
	}
	req := contract.DeleteRequest{RequestedBy: c.requestedBy, Reason: cmpOr(c.reason, "coordctl groups delete"), Force: force}
	v, err := coord.DeleteGroup(c.ctx, c.args[0], c.args[1], req)
	if err != nil {
		return err
	}
	return c.print(v, func(t *tableWriter) {
		t.row(fmt.Sprintf("group %s/%s deleted", v.StreamPrefix, v.ConsumerGroup))
	})
}

func members(c *call) error {
	coord, err := c.client()
	if err != nil {
		return err
	}
	list, err := coord.Members(c.ctx, c.args[0], c.args[1])
	if err != nil {
		return err
	}
	return c.print(map[string]any{"members": list}, func(t *tableWriter) {
		t.row("MEMBER", "STATE", "EPOCH", "CURRENT", "REVOKING", "WORKERS", "LAST-HEARTBEAT", "LEASE-UNTIL")
		for _, m := range list {
			t.row(m.MemberID, m.State, m.MemberEpoch, shardText(m.CurrentAssignment), shardText(m.Revoking),
				fmt.Sprintf("%d/%d", m.ActiveConsumerWorkers, m.RuntimeMaxConcurrency), instantText(int64(m.LastHeartbeatAt)), instantText(int64(m.MemberLeaseExpiresAt)))
		}
	})
}

// shardText renders a shard set (contract.ShardSet) as "0,1,3".
func shardText(s []int) string {
	if len(s) == 0 {
		return "-"
	}
	parts := make([]string, len(s))
	for i, v := range s {
		parts[i] = strconv.Itoa(v)
	}
	return strings.Join(parts, ",")
}

// instantText renders an instant (Unix milliseconds, contract.Instant) as
// RFC 3339, "-" for none.
func instantText(ms int64) string {
	if ms == 0 {
		return "-"
	}
	return time.UnixMilli(ms).UTC().Format(time.RFC3339)
}
