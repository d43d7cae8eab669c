package monitoring

import (
	"reflect"
	"testing"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/streams"
)

func ptr[T any](v T) *T { return &v }

// observedShard is shard i of prefix as Observe reads it, with its key and
// slot and the node fields given.
func observedShard(prefix string, i int, node streams.ShardOffset) ObservedShard {
	key := contract.StreamKey(prefix, i)
	node.Shard, node.StreamKey, node.RedisSlot = i, key, contract.Slot(key)
	return ObservedShard{ShardOffset: node}
}

// The offset cache gives back exactly what was observed: known and unknown
// values, ids (also ones that are not "<ms>-<seq>"), several nodes.
func TestPackUnpackRoundTrip(t *testing.T) {
	a, b := streams.ShardOffset{RedisNodeEndpoint: ptr("10.0.0.1:6379"), RedisNodeID: ptr("n1"), RedisSlotRangeStart: ptr(0), RedisSlotRangeEnd: ptr(8191)},
		streams.ShardOffset{RedisNodeEndpoint: ptr("10.0.0.2:6379"), RedisNodeID: ptr("n2"), RedisSlotRangeStart: ptr(8192), RedisSlotRangeEnd: ptr(16383)}
	full := observedShard("orders", 0, a)
	full.StreamLength, full.FirstRecordID, full.LastRecordID, full.LastGeneratedID = 12, ptr("1700000000000-0"), ptr("1700000000009-3"), ptr("18446744073709551615-18446744073709551615")
	full.GroupLastDeliveredID, full.GroupPending, full.Lag, full.MemoryUsageBytes = ptr("0-0"), ptr[int64](2), ptr[int64](0), ptr[int64](1024)
	full.Produced, full.Consumed = ptr(0.33), ptr(0.0)
	odd := observedShard("orders", 1, b)
	odd.LastRecordID, odd.GroupLastDeliveredID, odd.Lag = ptr("007-1"), ptr("not an id"), ptr[int64](-1)
	unknown := observedShard("orders", 2, a)
	shared := observedShard("orders", 3, b)
	for _, o := range []Observation{
		{Shards: []ObservedShard{}},
		{Shards: []ObservedShard{full, odd, unknown, shared}},
		Unobserved("orders", 3),
	} {
		if got := pack("orders", o).unpack(); !reflect.DeepEqual(got, o) {
			t.Errorf("unpacked\n%+v\nwant\n%+v", got.Shards, o.Shards)
		}
	}
}

// One packed shard takes no more than 128 bytes and no allocation of its
// own: the nodes are kept once.
func TestPackedShardSize(t *testing.T) {
	if size := reflect.TypeFor[packedShard]().Size(); size > 128 {
		t.Errorf("packedShard is %d bytes", size)
	}
	node := streams.ShardOffset{RedisNodeEndpoint: ptr("127.0.0.1:6379")}
	o := Observation{Shards: []ObservedShard{observedShard("p", 0, node), observedShard("p", 1, node)}}
	if p := pack("p", o); len(p.nodes) != 1 || p.odd != nil {
		t.Errorf("nodes %d, odd %v", len(p.nodes), p.odd)
	}
}
