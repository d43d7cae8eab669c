package streams

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/redis-stream-coordinator/coordinator/internal/testkit/fakeclock"
)

// loader counts calls and returns the values it is told to.
type loader struct {
	calls atomic.Int32
	value atomic.Int32
	err   atomic.Pointer[error]
	gate  chan struct{} // when set, every load waits for a receive from it
}

func (l *loader) load(context.Context) (int, error) {
	l.calls.Add(1)
	if l.gate != nil {
		<-l.gate
	}
	if err := l.err.Load(); err != nil {
		return 0, *err
	}
	return int(l.value.Load()), nil
}

func mustGet(t *testing.T, c *Cache[string, int], version int, l *loader, want int) {
	t.Helper()
	got, err := c.Get(t.Context(), "k", version, l.load)
	if err != nil || got != want {
		t.Fatalf("Get = %d, %v; want %d", got, err, want)
	}
}

// newTestCache returns a cache with ttl whose ages are read from a fake
// clock at 1000 s.
func newTestCache(ttl time.Duration) (*Cache[string, int], *fakeclock.Clock) {
	clock := fakeclock.New(time.Unix(1000, 0))
	return NewCache[string, int](ttl, clock.Now), clock
}

// wantLoads fails the test unless l was called n times.
func wantLoads(t *testing.T, l *loader, n int32) {
	t.Helper()
	if got := l.calls.Load(); got != n {
		t.Fatalf("loads = %d, want %d", got, n)
	}
}

func TestCacheFreshStaleAndVersion(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, clock := newTestCache(15 * time.Second)
		l := &loader{}
		l.value.Store(1)

		mustGet(t, c, 4, l, 1) // miss: synchronous load
		l.value.Store(2)
		clock.Advance(14 * time.Second)
		mustGet(t, c, 4, l, 1) // fresh
		wantLoads(t, l, 1)

		clock.Advance(time.Second) // expired: stale value, background refresh
		mustGet(t, c, 4, l, 1)
		synctest.Wait()
		wantLoads(t, l, 2)
		mustGet(t, c, 4, l, 2) // refreshed, fresh again

		l.value.Store(3)
		mustGet(t, c, 8, l, 3) // shard count changed: synchronous reload
		wantLoads(t, l, 3)
	})
}

func TestCacheRefreshesAtMostOnceAtATime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, clock := newTestCache(time.Second)
		l := &loader{}
		l.value.Store(1)
		mustGet(t, c, 1, l, 1)

		l.gate = make(chan struct{})
		l.value.Store(2)
		clock.Advance(time.Second)
		for range 5 {
			mustGet(t, c, 1, l, 1) // stale while the one refresh is blocked
		}
		synctest.Wait()
		if n := l.calls.Load(); n != 2 {
			t.Fatalf("loads = %d, want 2 (one refresh)", n)
		}
		l.gate <- struct{}{}
		synctest.Wait()
		l.gate = nil
		mustGet(t, c, 1, l, 2)
	})
}

func TestCacheFailedRefreshKeepsStaleValue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, clock := newTestCache(time.Second)
		l := &loader{}
		l.value.Store(1)
		mustGet(t, c, 1, l, 1)

		boom := errors.New("redis down")
		l.err.Store(&boom)
		clock.Advance(time.Second)
		mustGet(t, c, 1, l, 1)
		synctest.Wait()
		mustGet(t, c, 1, l, 1) // still stale; this Get retries the refresh
		synctest.Wait()
		wantLoads(t, l, 3)

		l.err.Store(nil)
		l.value.Store(2)
		mustGet(t, c, 1, l, 1)
		synctest.Wait()
		mustGet(t, c, 1, l, 2)
	})
}

func TestCacheMissErrorIsNotStored(t *testing.T) {
	c, _ := newTestCache(time.Second)
	l := &loader{}
	boom := errors.New("redis down")
	l.err.Store(&boom)
	if _, err := c.Get(t.Context(), "k", 1, l.load); !errors.Is(err, boom) {
		t.Fatalf("Get error = %v", err)
	}
	l.err.Store(nil)
	l.value.Store(7)
	mustGet(t, c, 1, l, 7)
	wantLoads(t, l, 2)
}

func TestCacheConcurrentMissesShareOneLoad(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := newTestCache(time.Second)
		l := &loader{gate: make(chan struct{})}
		l.value.Store(5)
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() { mustGet(t, c, 1, l, 5) })
		}
		synctest.Wait()
		l.gate <- struct{}{} // exactly one load is waiting
		wg.Wait()
		wantLoads(t, l, 1)
	})
}

// An update stores only a key some Get loaded: it then serves the value
// fresh for the ttl at its version, without loads. A key never read is
// not stored, and a disabled cache stores nothing.
func TestCacheUpdate(t *testing.T) {
	value := func(v int) func() int { return func() int { return v } }
	c, clock := newTestCache(15 * time.Second)
	l := &loader{}
	if c.Update("k", 4, value(1)) {
		t.Fatal("an update of a key never read stored it")
	}
	l.value.Store(3)
	mustGet(t, c, 4, l, 3) // the miss loads
	wantLoads(t, l, 1)
	l.value.Store(9)
	if !c.Update("k", 4, value(1)) {
		t.Fatal("an update of a read key did not store it")
	}
	clock.Advance(14 * time.Second)
	mustGet(t, c, 4, l, 1)
	wantLoads(t, l, 1)
	c.Update("k", 4, value(2)) // an update makes an expiring value fresh again
	clock.Advance(14 * time.Second)
	mustGet(t, c, 4, l, 2)
	mustGet(t, c, 8, l, 9) // another version: a miss
	wantLoads(t, l, 2)

	off := NewCache[string, int](0, time.Now)
	if off.Update("k", 1, value(1)) {
		t.Fatal("a disabled cache stored an update")
	}
	mustGet(t, off, 1, l, 9)
}

func TestCacheDisabled(t *testing.T) {
	c := NewCache[string, int](0, time.Now)
	l := &loader{}
	for want := range 3 {
		l.value.Store(int32(want))
		mustGet(t, c, 1, l, want)
	}
}

func TestCacheMissWaitHonoursContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := newTestCache(time.Second)
		l := &loader{gate: make(chan struct{})}
		go func() { _, _ = c.Get(context.Background(), "k", 1, l.load) }()
		synctest.Wait() // the first Get is loading

		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if _, err := c.Get(ctx, "k", 1, l.load); !errors.Is(err, context.Canceled) {
			t.Fatalf("Get while another loads, cancelled = %v", err)
		}
		l.gate <- struct{}{}
	})
}

// Forget drops what expired before its cut and keeps what is fresher, or
// is being refreshed; a forgotten key is loaded again.
func TestCacheForget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, clock := newTestCache(15 * time.Second)
		l := &loader{}
		l.value.Store(1)
		mustGet(t, c, 4, l, 1)
		clock.Advance(time.Minute)
		c.Forget(clock.Peek().Add(-time.Hour)) // expired 45 s ago, after the cut: kept
		l.gate = make(chan struct{})
		l.value.Store(2)
		mustGet(t, c, 4, l, 1) // stale: starts a refresh, held at the gate
		synctest.Wait()
		c.Forget(clock.Peek().Add(time.Hour)) // expired by then, but being refreshed: kept
		l.gate <- struct{}{}
		synctest.Wait()
		mustGet(t, c, 4, l, 2)
		wantLoads(t, l, 2)

		c.Forget(clock.Peek().Add(time.Hour))
		if len(c.entries) != 0 {
			t.Fatalf("after Forget: %d entries", len(c.entries))
		}
		l.gate = nil
		l.value.Store(3)
		mustGet(t, c, 4, l, 3) // a miss: loaded again
		wantLoads(t, l, 3)
	})
}
