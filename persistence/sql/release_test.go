package sql

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/storetest"
	"github.com/redis-stream-coordinator/coordinator/persistence"
)

// Releases made at once, as a coordinator handing its groups over makes
// them, are each applied as a lone release is: a stored group's row keeps
// its epoch without an owner, an absent group's row is deleted, a row of
// another owner is left alone, and a call whose context has ended fails
// with it.
func TestConcurrentReleases(t *testing.T) {
	ctx := t.Context()
	s := newStore(t)
	self := persistence.Peer{ID: "c1", Token: "t1", URL: "http://c1"}
	other := persistence.Peer{ID: "c2", Token: "t2", URL: "http://c2"}
	for _, c := range []persistence.Peer{self, other} {
		if err := s.Register(ctx, c, time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	keys := make([]group.Key, 40)
	for i := range keys {
		keys[i] = group.Key{StreamPrefix: "p", ConsumerGroup: "g" + strconv.Itoa(i)}
		if i%4 != 3 { // every fourth is never stored: its row goes
			if _, err := s.Create(ctx, keys[i], persistence.Encode(storetest.Group(keys[i]))); err != nil {
				t.Fatal(err)
			}
		}
		owner := self
		if i%5 == 4 {
			owner = other
		}
		if _, err := s.Acquire(ctx, keys[i], owner); err != nil {
			t.Fatal(err)
		}
	}
	for i, o := range storetest.ReleaseAtOnce(t, s, keys, self) {
		want := persistence.Owner{Epoch: 1}
		switch {
		case i%5 == 4:
			want.Coordinator = other.ID
		case i%4 == 3:
			want.Epoch = 0 // no row
		}
		if o.Coordinator != want.Coordinator || o.Epoch != want.Epoch {
			t.Errorf("%s: %+v, want %+v", keys[i], o, want)
		}
	}
	ended, cancel := context.WithCancel(ctx)
	cancel()
	if err := s.Release(ended, keys[0], self); !errors.Is(err, context.Canceled) && !errors.Is(err, persistence.ErrUnavailable) {
		t.Errorf("release with an ended context: %v", err)
	}
}

// Acquires made at once, as a coordinator taking groups over makes them,
// share transactions instead of taking one each.
func TestConcurrentAcquiresShareTransactions(t *testing.T) {
	s := newStore(t)
	self := persistence.Peer{ID: "c1", Token: "t1", URL: "http://c1"}
	if err := s.Register(t.Context(), self, time.Minute); err != nil {
		t.Fatal(err)
	}
	keys := make([]group.Key, 200)
	for i := range keys {
		keys[i] = storetest.Key(t)
	}
	before := s.pool.Stat().AcquireCount()
	_, errs := storetest.AcquireAtOnce(t, s, keys, self)
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if n := s.pool.Stat().AcquireCount() - before; n >= int64(len(keys)) {
		t.Errorf("%d acquires at once used %d connections, want fewer", len(keys), n)
	}
}
