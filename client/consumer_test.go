package client

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-stream-coordinator/coordinator/internal/eventually"
)

// A consumer handles every entry once, first reclaiming the entries a dead
// previous owner left pending (with their delivery counts), and moves an
// entry that keeps failing to the dead-letter stream.
func TestConsumerReclaimsAndDeadLetters(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a coordinator process")
	}
	coord, rdb := provisionedGroup(t, "jobs", "cons")
	ctx := context.Background()
	p, _ := NewProducer(ProducerConfig{Coordinator: coord, Redis: rdb, StreamPrefix: "jobs", Group: "g", NoMkStream: true})
	const n = 200
	for i := range n {
		values := map[string]any{"key": fmt.Sprintf("k%d", i%10), "seq": i}
		if i == 77 {
			values["fail"] = "yes"
		}
		if _, _, err := p.Send(ctx, fmt.Sprintf("k%d", i%10), values); err != nil {
			t.Fatal(err)
		}
	}
	// A previous owner read 5 entries of every shard and died.
	ghost := map[string]bool{}
	for s := range 4 {
		res, err := rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: "ghost", Streams: []string{"jobs:" + itoa(s), ">"}, Count: 5, Block: -1}).Result()
		if err != nil && !errors.Is(err, redis.Nil) {
			t.Fatal(err)
		}
		for _, st := range res {
			for _, m := range st.Messages {
				ghost[st.Stream+"/"+m.ID] = true
			}
		}
	}
	var mu sync.Mutex
	seen := map[string]int64{} // stream/id -> deliveries of the successful handling
	starts := map[int]int{}
	c, err := NewConsumer(ConsumerConfig{
		Member:       MemberConfig{Coordinator: coord, StreamPrefix: "jobs", Group: "g", MemberID: "c1", LeaseTTL: 3 * time.Second},
		Redis:        rdb,
		Workers:      3,
		ClaimMinIdle: 200 * time.Millisecond, MaxDeliveries: 3,
		Handler: func(_ context.Context, m Message) error {
			if m.Values["fail"] == "yes" {
				return errors.New("poison")
			}
			mu.Lock()
			defer mu.Unlock()
			id := m.Stream + "/" + m.ID
			if _, dup := seen[id]; dup {
				t.Errorf("%s handled twice", id)
			}
			seen[id] = m.Deliveries
			return nil
		},
		OnShardStart: func(s int) { mu.Lock(); starts[s]++; mu.Unlock() },
	})
	if err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- c.Run(cctx) }()
	eventually.True(t, "every entry handled and the poison dead-lettered", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(seen) == n-1 && rdb.XLen(ctx, "jobs-dead-letter").Val() == 1
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(ghost) == 0 {
		t.Fatal("the ghost read nothing")
	}
	for id := range ghost {
		if d, ok := seen[id]; ok && d < 2 {
			t.Errorf("ghost entry %s handled with %d deliveries, want ≥ 2", id, d)
		}
	}
	dl, _ := rdb.XRange(ctx, "jobs-dead-letter", "-", "+").Result()
	if len(dl) != 1 || dl[0].Values["deliveries"] != "3" || dl[0].Values["field:fail"] != "yes" || dl[0].Values["group"] != "g" {
		t.Errorf("dead letters %+v", dl)
	}
	for s := range 4 {
		if pend := rdb.XPending(ctx, "jobs:"+itoa(s), "g").Val(); pend.Count != 0 {
			t.Errorf("shard %d: %d entries still pending", s, pend.Count)
		}
	}
	if len(starts) != 4 {
		t.Errorf("shards started %v", starts)
	}
}
