package streams

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis/go-redis/v9"
)

func TestProvisionCreatesGroupsIdempotently(t *testing.T) {
	client := newTestClient(t)
	prov := NewProvisioner(client)
	prefix, group := testPrefix(t, client), "workers"

	if keys, err := prov.ExistingKeys(t.Context(), prefix, 4); err != nil || len(keys) != 0 {
		t.Fatalf("ExistingKeys before = %v, %v", keys, err)
	}
	existing := xaddN(t, client, contract.StreamKey(prefix, 1), 5) // a stream that predates provisioning

	for range 2 { // the second run meets BUSYGROUP everywhere
		if err := prov.Provision(t.Context(), prefix, group, []int{0, 1, 2, 3}); err != nil {
			t.Fatalf("Provision: %v", err)
		}
	}
	for i := range 4 {
		groups, err := client.XInfoGroups(t.Context(), contract.StreamKey(prefix, i)).Result()
		if err != nil || len(groups) != 1 {
			t.Fatalf("XINFO GROUPS shard %d = %+v, %v", i, groups, err)
		}
		g := groups[0]
		wantRead, wantDelivered := int64(0), "0-0"
		if i == 1 {
			wantRead, wantDelivered = 5, existing[4]
		}
		// Created at "$" with ENTRIESREAD = entries-added: nothing to read, lag known.
		if g.Name != group || g.EntriesRead != wantRead || g.Lag != 0 || g.Pending != 0 || g.LastDeliveredID != wantDelivered {
			t.Errorf("shard %d group = %+v", i, g)
		}
	}

	if err := client.Set(t.Context(), prefix, "not a stream", 0).Err(); err != nil {
		t.Fatal(err)
	}
	keys, err := prov.ExistingKeys(t.Context(), prefix, 6)
	if want := []string{prefix, contract.StreamKey(prefix, 0), contract.StreamKey(prefix, 1), contract.StreamKey(prefix, 2), contract.StreamKey(prefix, 3)}; err != nil || !slices.Equal(keys, want) {
		t.Fatalf("ExistingKeys = %v, %v; want %v", keys, err, want)
	}
}

func TestProvisionFailures(t *testing.T) {
	client := newTestClient(t)
	prefix := testPrefix(t, client)
	if err := client.Set(t.Context(), contract.StreamKey(prefix, 7), "not a stream", 0).Err(); err != nil {
		t.Fatal(err)
	}
	err := NewProvisioner(client).Provision(t.Context(), prefix, "g", []int{4, 7, 5})
	var perr *ProvisioningError
	if !errors.Is(err, ErrProvisioningFailed) || !errors.As(err, &perr) || perr.Key != contract.StreamKey(prefix, 7) {
		t.Fatalf("Provision over a STRING key = %v", err)
	}

	closed := redis.NewClient(&redis.Options{Addr: client.Options().Addr})
	_ = closed.Close()
	err = NewProvisioner(closed).Provision(t.Context(), prefix, "g", []int{0})
	if !errors.Is(err, ErrProvisioningFailed) || !errors.Is(err, redis.ErrClosed) {
		t.Fatalf("Provision on a closed client = %v", err)
	}
	if _, err := NewProvisioner(closed).ExistingKeys(t.Context(), prefix, 1); err == nil {
		t.Fatal("ExistingKeys on a closed client succeeded")
	}
}

// TestOffsetsAndDrainOnRealData provisions 4 shards, produces, consumes
// and acknowledges part of it, and checks Offsets against what XINFO reports
// directly and Drained against the progress.
func TestOffsetsAndDrainOnRealData(t *testing.T) {
	client := newTestClient(t)
	obs := NewObserver(client)
	prefix, group := testPrefix(t, client), "workers"
	key := func(i int) string { return contract.StreamKey(prefix, i) }
	if err := NewProvisioner(client).Provision(t.Context(), prefix, group, []int{0, 1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	if err := NewProvisioner(client).Provision(t.Context(), prefix, "audit", []int{2}); err != nil {
		t.Fatal(err)
	}
	for i, n := range []int{10, 20, 30, 0} {
		xaddN(t, client, key(i), n)
	}
	consume(t, client, key(0), group, 10, true)
	shard1 := consume(t, client, key(1), group, 15, false)
	if err := client.XAck(t.Context(), key(1), group, shard1[:5]...).Err(); err != nil {
		t.Fatal(err)
	}

	offsets, err := obs.Offsets(t.Context(), prefix, group, 5) // shard 4 was never created
	if err != nil {
		t.Fatal(err)
	}
	if len(offsets) != 5 {
		t.Fatalf("%d offsets", len(offsets))
	}
	for i, want := range []struct{ length, pending, lag int64 }{{10, 0, 0}, {20, 10, 5}, {30, 0, 30}, {0, 0, 0}} {
		o := offsets[i]
		checkAgainstXInfo(t, client, group, o)
		if o.Shard != i || o.StreamKey != key(i) || o.RedisSlot != contract.Slot(key(i)) || o.StreamLength != want.length ||
			o.GroupPending == nil || *o.GroupPending != want.pending || o.Lag == nil || *o.Lag != want.lag {
			t.Errorf("shard %d offset = %s", i, describe(o))
		}
		if o.RedisNodeEndpoint == nil || *o.RedisNodeEndpoint != client.Options().Addr ||
			o.RedisNodeID != nil || o.RedisSlotRangeStart != nil || o.RedisSlotRangeEnd != nil {
			t.Errorf("shard %d node fields = %s", i, describe(o))
		}
	}
	if o := offsets[4]; o.StreamLength != 0 || o.FirstRecordID != nil || o.LastRecordID != nil || o.LastGeneratedID != nil ||
		o.GroupLastDeliveredID != nil || o.GroupPending != nil || o.Lag != nil || o.MemoryUsageBytes != nil {
		t.Errorf("missing shard offset = %s", describe(o))
	}
	if totals := Totals(offsets); totals.StreamLength != 60 || totals.Lag != nil || totals.MemoryUsageKnown ||
		totals.MemoryUsageBytes != *offsets[0].MemoryUsageBytes+*offsets[1].MemoryUsageBytes+*offsets[2].MemoryUsageBytes+*offsets[3].MemoryUsageBytes {
		t.Errorf("totals with a missing shard = %+v", totals)
	}
	if totals := Totals(offsets[:4]); totals.Lag == nil || *totals.Lag != 35 || !totals.MemoryUsageKnown {
		t.Errorf("totals = %+v", totals)
	}

	assertDrained := func(shards []int, want bool) {
		t.Helper()
		if got, err := obs.Drained(t.Context(), prefix, shards); err != nil || got != want {
			t.Fatalf("Drained(%v) = %v, %v; want %v", shards, got, err, want)
		}
	}
	assertDrained([]int{0, 1, 2, 3}, false)
	assertDrained([]int{1}, false) // pending 10, lag 5
	assertDrained([]int{2}, false) // lag 30
	assertDrained([]int{0, 3, 9}, true)
	assertDrained(nil, true)

	rest := consume(t, client, key(1), group, 5, false)
	if err := client.XAck(t.Context(), key(1), group, append(shard1[5:], rest...)...).Err(); err != nil {
		t.Fatal(err)
	}
	consume(t, client, key(2), group, 30, true)
	assertDrained([]int{0, 1, 2, 3}, false) // group "audit" still lags on shard 2
	consume(t, client, key(2), "audit", 30, true)
	assertDrained([]int{0, 1, 2, 3}, true)
}

func TestUnknownLagIsNotDrained(t *testing.T) {
	client := newTestClient(t)
	obs := NewObserver(client)
	prefix := testPrefix(t, client)
	k := contract.StreamKey(prefix, 0)
	ids := xaddN(t, client, k, 3)
	// A group created at 0 without ENTRIESREAD behind a deleted entry has no lag.
	if err := client.XDel(t.Context(), k, ids[1]).Err(); err != nil {
		t.Fatal(err)
	}
	if err := client.XGroupCreate(t.Context(), k, "legacy", "0").Err(); err != nil {
		t.Fatal(err)
	}
	offsets, err := obs.Offsets(t.Context(), prefix, "legacy", 1)
	if err != nil || offsets[0].Lag != nil || offsets[0].GroupPending == nil || *offsets[0].GroupPending != 0 {
		t.Fatalf("offsets = %+v, %v", offsets, err)
	}
	if drained, err := obs.Drained(t.Context(), prefix, []int{0}); err != nil || drained {
		t.Fatalf("Drained with unknown lag = %v, %v", drained, err)
	}
}

func TestObserverTransportFailure(t *testing.T) {
	client := newTestClient(t)
	closed := redis.NewClient(&redis.Options{Addr: client.Options().Addr})
	_ = closed.Close()
	obs := NewObserver(closed)
	if drained, err := obs.Drained(t.Context(), "p", []int{0}); !errors.Is(err, redis.ErrClosed) || drained {
		t.Fatalf("Drained on a closed client = %v, %v", drained, err)
	}
	if _, err := obs.Offsets(t.Context(), "p", "g", 1); !errors.Is(err, redis.ErrClosed) {
		t.Fatalf("Offsets on a closed client = %v", err)
	}
	if _, err := obs.TotalLength(t.Context(), ShardsOf("p", 1)); !errors.Is(err, redis.ErrClosed) {
		t.Fatalf("TotalLength on a closed client = %v", err)
	}
}

// checkAgainstXInfo compares o with XINFO STREAM, XINFO GROUPS and MEMORY
// USAGE read directly.
func checkAgainstXInfo(t *testing.T, client *redis.Client, group string, o ShardOffset) {
	t.Helper()
	ctx := t.Context()
	info, err := client.XInfoStream(ctx, o.StreamKey).Result()
	if err != nil {
		t.Fatal(err)
	}
	if o.StreamLength != info.Length || str(o.FirstRecordID) != info.FirstEntry.ID || str(o.LastRecordID) != info.LastEntry.ID ||
		str(o.LastGeneratedID) != info.LastGeneratedID {
		t.Errorf("%s: offset %s, XINFO STREAM %+v", o.StreamKey, describe(o), info)
	}
	groups, err := client.XInfoGroups(ctx, o.StreamKey).Result()
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(groups, func(g redis.XInfoGroup) bool { return g.Name == group })
	if g := groups[i]; str(o.GroupLastDeliveredID) != g.LastDeliveredID || *o.GroupPending != g.Pending || *o.Lag != g.Lag {
		t.Errorf("%s: offset %s, XINFO GROUPS %+v", o.StreamKey, describe(o), g)
	}
	memory, err := client.MemoryUsage(ctx, o.StreamKey).Result()
	if err != nil || o.MemoryUsageBytes == nil || *o.MemoryUsageBytes != memory {
		t.Errorf("%s: memory %v, MEMORY USAGE %d (%v)", o.StreamKey, o.MemoryUsageBytes, memory, err)
	}
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// val dereferences p for printing: nil stays nil.
func val[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

func describe(o ShardOffset) string {
	return fmt.Sprintf("{shard %d key %s slot %d node %v id %v range %v..%v length %d first %v last %v generated %v delivered %v pending %v lag %v memory %v}",
		o.Shard, o.StreamKey, o.RedisSlot, val(o.RedisNodeEndpoint), val(o.RedisNodeID), val(o.RedisSlotRangeStart), val(o.RedisSlotRangeEnd),
		o.StreamLength, val(o.FirstRecordID), val(o.LastRecordID), val(o.LastGeneratedID), val(o.GroupLastDeliveredID),
		val(o.GroupPending), val(o.Lag), val(o.MemoryUsageBytes))
}

// TestOffsetsAcrossBatches: a group of more shards than one pipeline
// observes gets every shard in order, each with its own stream's figures,
// also on both sides of a batch boundary.
func TestOffsetsAcrossBatches(t *testing.T) {
	client := newTestClient(t)
	prefix := testPrefix(t, client)
	n := 2*observeBatch + 5
	for _, i := range []int{observeBatch - 1, observeBatch, n - 1} {
		xaddN(t, client, contract.StreamKey(prefix, i), i%7+1)
	}
	offsets, err := NewObserver(client).Offsets(t.Context(), prefix, "g", n)
	if err != nil {
		t.Fatal(err)
	}
	if len(offsets) != n {
		t.Fatalf("%d offsets, want %d", len(offsets), n)
	}
	for i, o := range offsets {
		want := int64(0)
		if i == observeBatch-1 || i == observeBatch || i == n-1 {
			want = int64(i%7 + 1)
		}
		if o.Shard != i || o.StreamKey != contract.StreamKey(prefix, i) || o.StreamLength != want {
			t.Fatalf("offset %d = %s, want shard %d of length %d", i, describe(o), i, want)
		}
	}
}
