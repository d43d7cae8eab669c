package client

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// The routing of the Go client agrees with the Murmur3 vectors of
// docs/protocol.md §6.7 (the shard the reference clients pick).
func TestShardForProtocolVectors(t *testing.T) {
	ns := []int{2, 3, 4, 7, 12, 20, 1000}
	for _, v := range []struct {
		key  string
		want []int
	}{
		{"order-123", []int{1, 1, 1, 6, 1, 1, 941}},
		{"a", []int{0, 2, 2, 4, 2, 10, 850}},
		{"", []int{0, 0, 0, 0, 0, 0, 0}},
		{"abc", []int{0, 2, 2, 3, 2, 2, 2}},
		{"abcd", []int{0, 0, 2, 2, 6, 18, 978}},
		{"주문-1", []int{0, 0, 0, 5, 0, 8, 368}},
	} {
		for i, n := range ns {
			if got := ShardFor(v.key, n); got != v.want[i] {
				t.Errorf("ShardFor(%q, %d) = %d, want %d", v.key, n, got, v.want[i])
			}
		}
	}
	// Re-hash vector: the first hash is rejected.
	if got := ShardFor("user-42", 1500000000); got != 339149687 {
		t.Errorf("ShardFor(user-42, 1.5e9) = %d, want 339149687", got)
	}
}

// A producer writes each key to its routed shard of a provisioned group,
// and after the stream is scaled it follows the new routing.
func TestProducerRoutesAndRefreshes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a coordinator process")
	}
	t.Parallel() // a throwaway Redis and a coordinator of its own
	coord, rdb := provisionedGroup(t, "orders", "prod")
	ctx := context.Background()
	p, err := NewProducer(ProducerConfig{Coordinator: coord, Redis: rdb, StreamPrefix: "orders", Group: "g", NoMkStream: true, MaxLen: 1000, RefreshInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"order-123", "a", "abc", "abcd"} {
		_, shard, err := p.Send(ctx, key, map[string]any{"key": key})
		if err != nil {
			t.Fatal(err)
		}
		if want := ShardFor(key, 4); shard != want {
			t.Errorf("%s went to shard %d, want %d", key, shard, want)
		}
	}
	if n := rdb.XLen(ctx, "orders:1").Val(); n != 1 { // order-123
		t.Errorf("orders:1 holds %d entries, want 1", n)
	}
	if err := coord.ScaleStream(ctx, "orders", 8, "test"); err != nil {
		t.Fatal(err)
	}
	if err := p.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	r, _ := p.Routing(ctx)
	if r.ShardCount != 8 || r.Shards[7].StreamKey != "orders:7" {
		t.Fatalf("routing after scale: %+v", r)
	}
	if _, shard, err := p.Send(ctx, "abcd", map[string]any{"key": "abcd"}); err != nil || shard != ShardFor("abcd", 8) {
		t.Errorf("after scale: shard %d, %v", shard, err)
	}
	// A missing shard key (NOMKSTREAM) is a stale route: the producer
	// re-reads the routing (which provisions the key again) and retries.
	key := "orders:" + itoa(ShardFor("zzz", 8))
	rdb.Del(ctx, key)
	if _, _, err := p.Send(ctx, "zzz", map[string]any{"key": "zzz"}); err != nil {
		t.Fatalf("write after the shard key vanished: %v", err)
	}
	if n := rdb.XLen(ctx, key).Val(); n != 1 {
		t.Errorf("%s holds %d entries, want 1", key, n)
	}
	// PublishBatch: one pipeline, a result per record, the key written to
	// the key field once.
	var recs []Record
	for i := range 40 {
		recs = append(recs, Record{Key: fmt.Sprintf("batch-%d", i), Values: map[string]any{"n": i}})
	}
	for i, res := range p.PublishBatch(ctx, recs) {
		if res.Err != nil || res.Shard != ShardFor(recs[i].Key, 8) {
			t.Fatalf("record %d: %+v", i, res)
		}
		got, err := rdb.XRange(ctx, "orders:"+itoa(res.Shard), res.ID, res.ID).Result()
		if err != nil || len(got) != 1 || got[0].Values["key"] != recs[i].Key {
			t.Fatalf("record %d stored as %+v (%v)", i, got, err)
		}
	}
}
