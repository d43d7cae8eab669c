package actors

import (
	"context"
	"errors"
	"testing"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/eventually"
	"github.com/redis-stream-coordinator/coordinator/persistence"
	"github.com/redis-stream-coordinator/coordinator/persistence/memory"
)

// owner reads key's ownership record.
func owner(t *testing.T, mem *memory.Store, key group.Key) string {
	t.Helper()
	owners, err := mem.Owners(testCtx(t), []group.Key{key})
	if err != nil {
		t.Fatal(err)
	}
	return owners[0].Coordinator
}

// A live coordinator whose ownership record outlived its actor (a release
// that failed, say) gives the record up at its next sweep, so the
// coordinator the group is placed on can take it: without that, every
// heartbeat of the group would be answered RETRY for as long as both
// live.
func TestASweepReleasesARecordNoActorServes(t *testing.T) {
	mem := memory.New()
	na, nb := node(t, mem, "a"), node(t, mem.Handle(), "b")
	eventually.True(t, "both nodes see each other", func() bool { return len(na.Live()) == 2 && len(nb.Live()) == 2 })
	key := placedOn(t, na, "b")
	b := start(t, Options{Store: wrapStore(mem.Handle()), GroupCommit: true, Ownership: nb})
	createGroup(t, b, key)
	resp := heartbeat(t, b, key, join("m-1"))
	if err := b.Shutdown(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	// a holds the record (as after a moment the group was placed on a)
	// but no actor of a serves the group.
	if err := mem.Handle().Release(testCtx(t), key, nb.Self()); err != nil {
		t.Fatal(err)
	}
	if _, err := mem.Handle().Acquire(testCtx(t), key, na.Self()); err != nil {
		t.Fatal(err)
	}
	a := start(t, Options{Store: wrapStore(mem), GroupCommit: true, Ownership: na})
	b2 := start(t, Options{Store: wrapStore(mem.Handle()), GroupCommit: true, Ownership: nb})
	if _, err := b2.Heartbeat(testCtx(t), key, next("m-1", resp)); !isNotOwner(err) {
		t.Fatalf("b's heartbeat while a's record stands: %v, want not-owner", err)
	}

	a.TickNow()
	eventually.True(t, "a released the record", func() bool { return owner(t, mem, key) != "a" })
	if got := heartbeat(t, b2, key, next("m-1", resp)); got.Status != contract.StatusOK || got.MemberEpoch != resp.MemberEpoch {
		t.Fatalf("b2's heartbeat after the sweep: %+v, want OK at epoch %d", got, resp.MemberEpoch)
	}
}

// lostAcquire takes ownership in the store and then reports the call as
// failed, as a store call that timed out after Redis ran it does.
type lostAcquire struct{ Ownership }

func (l lostAcquire) Acquire(ctx context.Context, key group.Key) (int64, error) {
	if _, err := l.Ownership.Acquire(ctx, key); err != nil {
		return 0, err
	}
	return 0, persistence.ErrUnavailable
}

// An actor that does not know whether its acquire wrote the ownership
// record releases the record when it passivates, so that a record never
// names a live coordinator that no actor of it serves.
func TestAnAcquireOfUnknownOutcomeIsReleased(t *testing.T) {
	mem := memory.New()
	na := node(t, mem, "a")
	eventually.True(t, "a sees itself", func() bool { return len(na.Live()) == 1 })
	a0 := start(t, Options{Store: wrapStore(mem), GroupCommit: true, Ownership: na})
	createGroup(t, a0, orders)
	if err := na.Release(testCtx(t), orders); err != nil {
		t.Fatal(err)
	}
	if err := a0.Shutdown(testCtx(t)); err != nil {
		t.Fatal(err)
	}

	a := start(t, Options{Store: wrapStore(mem), GroupCommit: true, Ownership: lostAcquire{na}})
	resp, err := a.Heartbeat(testCtx(t), orders, join("m-1"))
	if err == nil {
		t.Fatalf("heartbeat through a lost acquire: %+v, want an error", resp)
	}
	if errors.Is(err, persistence.ErrNotOwner) {
		t.Fatalf("heartbeat through a lost acquire: %v", err)
	}
	eventually.True(t, "the record a may have written is released", func() bool { return owner(t, mem, orders) == "" })
}
