package redissink

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-stream-coordinator/coordinator/client"
	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/coordproc"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/eventually"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/testredis"
)

// coordinator starts a coordinator process (on the shared Redis, its
// store under prefix) with a 2 s lease and creates group g of prefix with
// shards shards.
func coordinator(t *testing.T, prefix string, shards int) *client.Coordinator {
	t.Helper()
	ctx := context.Background()
	bin, err := coordproc.Build(ctx, t.TempDir(), "coordinator")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := coordproc.StartServer(ctx, bin, t.TempDir(), "coord", coordproc.ServerConfig{
		Store: "redis", KeyPrefix: prefix + ":coord", RedisAddr: testredis.SharedAddr, Interval: 100 * time.Millisecond, LeaseTTL: 2 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop() })
	coord := client.NewCoordinator(srv.Base, client.WithBasicAuth("admin", "password"))
	if _, err := coord.CreateGroup(ctx, prefix, "g", shards, "test"); err != nil {
		t.Fatal(err)
	}
	return coord
}

// An Ordered consumer through the sink applies every entry once; a live
// reset that moves the shard back replays the entries after the reset's
// position, each once more, and a handler that fails now and then applies
// nothing twice.
func TestConsumerAppliesOnceAndReplaysAfterALiveReset(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a coordinator process")
	}
	t.Parallel() // a coordinator of its own, a key prefix of its own on the shared Redis
	rdb := testredis.Shared(t)
	prefix := testredis.Prefix(t, rdb)
	coord := coordinator(t, prefix, 1)
	ctx := context.Background()
	key := contract.StreamKey(prefix, 0)
	const n = 30
	var ids []string
	for i := range n {
		id, err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: key, Values: []any{"n", i}}).Result()
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	s, err := New(Config{Redis: rdb, Group: "g", KeyPrefix: prefix + ":"})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	failed := map[string]bool{}
	c, err := client.NewConsumer(client.ConsumerConfig{
		Member:  client.MemberConfig{Coordinator: coord, StreamPrefix: prefix, Group: "g", MemberID: "c"},
		Redis:   rdb,
		Ordered: true, RetryBackoff: time.Millisecond,
		Handler: s.Handler(func(_ context.Context, m client.Message, w *Writes) error {
			mu.Lock()
			first := !failed[m.ID]
			failed[m.ID] = true
			mu.Unlock()
			if first && len(failed)%7 == 0 {
				return os.ErrDeadlineExceeded // a transient failure: run again in place
			}
			w.RPush(s.Key(key, "log"), m.ID)
			return nil
		}),
	})
	if err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- c.Run(cctx) }()
	t.Cleanup(func() { cancel(); <-done })
	logKey := s.Key(key, "log")
	eventually.True(t, "every entry applied", func() bool { return rdb.LLen(ctx, logKey).Val() == n })
	lr, err := coord.LiveReset(ctx, prefix, "g", contract.OffsetReset{To: "BY", By: -5, Shards: []int{0}, RequestedBy: "test", Reason: "replay"})
	if err != nil {
		t.Fatal(err)
	}
	if lr, err = coord.WaitReset(ctx, prefix, "g", lr.ResetID, 50*time.Millisecond); err != nil || lr.State != contract.ResetDone {
		t.Fatalf("reset %+v: %v", lr, err)
	}
	eventually.True(t, "the last 5 entries applied again", func() bool { return rdb.LLen(ctx, logKey).Val() == n+5 })
	got := rdb.LRange(ctx, logKey, 0, -1).Val()
	want := append(append([]string{}, ids...), ids[n-5:]...)
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("applied %v, want %v", got, want)
		}
	}
	if st := s.Stats(); st.Applied != n+5 || st.Refused != 0 {
		t.Fatalf("stats %+v", st)
	}
}
