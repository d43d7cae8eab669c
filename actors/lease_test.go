package actors

import (
	"context"
	"testing"
	"time"

	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/eventually"
	"github.com/redis-stream-coordinator/coordinator/internal/fakeclock"
	"github.com/redis-stream-coordinator/coordinator/persistence"
)

// leaseSettings names the coordinator; everything else is the default.
func leaseSettings(name string) group.Settings {
	s := group.DefaultSettings()
	s.Coordinator = name
	return s
}

// memberState reads one member's state through coordinator c.
func memberState(t *testing.T, c *Coordinator, id string) group.MemberState {
	t.Helper()
	members, err := c.Members(testCtx(t), orders)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range members {
		if m.MemberID == id {
			return m.State
		}
	}
	t.Fatalf("no member %s", id)
	return ""
}

// coalescedRenewal starts coordinator "a" on store, joins m-1 through it
// and has it answer one renewal without writing it. It returns a, the
// stored lease and the lease a promised with that renewal.
func coalescedRenewal(t *testing.T, store *testStore, clock *fakeclock.Clock) (*Coordinator, group.Instant, group.Instant) {
	t.Helper()
	a := start(t, Options{Store: store, GroupCommit: true, Clock: clock.Now, Settings: leaseSettings("a")})
	createGroup(t, a, orders)
	resp := heartbeat(t, a, orders, join("m-1"))
	resp = heartbeat(t, a, orders, next("m-1", resp))
	stored := store.stored(t, orders).Members["m-1"].MemberLeaseExpiresAt
	clock.Advance(2 * time.Second)
	commits := store.commits()
	heartbeat(t, a, orders, next("m-1", resp))
	if store.commits() != commits {
		t.Fatal("the renewal was written; this test needs a coalesced one")
	}
	return a, stored, group.InstantOf(clock.Now()).Add(group.DefaultSettings().MemberLeaseTTL)
}

// A renewal that coordinator A answers without writing it (coalesced) is a
// promise that coordinator B, which reads the group from the store, must
// keep: B expires the member only after A's promise has run out. (Before
// the read-side hold, B expired it at the stored lease, up to TTL/2 early.)
func TestAnotherCoordinatorKeepsACoalescedPromise(t *testing.T) {
	store := newTestStore()
	store.shared = true
	clock := newFakeClock()
	_, stored, promised := coalescedRenewal(t, store, clock)

	b := start(t, Options{Store: store, GroupCommit: true, Clock: clock.Now, Settings: leaseSettings("b")})
	clock.Set(promised.Time()) // past the stored lease, at A's promise
	if clock.Now().UnixMilli() <= int64(stored) {
		t.Fatal("the promise must outlast the stored lease")
	}
	b.TickNow()
	wantStatus(t, heartbeat(t, b, orders, join("m-2")), group.StatusOK)
	if st := memberState(t, b, "m-1"); st != group.MemberActive {
		t.Fatalf("m-1 is %s at the lease coordinator a promised it", st)
	}
	// B cannot know A's promise; it holds the stored lease for the whole
	// coalescing window, and expires m-1 right after that.
	clock.Set(stored.Add(group.DefaultSettings().CoalesceWindow()).Time())
	b.TickNow()
	if st := memberState(t, b, "m-1"); st != group.MemberActive {
		t.Fatalf("m-1 is %s within the coalescing window", st)
	}
	clock.Advance(time.Millisecond)
	b.TickNow()
	eventually.True(t, "m-1 expired once the window has passed", func() bool {
		return store.stored(t, orders).Members["m-1"].State == group.MemberExpired
	})
}

// The coordinator that granted a lease (and every later renewal) expires a
// silent member exactly when the lease it promised runs out: coalescing
// costs a single coordinator no failover time.
func TestTheWriterExpiresAtItsOwnPromise(t *testing.T) {
	store := newTestStore()
	store.shared = true
	clock := newFakeClock()
	a, _, promised := coalescedRenewal(t, store, clock)

	clock.Set(promised.Time().Add(time.Millisecond))
	a.TickNow()
	eventually.True(t, "m-1 expired right after its lease", func() bool {
		return store.stored(t, orders).Members["m-1"].State == group.MemberExpired
	})
}

// A heartbeat counts from its arrival: one that arrived before the
// member's lease ran out renews it even when the actor only gets to it
// later (here: behind a commit that blocks while the clock passes the
// lease end).
func TestHeartbeatCountsFromItsArrival(t *testing.T) {
	g := newGate()
	store := newTestStore()
	clock := newFakeClock()
	c := start(t, Options{Store: store, GroupCommit: true, Clock: clock.Now})
	createGroup(t, c, orders)
	resp := heartbeat(t, c, orders, join("m-1"))
	resp = heartbeat(t, c, orders, next("m-1", resp))
	lease := store.stored(t, orders).Members["m-1"].MemberLeaseExpiresAt
	blockAt := store.commits() + 1 // block the next commit
	store.onCommit = func(n int, write func() (persistence.Revision, error)) (persistence.Revision, error) {
		return g.onCommit(n-blockAt+1, write)
	}
	clock.Set(lease.Time())
	out := make(chan result, 2)
	goHeartbeat(c, store, orders, "m-2", out) // its commit blocks the actor
	<-g.entered
	renewal := next("m-1", resp)
	late := make(chan group.HeartbeatResponse, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		r, err := c.Heartbeat(ctx, orders, renewal) // arrives at the lease end
		if err != nil {
			t.Error(err)
		}
		late <- r
	}()
	eventually.True(t, "m-1's heartbeat queued behind the blocked flush", func() bool { return queued(c, orders) >= 2 })
	clock.Advance(time.Second) // the actor gets to it after the lease end
	close(g.release)
	if r := <-late; r.Status != group.StatusOK {
		t.Fatalf("a heartbeat that arrived in time got %+v; stored %+v", r, store.stored(t, orders).Members["m-1"])
	}
	if m := store.stored(t, orders).Members["m-1"]; m.State != group.MemberActive {
		t.Fatalf("m-1 is %s", m.State)
	}
}
