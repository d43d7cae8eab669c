package metrics_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/metrics"
)

// The status series of a group: group_status labelled with its status,
// group_desired_members, and shard_status for its first StatusSeries
// shards that are not OK; none before SetHealth, none for a group beyond
// the group cap (its {other} aggregate gets none), none once it is gone.
func TestStatusSeriesAreBounded(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := metrics.New(reg, "c1", metrics.WithStatusSeries(2), metrics.WithGroupSeries(1))
	a, b := group.Key{StreamPrefix: "orders", ConsumerGroup: "a"}, group.Key{StreamPrefix: "orders", ConsumerGroup: "b"}
	m.GroupCommitted(a, groupWithMember(a), nil)
	m.GroupCommitted(b, groupWithMember(b), nil)
	if s := scrape(t, reg); labelled(s, "status", "OK") || labelled(s, "status", "STALLED") {
		t.Fatalf("status series before an evaluation: %v", s)
	}
	h := metrics.GroupHealth{Status: contract.ConsumptionStopped, DesiredMembers: 3, Shards: []metrics.ShardHealth{
		{Shard: 1, Status: contract.ConsumptionStalled}, {Shard: 4, Status: contract.ConsumptionStopped}, {Shard: 7, Status: contract.ConsumptionLagging}}}
	m.SetHealth(a, h)
	m.SetHealth(b, h)
	m.SetHealth(group.Key{StreamPrefix: "orders", ConsumerGroup: "unknown"}, h)
	s := scrape(t, reg)
	for k, v := range map[string]float64{
		`group_status{group="a",status="STOPPED",stream="orders"}`:           1,
		`group_desired_members{group="a",stream="orders"}`:                   3,
		`shard_status{group="a",shard="1",status="STALLED",stream="orders"}`: 1,
		`shard_status{group="a",shard="4",status="STOPPED",stream="orders"}`: 1,
	} {
		if got, ok := s[k]; !ok || got != v {
			t.Errorf("%s = %v (present %v), want %v", k, got, ok, v)
		}
	}
	n := 0
	for k := range s {
		if len(k) > 12 && (k[:12] == "shard_status" || k[:12] == "group_status") || len(k) > 21 && k[:21] == "group_desired_members" {
			n++
		}
	}
	if n != 4 {
		t.Errorf("%d status series, want 4 (group a's; b is beyond the cap, the third shard beyond status-series): %v", n, s)
	}
	m.GroupCommitted(a, group.New(), nil) // deleted
	if s := scrape(t, reg); labelled(s, "group", "a") {
		t.Errorf("a deleted group's series remain: %v", s)
	}
}
