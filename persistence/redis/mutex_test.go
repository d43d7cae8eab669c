package redis

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/redis-stream-coordinator/coordinator/internal/testkit/storetest"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/testredis"
	"github.com/redis-stream-coordinator/coordinator/persistence"
)

func newLocker(t *testing.T, c goredis.UniversalClient, prefix, id string, ttl, acquire time.Duration) *Locker {
	l, err := NewLocker(MutexOptions{
		Client: c, KeyPrefix: prefix, CoordinatorID: id,
		TTL: ttl, AcquireTimeout: acquire, RetryInterval: 5 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestMutexExcludes(t *testing.T) {
	c := testredis.Shared(t)
	prefix := testredis.Prefix(t, c)
	a := newLocker(t, c, prefix, "coord-a", time.Minute, 50*time.Millisecond)
	b := newLocker(t, c, prefix, "coord-b", time.Minute, 50*time.Millisecond)
	ctx := t.Context()
	key, other := storetest.Key(t), storetest.Key(t)

	unlock, err := a.Lock(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	token, err := c.Get(ctx, prefix+":{"+key.StreamPrefix+":"+key.ConsumerGroup+"}:mutex").Result()
	if err != nil || !strings.HasPrefix(token, "coord-a:") {
		t.Fatalf("mutex token %q, %v", token, err)
	}
	if _, err := b.Lock(ctx, key); !errors.Is(err, persistence.ErrLockTimeout) {
		t.Fatalf("second holder: %v, want ErrLockTimeout", err)
	}
	unlockOther, err := b.Lock(ctx, other)
	if err != nil {
		t.Fatalf("another group waits on this one: %v", err)
	}
	unlockOther()

	// b waits while a holds the mutex and gets it once a lets go.
	b = newLocker(t, c, prefix, "coord-b", time.Minute, time.Minute)
	got := make(chan error, 1)
	go func() {
		unlockB, err := b.Lock(ctx, key)
		if err == nil {
			unlockB()
		}
		got <- err
	}()
	unlock()
	unlock() // idempotent
	if err := <-got; err != nil {
		t.Fatalf("waiter after unlock: %v", err)
	}
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := b.Lock(canceled, key); !errors.Is(err, context.Canceled) {
		t.Errorf("lock with canceled context: %v", err)
	}
}

// TestMutexRenewal holds a mutex with a short TTL and waits until a
// renewal has pushed its expiry up, then checks that unlock deletes only
// its own token.
func TestMutexRenewal(t *testing.T) {
	c := testredis.Shared(t)
	prefix := testredis.Prefix(t, c)
	l := newLocker(t, c, prefix, "coord", 300*time.Millisecond, time.Second)
	ctx := t.Context()
	key := storetest.Key(t)
	mk := l.mutexKey(key)
	unlock, err := l.Lock(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	first, err := c.PTTL(ctx, mk).Result()
	if err != nil || first <= 0 {
		t.Fatalf("pttl %v, %v", first, err)
	}
	poll := time.NewTicker(5 * time.Millisecond)
	defer poll.Stop()
	for prev := first; ; <-poll.C {
		ttl, err := c.PTTL(ctx, mk).Result()
		if err != nil || ttl <= 0 {
			t.Fatalf("mutex expired while held: pttl %v, %v", ttl, err)
		}
		if ttl > prev {
			break // renewed
		}
		prev = ttl
	}
	// Another holder took over (say after a stall); unlock must not free it.
	if err := c.Set(ctx, mk, "someone-else", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	unlock()
	if v, err := c.Get(ctx, mk).Result(); err != nil || v != "someone-else" {
		t.Errorf("unlock removed another holder's mutex: %q, %v", v, err)
	}
}

func TestMutexUnavailable(t *testing.T) {
	srv := testredis.Start(t)
	c := goredis.NewClient(&goredis.Options{Addr: srv.Addr, MaxRetries: -1})
	t.Cleanup(func() { _ = c.Close() })
	l := newLocker(t, c, "p", "coord", time.Minute, time.Minute)
	srv.Kill()
	if _, err := l.Lock(t.Context(), storetest.Key(t)); !errors.Is(err, persistence.ErrUnavailable) {
		t.Errorf("lock on a dead server: %v", err)
	}
}

func TestMutexOptions(t *testing.T) {
	c := goredis.NewClient(&goredis.Options{Addr: testredis.SharedAddr})
	t.Cleanup(func() { _ = c.Close() })
	for name, o := range map[string]MutexOptions{
		"no client": {CoordinatorID: "x"},
		"no id":     {Client: c},
		"tiny ttl":  {Client: c, CoordinatorID: "x", TTL: time.Millisecond},
		"negative":  {Client: c, CoordinatorID: "x", RetryInterval: -time.Second},
	} {
		if _, err := NewLocker(o); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	l, err := NewLocker(MutexOptions{Client: c, CoordinatorID: "x"})
	if err != nil || l.o.TTL != DefaultMutexTTL || l.o.AcquireTimeout != DefaultMutexAcquireTimeout ||
		l.o.RetryInterval != DefaultMutexRetryInterval || l.o.KeyPrefix != DefaultKeyPrefix {
		t.Errorf("defaults: %+v, %v", l.o, err)
	}
	if _, err := New(Options{}); err == nil {
		t.Error("store without client accepted")
	}
}

// A mutex this coordinator left behind (its release never reached Redis,
// e.g. Redis restarted with the key on disk) is taken over at once by the
// same coordinator id; any other coordinator still waits for its TTL.
func TestMutexTakesOverItsOwnLeftover(t *testing.T) {
	c := testredis.Shared(t)
	prefix := testredis.Prefix(t, c)
	ctx := t.Context()
	key := storetest.Key(t)
	mk := prefix + ":{" + key.StreamPrefix + ":" + key.ConsumerGroup + "}:mutex"
	if err := c.Set(ctx, mk, "coord-a:left-behind", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	b := newLocker(t, c, prefix, "coord-b", time.Minute, 50*time.Millisecond)
	if _, err := b.Lock(ctx, key); !errors.Is(err, persistence.ErrLockTimeout) {
		t.Fatalf("another coordinator: %v, want ErrLockTimeout", err)
	}
	// "coord-a" must not match a coordinator named "coord-ab".
	ab := newLocker(t, c, prefix, "coord-ab", time.Minute, 50*time.Millisecond)
	if _, err := ab.Lock(ctx, key); !errors.Is(err, persistence.ErrLockTimeout) {
		t.Fatalf("coordinator with a longer id: %v, want ErrLockTimeout", err)
	}
	a := newLocker(t, c, prefix, "coord-a", time.Minute, time.Hour)
	unlock, err := a.Lock(ctx, key)
	if err != nil {
		t.Fatalf("own leftover: %v", err)
	}
	if tok, _ := c.Get(ctx, mk).Result(); tok == "coord-a:left-behind" || !strings.HasPrefix(tok, "coord-a:") {
		t.Fatalf("token after takeover %q", tok)
	}
	unlock()
	if n, _ := c.Exists(ctx, mk).Result(); n != 0 {
		t.Fatal("unlock left the mutex")
	}
}
