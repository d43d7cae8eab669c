package monitoring_test

import (
	"reflect"
	"testing"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/grouptest"
	"github.com/redis-stream-coordinator/coordinator/monitoring"
	"github.com/redis-stream-coordinator/coordinator/streams"
)

func ptr[T any](v T) *T { return &v }

func TestProjectMergesGroupState(t *testing.T) {
	c := grouptest.New(t, 3)
	r := c.Join("member-a")
	hb := c.Member("member-a", r.MemberEpoch, 0, 1, 2)
	hb.ShardProgress = []contract.ShardProgress{
		{Shard: contract.Shard{ShardIndex: 0}, LastDeliveredID: ptr("5-0"), LastAckedID: ptr("4-0"), PendingCount: 7, UpdatedAt: c.Now},
		{Shard: contract.Shard{ShardIndex: 1}, LastDeliveredID: ptr("9-0"), PendingCount: 3, UpdatedAt: c.Now},
	}
	c.Heartbeat(hb)

	o := monitoring.Observation{Shards: []monitoring.ObservedShard{
		// The group is missing on shard 0: pending falls back to the member's report.
		{ShardOffset: streams.ShardOffset{Shard: 0, StreamKey: "orders:0", StreamLength: 10, MemoryUsageBytes: ptr[int64](100)}},
		{ShardOffset: streams.ShardOffset{Shard: 1, StreamKey: "orders:1", StreamLength: 5, GroupPending: ptr[int64](2), Lag: ptr[int64](1)},
			Produced: ptr(1.5), Consumed: ptr(0.5)},
		{ShardOffset: streams.ShardOffset{Shard: 2, StreamKey: "orders:2", GroupPending: ptr[int64](0), Lag: ptr[int64](0),
			MemoryUsageBytes: ptr[int64](50)}, Produced: ptr(2.0)},
	}}
	got := monitoring.Project(c.Group, o)
	if got.StreamPrefix != "orders" || got.ConsumerGroup != "orders-consumer" || len(got.Shards) != 3 {
		t.Fatalf("offsets %+v", got)
	}
	s0, s1, s2 := got.Shards[0], got.Shards[1], got.Shards[2]
	if s0.PendingCount != 7 || *s0.ConsumerLastDeliveredID != "5-0" || *s0.ConsumerLastAckedID != "4-0" || s0.Lag != nil {
		t.Errorf("shard 0: %+v", s0)
	}
	if s1.PendingCount != 2 || *s1.ConsumerLastDeliveredID != "9-0" || s1.ConsumerLastAckedID != nil || *s1.Lag != 1 {
		t.Errorf("shard 1: %+v", s1)
	}
	if s2.PendingCount != 0 || s2.ConsumerLastDeliveredID != nil {
		t.Errorf("shard 2: %+v", s2)
	}
	for i, s := range got.Shards {
		if len(s.OwnerMemberIDs) != 1 || s.OwnerMemberIDs[0] != "member-a" || s.Shard.ShardIndex != i {
			t.Errorf("shard %d: index %d, owners %v", i, s.Shard.ShardIndex, s.OwnerMemberIDs)
		}
	}
	if got.TotalStreamLength != 15 || got.TotalPendingCount != 9 || got.TotalLag != nil ||
		got.TotalMemoryUsageBytes != 150 || got.MemoryUsageKnown ||
		*got.ProducedPerSecond != 3.5 || *got.ConsumedPerSecond != 0.5 {
		t.Errorf("totals %+v", got)
	}
}

func TestProjectWithoutMembers(t *testing.T) {
	c := grouptest.New(t, 1)
	got := monitoring.Project(c.Group, monitoring.Observation{Shards: []monitoring.ObservedShard{
		{ShardOffset: streams.ShardOffset{Shard: 0, Lag: ptr[int64](4), MemoryUsageBytes: ptr[int64](8)}},
	}})
	s := got.Shards[0]
	if s.OwnerMemberIDs == nil || len(s.OwnerMemberIDs) != 0 || s.PendingCount != 0 || *got.TotalLag != 4 || !got.MemoryUsageKnown ||
		got.ProducedPerSecond != nil || got.ConsumedPerSecond != nil {
		t.Errorf("offsets %+v", got)
	}
}

// Gauges agrees with Project: the lag of the known lags, the pending
// counts with the members' fallback, and the rows (without owners) of the
// shards below the limit.
func TestGaugesAgreeWithProject(t *testing.T) {
	c := grouptest.New(t, 3)
	r := c.Join("member-a")
	hb := c.Member("member-a", r.MemberEpoch, 0, 1, 2)
	hb.ShardProgress = []contract.ShardProgress{
		{Shard: contract.Shard{ShardIndex: 0}, LastAckedID: ptr("4-0"), PendingCount: 7, UpdatedAt: c.Now},
		{Shard: contract.Shard{ShardIndex: 2}, LastAckedID: ptr("8-0"), PendingCount: 3, UpdatedAt: c.Now},
	}
	c.Heartbeat(hb)
	o := monitoring.Observation{Shards: []monitoring.ObservedShard{
		{ShardOffset: streams.ShardOffset{Shard: 0, StreamKey: "orders:0", StreamLength: 10}},
		{ShardOffset: streams.ShardOffset{Shard: 1, StreamKey: "orders:1", GroupPending: ptr[int64](2), Lag: ptr[int64](5)}, Produced: ptr(1.5)},
		{ShardOffset: streams.ShardOffset{Shard: 2, StreamKey: "orders:2", GroupPending: ptr[int64](1), Lag: ptr[int64](4)}},
	}}
	projected := monitoring.Project(c.Group, o)
	for _, rows := range []int{0, 2, 3, 1024} {
		got := monitoring.Gauges(c.Group, o, rows)
		if got.Lag != 9 || got.Pending != projected.TotalPendingCount || got.Pending != 10 {
			t.Errorf("rows %d: lag %d pending %d, want 9 and %d", rows, got.Lag, got.Pending, projected.TotalPendingCount)
		}
		if want := min(rows, 3); len(got.Rows) != want {
			t.Fatalf("rows %d: %d rows, want %d", rows, len(got.Rows), want)
		}
		for i, row := range got.Rows {
			want := projected.Shards[i]
			want.OwnerMemberIDs = []string{}
			if !reflect.DeepEqual(row, want) {
				t.Errorf("rows %d, shard %d: %+v, want %+v", rows, i, row, want)
			}
		}
	}
}
