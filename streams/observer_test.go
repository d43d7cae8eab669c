package streams

import (
	"testing"

	"github.com/redis/go-redis/v9"
)

func TestLocateSlot(t *testing.T) {
	ranges := []redis.ClusterSlot{
		{Start: 0, End: 5460, Nodes: []redis.ClusterNode{{ID: "a", Addr: "10.0.0.1:6379"}, {ID: "a-replica", Addr: "10.0.0.4:6379"}}},
		{Start: 5461, End: 10922, Nodes: []redis.ClusterNode{{ID: "b", Addr: "10.0.0.2:6379"}}},
		{Start: 12000, End: 16383, Nodes: nil},
	}
	for _, tc := range []struct {
		slot                 int
		endpoint, id         any
		rangeStart, rangeEnd any
	}{
		{0, "10.0.0.1:6379", "a", 0, 5460},
		{5460, "10.0.0.1:6379", "a", 0, 5460},
		{5461, "10.0.0.2:6379", "b", 5461, 10922},
		{11000, nil, nil, nil, nil}, // uncovered
		{13000, nil, nil, nil, nil}, // no nodes
	} {
		o := ShardOffset{RedisSlot: tc.slot}
		locateSlot(ranges, &o)
		if val(o.RedisNodeEndpoint) != tc.endpoint || val(o.RedisNodeID) != tc.id ||
			val(o.RedisSlotRangeStart) != tc.rangeStart || val(o.RedisSlotRangeEnd) != tc.rangeEnd {
			t.Errorf("slot %d: %s", tc.slot, describe(o))
		}
	}
}
