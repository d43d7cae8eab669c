package breaker

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sony/gobreaker/v2"

	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/faultstore"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/storetest"
	"github.com/redis-stream-coordinator/coordinator/persistence"
	"github.com/redis-stream-coordinator/coordinator/persistence/memory"
)

func TestContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) persistence.Store {
		b, err := New(Options{Name: "test", CallTimeout: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		return b.Store(memory.New())
	}, storetest.Options{})
}

// faulty is the test kit's fault-injecting store
// (internal/testkit/faultstore) on a memory store, whose Revision returns
// the error fail set.
type faulty struct{ *faultstore.Store }

func newFaulty() faulty { return faulty{faultstore.New(memory.New())} }

// fail makes every later Revision return err; nil: the store's answer.
func (f faulty) fail(err error) {
	f.Before(func(_ context.Context, op faultstore.Op) error {
		if op.Call == faultstore.CallRevision {
			return err
		}
		return nil
	})
}

// calls counts the Revision calls the breaker let through to f.
func (f faulty) calls() int { return f.Calls(faultstore.CallRevision) }

// transitions records OnStateChange calls.
type transitions struct {
	mu   sync.Mutex
	seen []string
}

func (tr *transitions) record(from, to string) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.seen = append(tr.seen, from+"→"+to)
}

func (tr *transitions) get() []string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return slices.Clone(tr.seen)
}

// waitState polls b until it reports want.
func waitState(t *testing.T, b *Breaker, want string) {
	t.Helper()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for b.State() != want {
		select {
		case <-t.Context().Done():
			t.Fatalf("breaker stayed %s, want %s", b.State(), want)
		case <-tick.C:
		}
	}
}

func TestTripsAndRecovers(t *testing.T) {
	var tr transitions
	b, err := New(Options{Name: "store", ConsecutiveFailures: 3, OpenTimeout: 20 * time.Millisecond, OnStateChange: tr.record})
	if err != nil {
		t.Fatal(err)
	}
	f := newFaulty()
	s := b.Store(f)
	ctx, key := t.Context(), storetest.Key(t)

	// Answers from a working backend never trip it.
	for _, e := range []error{persistence.ErrConflict, persistence.ErrNotFound, persistence.ErrAlreadyExists, persistence.ErrCorrupt, persistence.ErrLockTimeout, context.Canceled} {
		f.fail(fmt.Errorf("wrapped: %w", e))
		for range 5 {
			if _, err := s.Revision(ctx, key); !errors.Is(err, e) {
				t.Fatalf("got %v, want %v", err, e)
			}
		}
	}
	if b.State() != "closed" {
		t.Fatalf("tripped by non-failures: %s", b.State())
	}

	f.fail(fmt.Errorf("down: %w", persistence.ErrUnavailable))
	for range 3 {
		if _, err := s.Revision(ctx, key); !errors.Is(err, persistence.ErrUnavailable) {
			t.Fatal(err)
		}
	}
	if b.State() != "open" {
		t.Fatalf("state %s after 3 failures", b.State())
	}
	before := f.calls()
	_, err = s.Revision(ctx, key)
	if !errors.Is(err, persistence.ErrUnavailable) || !errors.Is(err, gobreaker.ErrOpenState) || f.calls() != before {
		t.Fatalf("open breaker: %v, backend calls %d→%d", err, before, f.calls())
	}

	// A failed probe opens it again; a successful one closes it.
	waitState(t, b, "half-open")
	if _, err := s.Revision(ctx, key); !errors.Is(err, persistence.ErrUnavailable) {
		t.Fatal(err)
	}
	waitState(t, b, "half-open")
	f.fail(nil)
	if _, err := s.Revision(ctx, key); !errors.Is(err, persistence.ErrNotFound) {
		t.Fatal(err)
	}
	if b.State() != "closed" {
		t.Fatalf("state %s after a successful probe", b.State())
	}
	want := []string{"closed→open", "open→half-open", "half-open→open", "open→half-open", "half-open→closed"}
	if got := tr.get(); !slices.Equal(got, want) {
		t.Errorf("transitions %v, want %v", got, want)
	}
}

func TestCanceledProbeDoesNotClose(t *testing.T) {
	b, err := New(Options{ConsecutiveFailures: 1, OpenTimeout: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	f := newFaulty()
	s := b.Store(f)
	f.fail(persistence.ErrUnavailable)
	if _, err := s.Revision(t.Context(), storetest.Key(t)); err == nil {
		t.Fatal("no error")
	}
	waitState(t, b, "half-open")
	f.fail(context.Canceled)
	if _, err := s.Revision(t.Context(), storetest.Key(t)); !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
	if st := b.State(); st != "half-open" {
		t.Errorf("state %s after a canceled probe, want half-open", st)
	}
}

// blocking is a store (internal/testkit/faultstore on a memory store)
// whose Revision waits for its context to end.
func blocking() *faultstore.Store {
	s := faultstore.New(memory.New())
	s.Before(func(ctx context.Context, op faultstore.Op) error {
		if op.Call == faultstore.CallRevision {
			<-ctx.Done()
			return ctx.Err()
		}
		return nil
	})
	return s
}

func TestCallTimeout(t *testing.T) {
	b, err := New(Options{ConsecutiveFailures: 2, CallTimeout: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	s := b.Store(blocking())
	for range 2 {
		if _, err := s.Revision(t.Context(), storetest.Key(t)); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("got %v, want deadline exceeded", err)
		}
	}
	if b.State() != "open" {
		t.Errorf("timeouts did not count as failures: %s", b.State())
	}
}

// lockerFunc adapts a function to persistence.Locker.
type lockerFunc func(context.Context, group.Key) (func(), error)

func (f lockerFunc) Lock(ctx context.Context, k group.Key) (func(), error) { return f(ctx, k) }

func TestLocker(t *testing.T) {
	b, err := New(Options{ConsecutiveFailures: 2, OpenTimeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	var result atomic.Pointer[error]
	calls := 0
	l := b.Locker(lockerFunc(func(context.Context, group.Key) (func(), error) {
		calls++
		if err := result.Load(); err != nil {
			return nil, *err
		}
		return func() {}, nil
	}))
	unlock, err := l.Lock(t.Context(), storetest.Key(t))
	if err != nil || unlock == nil {
		t.Fatalf("lock: %v", err)
	}
	unlock()
	for _, e := range []error{persistence.ErrLockTimeout, persistence.ErrLockTimeout, persistence.ErrUnavailable, persistence.ErrUnavailable} {
		result.Store(&e)
		if _, err := l.Lock(t.Context(), storetest.Key(t)); !errors.Is(err, e) {
			t.Fatalf("got %v, want %v", err, e)
		}
	}
	if _, err := l.Lock(t.Context(), storetest.Key(t)); !errors.Is(err, gobreaker.ErrOpenState) || calls != 5 {
		t.Errorf("open breaker: %v after %d backend calls", err, calls)
	}
}

func TestOptions(t *testing.T) {
	for _, o := range []Options{{CallTimeout: -1}, {OpenTimeout: -1}} {
		if _, err := New(o); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
}
