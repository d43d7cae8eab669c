package main

import (
	"time"

	"github.com/redis-stream-coordinator/coordinator/config"
	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	rules "github.com/redis-stream-coordinator/coordinator/health"
	"github.com/redis-stream-coordinator/coordinator/metrics"
	"github.com/redis-stream-coordinator/coordinator/monitoring"
)

// evaluate feeds the observation o of g, read at at, to g's consumption
// status tracker (monitoring.Statuses: the round's reads, no command of
// its own) and sets g's status gauges from the report: group_status,
// shard_status of the shards that are not OK, group_desired_members.
func (r *lagRefresher) evaluate(g *group.Group, o monitoring.Observation, at time.Time) {
	if r.status == nil {
		return
	}
	rep := r.status.Observe(g, o, at)
	h := metrics.GroupHealth{Status: rep.Status, DesiredMembers: rep.Scaling.Desired}
	for _, s := range rep.Shards {
		if s.Status != contract.ConsumptionOK {
			h.Shards = append(h.Shards, metrics.ShardHealth{Shard: s.Shard, Status: s.Status})
		}
	}
	r.m.SetHealth(g.Key(), h)
}

// newStatuses returns the consumption status trackers of the groups
// placed on this coordinator, configured by cfg's `status` and `scaling`;
// the lag refresher feeds them, the API reads them.
func newStatuses(cfg *config.Config) *monitoring.Statuses {
	return monitoring.NewStatuses(healthConfig(cfg))
}

// healthConfig is the `status` and `scaling` configuration as the rules
// take it.
func healthConfig(cfg *config.Config) rules.Config {
	st, sc := cfg.Status, cfg.Scaling
	return rules.Config{Window: st.Window, MinSamples: st.MinSamples, StoppedSamples: st.StoppedSamples, LagThreshold: int64(st.LagThreshold),
		Scaling: rules.ScalingConfig{TargetDrain: sc.TargetDrainTime.Duration(), MinMembers: sc.MinMembers, MaxMembers: sc.MaxMembers,
			ScaleDownDelay: sc.ScaleDownDelay.Duration(), FallbackRatePerMember: float64(sc.FallbackRatePerMember)}}
}
