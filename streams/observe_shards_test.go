package streams

import (
	"testing"

	"github.com/redis-stream-coordinator/coordinator/contract"
)

// TestObserveShardsAcrossGroups: one read of shards of two prefixes and
// groups, more than a pipeline holds, answers every shard in order with
// its own group's position; skipped shards and streams that do not exist
// are Missing, and the cost counts the shards sent only (3 commands each,
// a round trip per observeBatch). Existing tells which keys exist.
func TestObserveShardsAcrossGroups(t *testing.T) {
	client := newTestClient(t)
	a, b := testPrefix(t, client), testPrefix(t, client)
	if err := NewProvisioner(client).Provision(t.Context(), a, "ga", []int{0}); err != nil {
		t.Fatal(err)
	}
	xaddN(t, client, contract.StreamKey(a, 0), 3)
	xaddN(t, client, contract.StreamKey(b, observeBatch), 2)
	if err := NewProvisioner(client).Provision(t.Context(), b, "gb", []int{observeBatch}); err != nil {
		t.Fatal(err)
	}
	var reads []ShardRead
	for i := range 2 {
		reads = append(reads, ShardRead{Shard: Shard{Index: i, Key: contract.StreamKey(a, i)}, Group: "ga"})
	}
	for i := range observeBatch + 2 {
		reads = append(reads, ShardRead{Shard: Shard{Index: i, Key: contract.StreamKey(b, i)}, Group: "gb", Skip: i == 0})
	}
	offsets, cost, err := NewObserver(client).ObserveShards(t.Context(), reads)
	if err != nil {
		t.Fatal(err)
	}
	if sent := len(reads) - 1; cost != (Cost{Commands: 3 * sent, RoundTrips: 2}) {
		t.Errorf("cost %+v, want %d commands in 2 round trips", cost, 3*sent)
	}
	for i, o := range offsets {
		r := reads[i]
		present := r.Key == contract.StreamKey(a, 0) || r.Key == contract.StreamKey(b, observeBatch)
		if o.Shard != r.Index || o.StreamKey != r.Key || o.Missing == present || o.RedisNodeEndpoint == nil {
			t.Fatalf("offset %d = %s, missing %v; want shard %d of %s, missing %v", i, describe(o), o.Missing, r.Index, r.Key, !present)
		}
		if present {
			checkAgainstXInfo(t, client, r.Group, o)
		} else if o.StreamLength != 0 || o.Lag != nil || o.GroupPending != nil || o.MemoryUsageBytes != nil {
			t.Errorf("missing shard %d = %s", i, describe(o))
		}
	}
	if o := offsets[0]; o.Lag == nil || *o.Lag != 3 {
		t.Errorf("shard 0 of %s = %s, want lag 3 for its group", a, describe(o))
	}

	keys := []string{contract.StreamKey(a, 0), contract.StreamKey(a, 1), contract.StreamKey(b, observeBatch)}
	found, cost, err := NewObserver(client).Existing(t.Context(), keys)
	if err != nil || len(found) != 3 || !found[0] || found[1] || !found[2] {
		t.Errorf("Existing(%v) = %v, %v; want [true false true]", keys, found, err)
	}
	if cost != (Cost{Commands: 3, RoundTrips: 1}) {
		t.Errorf("Existing cost %+v, want 3 commands in 1 round trip", cost)
	}
}
