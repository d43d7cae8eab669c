package main

import (
	"flag"
	"fmt"

	"github.com/redis-stream-coordinator/coordinator/contract"
)

// status: how a group's consumption is going and how many members it
// needs (docs/observability.md, "Consumption status", "Scaling signal").

func init() {
	register(command{
		name: "status", synopsis: "PREFIX GROUP", minArgs: 2, maxArgs: 2,
		summary: "show a group's consumption status per shard and its scaling signal (needs Redis)",
		help: `Shows how the consumption of group GROUP of stream prefix PREFIX is going:
the group's status (its most severe shard's) and each shard's, since when,
and the evidence over the window (lag at its start and end, ingest and
consume rates per second, live members holding the shard, the group's
position). Statuses: OK, PAUSED (paused, or a live reset holds it),
LAGGING (the lag grew), REWOUND (the position moved back outside a live
reset), STALLED (a member holds it, entries wait, the position does not
move), STOPPED (entries wait and no live member holds it); UNKNOWN before
the coordinator's first evaluation.
Then the scaling signal: desiredMembers (what an autoscaler should run),
the recommendation before hysteresis, and its inputs: ingest rate,
backlog, consume rate per member (measured or the configured fallback) and
the predicted time desiredMembers members take to drain the backlog.
With -o json it prints {"status": …, "scaling": …} as the API answers them.
A coordinator without Redis answers REDIS_NOT_CONFIGURED (exit 7).`,
		setup: func(*flag.FlagSet) func(*call) error { return showStatus },
	})
}

// statusOutput is what status prints with -o json.
type statusOutput struct {
	Status  contract.StatusView  `json:"status"`
	Scaling contract.ScalingView `json:"scaling"`
}

func showStatus(c *call) error {
	coord, err := c.client()
	if err != nil {
		return err
	}
	st, err := coord.Status(c.ctx, c.args[0], c.args[1])
	if err != nil {
		return err
	}
	sc, err := coord.Scaling(c.ctx, c.args[0], c.args[1])
	if err != nil {
		return err
	}
	return c.print(statusOutput{Status: st, Scaling: sc}, func(t *tableWriter) {
		t.row("GROUP", "STATUS", "SINCE", "EVALUATED", "DESIRED", "RECOMMENDED", "MEMBERS", "INGEST/S", "PER-MEMBER/S", "BACKLOG", "DRAIN-S")
		perMember := fmt.Sprint(sc.ConsumeRatePerMember)
		if !sc.ConsumeRateMeasured {
			perMember += " (fallback)"
		}
		t.row(st.StreamPrefix+"/"+st.ConsumerGroup, st.Status, instantText(int64(st.Since)), instantText(int64(st.EvaluatedAt)),
			sc.DesiredMembers, sc.RecommendedMembers, sc.Members, sc.IngestRate, perMember, sc.Backlog, optional(sc.PredictedDrainSeconds))
		t.row()
		t.row("SHARD", "STATUS", "SINCE", "LAG-START", "LAG-END", "INGEST/S", "CONSUME/S", "HOLDERS", "POSITION")
		for _, s := range st.Shards {
			e := s.Evidence
			t.row(s.ShardIndex, s.Status, instantText(int64(s.Since)), optional(e.LagStart), optional(e.LagEnd),
				optional(e.IngestRate), optional(e.ConsumeRate), e.Holders, optional(e.Position))
		}
	})
}
