package redissink

import (
	"context"
	"errors"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/redis-stream-coordinator/coordinator/client"
	"github.com/redis-stream-coordinator/coordinator/client/sink"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/testredis"
)

// On a real Redis Cluster of three masters, the script runs on the node of
// the shard's slot: entries whose writes stay in the fence's slot are
// applied and acknowledged, a write elsewhere is refused before anything
// runs (the sink turns slot checks on for a *redis.ClusterClient).
func TestOnRedisCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Redis Cluster")
	}
	t.Parallel()
	c := testredis.StartCluster(t, 3).Client(t)
	ctx := context.Background()
	key := "orders:3"
	id, err := c.XAdd(ctx, &redis.XAddArgs{Stream: key, Values: []any{"amount", "7"}}).Result()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.XGroupCreate(ctx, key, "g", "0").Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: "c", Streams: []string{key, ">"}}).Err(); err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Redis: c, Group: "g"})
	if err != nil {
		t.Fatal(err)
	}
	m := msg(key, id, 4, "0-0")
	if _, err := s.Apply(ctx, m, func(_ context.Context, _ client.Message, w *Writes) error {
		w.IncrBy("total", 7) // not in the shard's slot
		return nil
	}); !errors.Is(err, ErrCrossSlot) {
		t.Fatalf("a write outside the slot: %v, want ErrCrossSlot", err)
	}
	got, err := s.Apply(ctx, m, func(_ context.Context, _ client.Message, w *Writes) error {
		w.IncrBy(s.Key(key, "total"), 7)
		return nil
	})
	if err != nil || got != sink.OutcomeApplied {
		t.Fatalf("applied %d, %v", got, err)
	}
	if v := c.Get(ctx, s.Key(key, "total")).Val(); v != "7" {
		t.Fatalf("total %q", v)
	}
	if p := c.XPending(ctx, key, "g").Val(); p.Count != 0 {
		t.Fatalf("%d entries still pending", p.Count)
	}
	if got, _ := s.Apply(ctx, msg(key, id, 3, "0-0"), func(context.Context, client.Message, *Writes) error { return nil }); got != sink.OutcomeRefused {
		t.Fatalf("a lower token: outcome %d, want refused", got)
	}
}
