package health

import (
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
)

// View projects r into the body of GET …/status for the group prefix/grp;
// window is the configured window size.
func (r Report) View(prefix, grp string, window int) contract.StatusView {
	v := contract.StatusView{StreamPrefix: prefix, ConsumerGroup: grp, Status: r.Status, Since: instant(r.Since),
		EvaluatedAt: instant(r.At), Counts: r.Counts, WindowSamples: window, Shards: make([]contract.ShardStatus, len(r.Shards))}
	for i, s := range r.Shards {
		e := s.Evidence
		ev := contract.StatusEvidence{WindowStart: instant(e.WindowStart), WindowEnd: instant(e.WindowEnd),
			Samples: e.Samples, LagStart: e.LagStart, LagEnd: e.LagEnd, IngestRate: e.IngestRate, ConsumeRate: e.ConsumeRate,
			Holders: e.Holders, Paused: e.Paused}
		if e.HasPosition {
			pos := e.Position.String()
			ev.Position = &pos
		}
		v.Shards[i] = contract.ShardStatus{ShardIndex: s.Shard, Status: s.Status, Since: instant(s.Since), Evidence: ev}
	}
	return v
}

// UnknownView is the body of GET …/status for a group not evaluated yet:
// status UNKNOWN, every count 0, no shards.
func UnknownView(prefix, grp string, window int) contract.StatusView {
	counts := make(map[contract.ConsumptionStatus]int, len(contract.ConsumptionStatuses))
	for _, s := range contract.ConsumptionStatuses {
		counts[s] = 0
	}
	return contract.StatusView{StreamPrefix: prefix, ConsumerGroup: grp, Status: contract.ConsumptionUnknown, Counts: counts,
		WindowSamples: window, Shards: []contract.ShardStatus{}}
}

// View projects s into the body of GET …/scaling for the group
// prefix/grp.
func (s Signal) View(prefix, grp string) contract.ScalingView {
	v := contract.ScalingView{StreamPrefix: prefix, ConsumerGroup: grp, DesiredMembers: s.Desired, RecommendedMembers: s.Recommended,
		Members: s.Members, ShardCount: s.ShardCount, IngestRate: s.IngestRate, Backlog: s.Backlog,
		ConsumeRatePerMember: s.ConsumeRatePerMember, ConsumeRateMeasured: s.Measured, TargetDrainSeconds: s.TargetDrain.Seconds(),
		Since: instant(s.Since), EvaluatedAt: instant(s.At)}
	if s.PredictedDrain != nil {
		sec := s.PredictedDrain.Seconds()
		v.PredictedDrainSeconds = &sec
	}
	return v
}

// Unevaluated is the signal of a group not evaluated yet: its members,
// bounded as a recommendation is, so that an autoscaler reading it keeps
// what runs; no rates, no backlog.
func Unevaluated(c ScalingConfig, members, shardCount int) Signal {
	n := c.Bound(members, shardCount)
	return Signal{Desired: n, Recommended: n, Members: members, ShardCount: shardCount, TargetDrain: c.TargetDrain,
		ConsumeRatePerMember: c.FallbackRatePerMember}
}

// instant is t as an Instant; the zero time is the zero (null) Instant.
func instant(t time.Time) contract.Instant {
	if t.IsZero() {
		return 0
	}
	return contract.InstantOf(t)
}
