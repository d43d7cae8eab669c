package monitoring_test

import (
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/fakeclock"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/grouptest"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/testredis"
	"github.com/redis-stream-coordinator/coordinator/monitoring"
	"github.com/redis-stream-coordinator/coordinator/streams"
)

// An unobserved group projects to unknown Redis values with the members'
// reports and the owners filled in.
func TestProjectUnobserved(t *testing.T) {
	c := grouptest.New(t, 2)
	r := c.Join("member-a")
	hb := c.Member("member-a", r.MemberEpoch, 0, 1)
	hb.ShardProgress = []contract.ShardProgress{{Shard: contract.Shard{ShardIndex: 1}, LastAckedID: ptr("3-0"), PendingCount: 4, UpdatedAt: c.Now}}
	c.Heartbeat(hb)

	got := monitoring.Project(c.Group, monitoring.Unobserved("orders", 2))
	if len(got.Shards) != 2 || got.TotalStreamLength != 0 || got.TotalPendingCount != 4 || got.TotalLag != nil ||
		got.MemoryUsageKnown || got.ProducedPerSecond != nil || got.ConsumedPerSecond != nil {
		t.Fatalf("offsets %+v", got)
	}
	for i, s := range got.Shards {
		key := contract.StreamKey("orders", i)
		if s.Shard.ShardIndex != i || s.StreamKey != key || s.RedisSlot != contract.Slot(key) || s.RedisNodeEndpoint != nil ||
			s.Lag != nil || s.MemoryUsageBytes != nil || s.LastRecordID != nil || len(s.OwnerMemberIDs) != 1 {
			t.Errorf("shard %d: %+v", i, s)
		}
	}
	if s := got.Shards[1]; s.PendingCount != 4 || s.ConsumerLastAckedID == nil || *s.ConsumerLastAckedID != "3-0" {
		t.Errorf("shard 1 lost the member's report: %+v", s)
	}
}

// The refresher's reads keep fresh only the groups someone reads through
// the offset cache: an unread group's observation is not stored, so its
// first cached read observes Redis itself; a read group's is, so a read
// after the refresh answers the refreshed observation.
func TestRefreshStoresOnlyGroupsRead(t *testing.T) {
	ctx := t.Context()
	client := testredis.Shared(t)
	c := grouptest.New(t, 1)
	c.Group.Meta.StreamPrefix = testredis.Prefix(t, client)
	r := monitoring.NewReader(streams.NewObserver(client), fakeclock.New(time.Now()).Now, time.Minute)
	add := func() {
		t.Helper()
		if err := client.XAdd(ctx, &redis.XAddArgs{Stream: contract.StreamKey(c.Group.Meta.StreamPrefix, 0), Values: []string{"f", "v"}}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	refresh := func() {
		t.Helper()
		if _, _, err := r.RefreshAll(ctx, []*group.Group{c.Group}, func(string) bool { return false }); err != nil {
			t.Fatal(err)
		}
	}
	wantLength := func(what string, want int64) {
		t.Helper()
		o, err := r.CachedGroupOffsets(ctx, c.Group)
		if err != nil {
			t.Fatal(err)
		}
		if o.TotalStreamLength != want {
			t.Errorf("%s: stream length %d, want %d", what, o.TotalStreamLength, want)
		}
	}

	add()
	refresh() // of a group nobody read: not stored
	add()
	wantLength("the first cached read", 2)
	add()
	wantLength("a read within the TTL", 2)
	refresh() // of a group read: stored fresh
	add()
	wantLength("a read after the refresh", 3)
}
