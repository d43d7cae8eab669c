package metrics

import (
	"slices"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
)

// DefaultStatusSeries is the number of shards per group whose consumption
// status gets a shard_status series unless WithStatusSeries says
// otherwise.
const DefaultStatusSeries = 64

// WithStatusSeries caps the shards per group that get a shard_status
// series at limit, at most MaxShardSeries; 0 gives none. Only shards whose
// status is not OK get one, the lowest indexes first, so a healthy group
// costs two series (group_status and group_desired_members) however many
// shards it has.
func WithStatusSeries(limit int) Option {
	return func(m *Metrics) { m.statusSeries = min(max(0, limit), MaxShardSeries) }
}

// GroupHealth is a group's last consumption status evaluation
// (docs/observability.md, "Consumption status").
type GroupHealth struct {
	// Status is the group's (its most severe shard's).
	Status contract.ConsumptionStatus
	// Shards are the shards whose status is not OK, by increasing index.
	Shards []ShardHealth
	// DesiredMembers is the scaling signal.
	DesiredMembers int
}

// ShardHealth is one shard's status.
type ShardHealth struct {
	Shard  int
	Status contract.ConsumptionStatus
}

// SetHealth sets the status gauges of key from h: group_status,
// group_desired_members and the shard_status series of h's first
// StatusSeries shards (a copy). It is ignored for a group the metrics do
// not know. The groups beyond WithGroupSeries get none of these series
// (a sum of statuses or of desired member counts over groups tells
// nothing).
func (m *Metrics) SetHealth(key group.Key, h GroupHealth) {
	gs := m.lookup(key)
	if gs == nil {
		return
	}
	h.Shards = slices.Clone(h.Shards[:min(len(h.Shards), m.statusSeries)])
	gs.mu.Lock()
	defer gs.mu.Unlock()
	gs.health = &h
}

var (
	groupStatusDesc = prometheus.NewDesc(prometheus.BuildFQName(Namespace, "", "group_status"),
		"1, labelled with the group's consumption status (its most severe shard's: OK, PAUSED, LAGGING, REWOUND, STALLED or STOPPED) as last evaluated; one series per group, absent before the first evaluation.",
		[]string{"stream", "group", "status", "coordinator"}, nil)
	shardStatusDesc = prometheus.NewDesc(prometheus.BuildFQName(Namespace, "", "shard_status"),
		"1, labelled with the consumption status of a shard that is not OK, for at most monitoring.status-series shards per group (the lowest indexes); an OK shard has no series.",
		[]string{"stream", "group", "shard", "status", "coordinator"}, nil)
	desiredMembersDesc = prometheus.NewDesc(prometheus.BuildFQName(Namespace, "", "group_desired_members"),
		"Members the group needs so that its backlog drains within scaling.target-drain-time while it keeps up with its ingest (desiredMembers, after hysteresis).",
		groupLabelNames, nil)
	healthDescs = []*prometheus.Desc{groupStatusDesc, shardStatusDesc, desiredMembersDesc}
)

// appendHealth appends v's status series: none for a group not exported
// (the LabelOther aggregate) or not evaluated yet.
func (v *groupState) appendHealth(out []prometheus.Metric, coordinator string) []prometheus.Metric {
	h := v.health
	if h == nil || !v.exported {
		return out
	}
	p, g := v.key.StreamPrefix, v.key.ConsumerGroup
	out = append(out, prometheus.MustNewConstMetric(groupStatusDesc, prometheus.GaugeValue, 1, p, g, string(h.Status), coordinator),
		prometheus.MustNewConstMetric(desiredMembersDesc, prometheus.GaugeValue, float64(h.DesiredMembers), p, g, coordinator))
	for _, s := range h.Shards {
		out = append(out, prometheus.MustNewConstMetric(shardStatusDesc, prometheus.GaugeValue, 1, p, g, strconv.Itoa(s.Shard), string(s.Status), coordinator))
	}
	return out
}
