package monitoring_test

import (
	"testing"

	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/group/grouptest"
	"github.com/redis-stream-coordinator/coordinator/monitoring"
	"github.com/redis-stream-coordinator/coordinator/streams"
)

// An unobserved group projects to unknown Redis values with the members'
// reports and the owners filled in.
func TestProjectUnobserved(t *testing.T) {
	c := grouptest.New(t, 2)
	r := c.Join("member-a")
	hb := c.Member("member-a", r.MemberEpoch, 0, 1)
	hb.ShardProgress = []group.ShardProgress{{Shard: group.Shard{ShardIndex: 1}, LastAckedID: ptr("3-0"), PendingCount: 4, UpdatedAt: c.Now}}
	c.Heartbeat(hb)

	got := monitoring.Project(c.Group, monitoring.Unobserved("orders", 2))
	if len(got.Shards) != 2 || got.TotalStreamLength != 0 || got.TotalPendingCount != 4 || got.TotalLag != nil ||
		got.MemoryUsageKnown || got.ProducedPerSecond != nil || got.ConsumedPerSecond != nil {
		t.Fatalf("offsets %+v", got)
	}
	for i, s := range got.Shards {
		key := streams.StreamKey("orders", i)
		if s.Shard.ShardIndex != i || s.StreamKey != key || s.RedisSlot != streams.Slot(key) || s.RedisNodeEndpoint != nil ||
			s.Lag != nil || s.MemoryUsageBytes != nil || s.LastRecordID != nil || len(s.OwnerMemberIDs) != 1 {
			t.Errorf("shard %d: %+v", i, s)
		}
	}
	if s := got.Shards[1]; s.PendingCount != 4 || s.ConsumerLastAckedID == nil || *s.ConsumerLastAckedID != "3-0" {
		t.Errorf("shard 1 lost the member's report: %+v", s)
	}
}
