package breaker

import (
	"errors"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/sony/gobreaker/v2"

	"github.com/redis-stream-coordinator/coordinator/internal/testkit/storetest"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/testredis"
	"github.com/redis-stream-coordinator/coordinator/persistence"
	"github.com/redis-stream-coordinator/coordinator/persistence/redis"
)

// TestRedisOutage kills the Redis under a breaker-wrapped store: calls
// fail, the breaker opens and answers ErrUnavailable without calling
// Redis; after a restart it closes again and the store works (the
// throwaway server keeps no data, so the group is gone).
func TestRedisOutage(t *testing.T) {
	srv := testredis.Start(t)
	client := goredis.NewClient(&goredis.Options{Addr: srv.Addr, MaxRetries: -1})
	t.Cleanup(func() { _ = client.Close() })
	rs, err := redis.New(redis.Options{Client: client, KeyPrefix: "fault"})
	if err != nil {
		t.Fatal(err)
	}
	var tr transitions
	b, err := New(Options{Name: "redis", ConsecutiveFailures: 3, OpenTimeout: 50 * time.Millisecond, CallTimeout: 5 * time.Second, OnStateChange: tr.record})
	if err != nil {
		t.Fatal(err)
	}
	s := b.Store(rs)
	ctx, key := t.Context(), storetest.Key(t)
	doc := persistence.Encode(storetest.Group(key, "m-1"))
	if _, err := s.Create(ctx, key, doc); err != nil {
		t.Fatal(err)
	}

	srv.Kill()
	for b.State() == "closed" {
		if _, _, err := s.Load(ctx, key); !errors.Is(err, persistence.ErrUnavailable) {
			t.Fatalf("load from a dead server: %v", err)
		}
	}
	if _, err := s.Revision(ctx, key); !errors.Is(err, persistence.ErrUnavailable) || !errors.Is(err, gobreaker.ErrOpenState) {
		t.Fatalf("open breaker: %v", err)
	}

	srv.Restart()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		_, _, err := s.Load(ctx, key)
		if errors.Is(err, persistence.ErrNotFound) && b.State() == "closed" {
			break
		}
		if !errors.Is(err, persistence.ErrUnavailable) && !errors.Is(err, persistence.ErrNotFound) {
			t.Fatalf("load while recovering: %v", err)
		}
		select {
		case <-ctx.Done():
			t.Fatalf("breaker did not close: %s, last error %v", b.State(), err)
		case <-tick.C:
		}
	}
	if rev, err := s.Create(ctx, key, doc); err != nil || rev != 1 {
		t.Fatalf("create after recovery: %d, %v", rev, err)
	}
	if _, rev, err := s.Load(ctx, key); err != nil || rev != 1 {
		t.Fatalf("load after recovery: %d, %v", rev, err)
	}
	if got := tr.get(); len(got) < 3 || got[0] != "closed→open" || got[len(got)-1] != "half-open→closed" {
		t.Errorf("transitions %v", got)
	}
}
