package main

import (
	"flag"
	"fmt"

	"github.com/redis-stream-coordinator/coordinator/contract"
)

// routingNote says which shard count producers follow; both scale
// commands print it in their help.
const routingNote = `Producers write each key once, to the shard the routing of ONE group gives
(the Go client's ProducerConfig.Group); every group of the prefix reads
the same streams P:0…P:n-1, so their shard counts must agree. scale-stream
moves every group of the prefix together, and producers follow at their
next routing refresh. scale moves one group alone: unless the producers
read that very group's routing, its new shards receive no new entries
(and after a scale-in it no longer reads shards producers still write).`

func init() {
	register(command{
		name: "scale-stream", synopsis: "PREFIX --shards N", minArgs: 1, maxArgs: 1,
		summary: "scale every group of a stream prefix to N shards (what producers follow)",
		help: `Starts a migration of every group of stream prefix PREFIX to N shards
(POST /streams/{PREFIX}/scale) and lists them. A group whose migration to
another count is under way is refused (exit 5) before any group moves.

` + routingNote,
		setup: func(fs *flag.FlagSet) func(*call) error {
			shards := fs.Int("shards", -1, "target shard `count` (required)")
			return func(c *call) error { return scaleStream(c, *shards) }
		},
	})
	register(command{
		name: "scale", synopsis: "PREFIX GROUP --shards N", minArgs: 2, maxArgs: 2,
		summary: "scale one group to N shards (see scale-stream)",
		help: `Starts a migration of group GROUP of stream prefix PREFIX alone to N
shards (POST …/groups/{GROUP}/scale).

` + routingNote,
		setup: func(fs *flag.FlagSet) func(*call) error {
			shards := fs.Int("shards", -1, "target shard `count` (required)")
			return func(c *call) error { return scale(c, *shards) }
		},
	})
	register(command{
		name: "rollback", synopsis: "PREFIX GROUP [MIGRATION-ID]", minArgs: 2, maxArgs: 3,
		summary: "roll back a group's migration (default: the active one)",
		help: `Rolls back migration MIGRATION-ID of group GROUP of stream prefix PREFIX,
by default its active migration. Only an ACTIVE migration can be rolled
back (else exit 5).`,
		setup: func(*flag.FlagSet) func(*call) error { return rollback },
	})
}

// scaleRequest is the scale body to shards with the call's operator and
// reason (what when none is given).
func (c *call) scaleRequest(shards int, what string) (contract.ScaleRequest, error) {
	if shards < 0 {
		return contract.ScaleRequest{}, usageErrorf("%s: --shards N is required", c.cmd.name)
	}
	reason := cmpOr(c.reason, what)
	return contract.ScaleRequest{TargetShardCount: &shards, RequestedBy: c.requestedBy, Reason: &reason}, nil
}

func scaleStream(c *call, shards int) error {
	req, err := c.scaleRequest(shards, "coordctl scale-stream")
	if err != nil {
		return err
	}
	coord, err := c.client()
	if err != nil {
		return err
	}
	s, err := coord.ScaleStreamWith(c.ctx, c.args[0], req)
	if err != nil {
		return err
	}
	return c.print(s, func(t *tableWriter) {
		t.row("GROUP", "MIGRATION", "FROM", "TO", "STATE")
		for i, g := range s.AffectedConsumerGroups {
			if i < len(s.Migrations) {
				m := s.Migrations[i]
				t.row(g, m.ReshardingID, m.FromShardCount, m.ToShardCount, m.State)
			}
		}
	})
}

func scale(c *call, shards int) error {
	req, err := c.scaleRequest(shards, "coordctl scale")
	if err != nil {
		return err
	}
	coord, err := c.client()
	if err != nil {
		return err
	}
	m, err := coord.ScaleGroup(c.ctx, c.args[0], c.args[1], req)
	if err != nil {
		return err
	}
	return c.print(m, func(t *tableWriter) { migrationTable(t, m) })
}

func migrationTable(t *tableWriter, m contract.Migration) {
	t.row("MIGRATION", "FROM", "TO", "STATE")
	t.row(m.ReshardingID, m.FromShardCount, m.ToShardCount, m.State)
}

func rollback(c *call) error {
	coord, err := c.client()
	if err != nil {
		return err
	}
	p, g := c.args[0], c.args[1]
	var id string
	if len(c.args) == 3 {
		id = c.args[2]
	} else {
		v, err := coord.Group(c.ctx, p, g)
		if err != nil {
			return err
		}
		if v.ActiveMigration == nil {
			return &exitError{exitConflict, fmt.Sprintf("group %s/%s has no active migration", p, g)}
		}
		id = v.ActiveMigration.ReshardingID
	}
	m, err := coord.Rollback(c.ctx, p, g, id, contract.RollbackRequest{RequestedBy: c.requestedBy, Reason: cmpOr(c.reason, "coordctl rollback")})
	if err != nil {
		return err
	}
	return c.print(m, func(t *tableWriter) { migrationTable(t, m) })
}
