package ratelimit

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

var t0 = time.Date(2026, 5, 21, 0, 0, 0, 0, time.UTC)

func newLimiter(t *testing.T, permits int) *Limiter {
	t.Helper()
	l, err := New(permits, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestFixedWindow(t *testing.T) {
	l := newLimiter(t, 60)
	key := Key("admin", "orders", "orders-consumer")
	for i := range 60 {
		if ok, _ := l.Allow(key, t0.Add(time.Duration(i)*time.Second/2)); !ok {
			t.Fatalf("request %d refused", i+1)
		}
	}
	now := t0.Add(45 * time.Second)
	ok, retry := l.Allow(key, now)
	if ok {
		t.Fatal("61st request allowed")
	}
	if retry != 15*time.Second {
		t.Fatalf("retryAfter = %s, want 15s (window from the first request)", retry)
	}
	if ok, _ := l.Allow(Key("admin", "orders", ""), now); !ok {
		t.Fatal("stream-level key affected by the group key")
	}
	if ok, _ := l.Allow(Key("grafana", "orders", "orders-consumer"), now); !ok {
		t.Fatal("other principal affected")
	}
	if ok, retry := l.Allow(key, t0.Add(time.Minute-time.Nanosecond)); ok || retry != time.Nanosecond {
		t.Fatalf("last instant of the window = %v, %s; want refused, 1ns", ok, retry)
	}
	// The window ends exactly one window after the first request.
	if ok, _ := l.Allow(key, t0.Add(time.Minute)); !ok {
		t.Fatal("request in the new window refused")
	}
	for i := 1; i < 60; i++ {
		if ok, _ := l.Allow(key, t0.Add(time.Minute+time.Second)); !ok {
			t.Fatalf("new window request %d refused", i+1)
		}
	}
	if ok, retry := l.Allow(key, t0.Add(time.Minute+time.Second)); ok || retry != 59*time.Second {
		t.Fatalf("new window overflow = %v, %s; want refused, 59s", ok, retry)
	}
}

func TestRetryAfterInWindow(t *testing.T) {
	l := newLimiter(t, 1)
	l.Allow("k", t0)
	for _, d := range []time.Duration{0, time.Nanosecond, time.Second, 59 * time.Second, time.Minute - 1} {
		ok, retry := l.Allow("k", t0.Add(d))
		if ok || retry <= 0 || retry > time.Minute {
			t.Errorf("at +%s: ok=%v retryAfter=%s, want refused in (0, 1m]", d, ok, retry)
		}
	}
}

func TestNonPositiveMaxRejects(t *testing.T) {
	for _, permits := range []int{0, -1} {
		l := newLimiter(t, permits)
		for i := range 3 {
			if ok, retry := l.Allow("k", t0.Add(time.Duration(i)*time.Hour)); ok || retry != time.Minute {
				t.Fatalf("max %d: Allow = %v, %s; want refused, 1m", permits, ok, retry)
			}
		}
	}
}

func TestNewRejectsBadWindow(t *testing.T) {
	if _, err := New(1, 0); err == nil {
		t.Fatal("zero window accepted")
	}
}

func TestSweepBoundsMemory(t *testing.T) {
	l := newLimiter(t, 5)
	for i := range 1000 {
		l.Allow(fmt.Sprint("k", i), t0)
	}
	l.Allow("late", t0.Add(time.Minute))
	if n := len(l.windows); n != 1 {
		t.Fatalf("%d windows kept after expiry, want 1", n)
	}
	// A key refused by a full window keeps its window until it expires.
	for range 6 {
		l.Allow("late", t0.Add(time.Minute+time.Second))
	}
	if ok, _ := l.Allow("late", t0.Add(time.Minute+2*time.Second)); ok {
		t.Fatal("full window forgotten")
	}
}

func TestKey(t *testing.T) {
	for _, tc := range [][4]string{
		{"admin", "orders", "g", "admin:orders:g"},
		{"admin", "orders", "", "admin:orders:*"},
	} {
		if got := Key(tc[0], tc[1], tc[2]); got != tc[3] {
			t.Errorf("Key(%q, %q, %q) = %q, want %q", tc[0], tc[1], tc[2], got, tc[3])
		}
	}
}

func TestRetryAfterSeconds(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want int64
	}{
		{0, 1}, {time.Nanosecond, 1}, {time.Second, 1}, {time.Second + 1, 2}, {59500 * time.Millisecond, 60}, {time.Minute, 60},
	} {
		if got := RetryAfterSeconds(tc.d); got != tc.want {
			t.Errorf("RetryAfterSeconds(%s) = %d, want %d", tc.d, got, tc.want)
		}
	}
}

func TestConcurrentAllow(t *testing.T) {
	const permits, workers, perWorker = 100, 8, 50
	l := newLimiter(t, permits)
	var granted [2]atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range perWorker {
				key := i % 2
				if ok, _ := l.Allow(fmt.Sprint("key", key), t0.Add(time.Duration(w*perWorker+i)*time.Millisecond)); ok {
					granted[key].Add(1)
				}
			}
		})
	}
	wg.Wait()
	for key := range granted {
		if got := granted[key].Load(); got != permits {
			t.Errorf("key%d: %d permits granted, want %d", key, got, permits)
		}
	}
}

func TestExhausted(t *testing.T) {
	l := newLimiter(t, 2)
	for i := range 2 {
		if ex, _ := l.Exhausted("k", t0); ex {
			t.Fatalf("exhausted after %d permits", i)
		}
		l.Allow("k", t0)
	}
	if ex, retry := l.Exhausted("k", t0.Add(20*time.Second)); !ex || retry != 40*time.Second {
		t.Fatalf("Exhausted = %v, %s; want true, 40s", ex, retry)
	}
	if ex, _ := l.Exhausted("k", t0.Add(time.Minute)); ex {
		t.Fatal("exhausted in the next window")
	}
}
