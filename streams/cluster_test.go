package streams

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis/go-redis/v9"
)

// TestClusterMode runs against a Redis Cluster named by REDIS_CLUSTER_ADDRS
// (comma-separated seed addresses) and is skipped without it. The shard keys
// spread over several slots and nodes, so every pipeline crosses nodes.
func TestClusterMode(t *testing.T) {
	addrs := os.Getenv("REDIS_CLUSTER_ADDRS")
	if addrs == "" {
		t.Skip("REDIS_CLUSTER_ADDRS not set")
	}
	client := redis.NewClusterClient(&redis.ClusterOptions{Addrs: strings.Split(addrs, ",")})
	t.Cleanup(func() { _ = client.Close() })
	ctx := t.Context()
	const shardCount = 6
	prefix := fmt.Sprintf("TestClusterMode-%016x", rand.Uint64())
	shards := ShardsOf(prefix, shardCount)
	t.Cleanup(func() {
		for _, key := range append([]string{prefix}, contract.StreamKey(prefix, shardCount)) {
			_ = client.Del(context.Background(), key).Err()
		}
		for _, s := range shards {
			_ = client.Del(context.Background(), s.Key).Err()
		}
	})

	prov, obs := NewProvisioner(client), NewObserver(client)
	if err := prov.Provision(ctx, prefix, "g", []int{0, 1, 2, 3, 4, 5}); err != nil {
		t.Fatal(err)
	}
	if keys, err := prov.ExistingKeys(ctx, prefix, shardCount+1); err != nil || len(keys) != shardCount {
		t.Fatalf("ExistingKeys = %v, %v", keys, err)
	}
	for i, s := range shards {
		xadd(t, client, s.Key, fmt.Sprintf("%d-0", 100+i), fmt.Sprintf("%d-0", 200+i))
	}
	consume(t, client, shards[0].Key, "g", 2, true)

	//lint:ignore SA1019 the observer reads CLUSTER SLOTS; the test compares with it
	ranges, err := client.ClusterSlots(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	offsets, err := obs.Offsets(ctx, prefix, "g", shardCount)
	if err != nil {
		t.Fatal(err)
	}
	nodes := map[string]bool{}
	for i, o := range offsets {
		keySlot, err := client.ClusterKeySlot(ctx, o.StreamKey).Result()
		if err != nil || int(keySlot) != o.RedisSlot {
			t.Fatalf("%s: slot %d, CLUSTER KEYSLOT %d (%v)", o.StreamKey, o.RedisSlot, keySlot, err)
		}
		r := ranges[slices.IndexFunc(ranges, func(r redis.ClusterSlot) bool { return r.Start <= o.RedisSlot && o.RedisSlot <= r.End })]
		if str(o.RedisNodeEndpoint) != r.Nodes[0].Addr || str(o.RedisNodeID) != r.Nodes[0].ID ||
			val(o.RedisSlotRangeStart) != r.Start || val(o.RedisSlotRangeEnd) != r.End {
			t.Errorf("%s: %s, slot range %+v", o.StreamKey, describe(o), r)
		}
		wantLag := int64(2)
		if i == 0 {
			wantLag = 0
		}
		if o.StreamLength != 2 || val(o.Lag) != wantLag || val(o.GroupPending) != int64(0) || o.MemoryUsageBytes == nil {
			t.Errorf("%s", describe(o))
		}
		nodes[str(o.RedisNodeEndpoint)] = true
	}
	if len(nodes) < 2 {
		t.Errorf("shard keys all on one node %v; the test wants several", nodes)
	}

	if drained, err := obs.Drained(ctx, prefix, []int{0, shardCount}); err != nil || !drained {
		t.Errorf("Drained(consumed, missing) = %v, %v", drained, err)
	}
	if drained, err := obs.Drained(ctx, prefix, []int{0, 1}); err != nil || drained {
		t.Errorf("Drained(consumed, lagging) = %v, %v", drained, err)
	}

	var want []string // ids 100+i then 200+i are already in merge order
	for _, ms := range []int{100, 200} {
		for i := range shardCount {
			want = append(want, fmt.Sprintf("%d/%d-0", i, ms+i))
		}
	}
	got := walk(t, "", func(cursor string) (Page, error) { return obs.Browse(ctx, shards, Forward, cursor, 5) })
	if !slices.Equal(got, want) {
		t.Errorf("merged walk = %v, want %v", got, want)
	}
	if total, err := obs.TotalLength(ctx, shards); err != nil || total != 2*shardCount {
		t.Errorf("TotalLength = %d, %v", total, err)
	}
	if found, err := obs.Lookup(ctx, shards, "203-0"); err != nil || !slices.Equal(labels(found), []string{"3/203-0"}) {
		t.Errorf("Lookup = %v, %v", labels(found), err)
	}
}
