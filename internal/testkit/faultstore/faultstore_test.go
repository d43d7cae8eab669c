package faultstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/faultstore"
	"github.com/redis-stream-coordinator/coordinator/persistence"
	"github.com/redis-stream-coordinator/coordinator/persistence/memory"
)

var key = group.Key{StreamPrefix: "orders", ConsumerGroup: "g"}

// create stores a new group through s.
func create(t *testing.T, s persistence.Store) persistence.Revision {
	t.Helper()
	g := group.New()
	if err := g.Create(contract.InstantOf(time.Now()), group.DefaultSettings(), key, contract.CreateRequest{RequestedBy: "t"}).Err; err != nil {
		t.Fatal(err)
	}
	rev, err := s.Create(t.Context(), key, persistence.Encode(g))
	if err != nil {
		t.Fatal(err)
	}
	return rev
}

// Before answers in place of the store; After sees the store's answer and
// may replace it (a write that happened, answered as failed); every call
// is counted and numbered, and the applied commits are kept.
func TestBeforeAndAfter(t *testing.T) {
	s := faultstore.New(memory.New())
	rev := create(t, s)
	down := errors.New("down")
	var seen []faultstore.Op
	s.Before(func(_ context.Context, op faultstore.Op) error {
		seen = append(seen, op)
		if op.Call == faultstore.CallLoad {
			return down
		}
		return nil
	})
	if _, _, err := s.Load(t.Context(), key); !errors.Is(err, down) {
		t.Fatalf("load: %v, want the Before error", err)
	}
	reset := errors.New("reset after write")
	s.After(func(op faultstore.Op, err error) error {
		if op.Call == faultstore.CallCommit && op.N == 1 {
			return reset
		}
		return err
	})
	m := persistence.Mutation{DeleteMembers: []string{"m-1"}}
	if _, err := s.Commit(t.Context(), key, rev, m); !errors.Is(err, reset) {
		t.Fatalf("first commit: %v, want the After error", err)
	}
	if got, err := s.Wrapped.Revision(t.Context(), key); err != nil || got != rev+1 {
		t.Fatalf("stored revision %d, %v: the first commit should have written", got, err)
	}
	if _, err := s.Commit(t.Context(), key, rev, m); !errors.Is(err, persistence.ErrConflict) {
		t.Fatalf("second commit at the old revision: %v, want the store's conflict", err)
	}
	if n := s.Calls(faultstore.CallCreate, faultstore.CallCommit); n != 3 {
		t.Errorf("%d creates and commits counted, want 3", n)
	}
	if n := len(s.Committed()); n != 1 {
		t.Errorf("%d commits kept, want the one applied", n)
	}
	if len(seen) != 3 || seen[1].Call != faultstore.CallCommit || seen[1].N != 1 || seen[2].N != 2 || len(seen[2].Mutation.DeleteMembers) != 1 {
		t.Errorf("Before saw %+v", seen)
	}
}

// Hold holds the next call of its kind only, until released.
func TestHold(t *testing.T) {
	s := faultstore.New(memory.New())
	entered, release := s.Hold(faultstore.CallExists)
	if _, err := s.Revision(t.Context(), key); !errors.Is(err, persistence.ErrNotFound) {
		t.Fatalf("revision: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := s.Exists(context.Background(), key)
		done <- err
	}()
	<-entered
	select {
	case err := <-done:
		t.Fatalf("held call returned %v", err)
	case <-time.After(10 * time.Millisecond):
	}
	release()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if ok, err := s.Exists(t.Context(), key); ok || err != nil {
		t.Fatalf("second exists: %v, %v", ok, err)
	}
}
