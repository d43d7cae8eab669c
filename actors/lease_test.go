package actors

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/redis-stream-coordinator/coordinator/cluster"
	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/eventually"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/fakeclock"
	"github.com/redis-stream-coordinator/coordinator/persistence"
	"github.com/redis-stream-coordinator/coordinator/persistence/memory"
)

// memberState reads one member's state through coordinator c.
func memberState(t *testing.T, c *System, key group.Key, id string) group.MemberState {
	t.Helper()
	members, err := c.Members(testCtx(t), key)
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

// renewed starts a coordinator on store, joins m-1 through it and has it
// answer one renewal, which writes nothing. It returns the coordinator and
// the lease end that renewal promised.
func renewed(t *testing.T, store *testStore, clock *fakeclock.Clock) (*System, contract.Instant) {
	t.Helper()
	a := start(t, Options{Store: store, GroupCommit: true, Clock: clock.Now})
	createGroup(t, a, orders)
	resp := heartbeat(t, a, orders, join("m-1"))
	resp = heartbeat(t, a, orders, next("m-1", resp))
	clock.Advance(2 * time.Second)
	commits := store.commits()
	heartbeat(t, a, orders, next("m-1", resp))
	if store.commits() != commits {
		t.Fatal("a lease renewal was written")
	}
	return a, contract.InstantOf(clock.Now()).Add(group.DefaultSettings().MemberLeaseTTL)
}

// The owner expires a silent member exactly when the lease it promised
// runs out, although it never wrote that lease.
func TestTheOwnerExpiresAtItsOwnPromise(t *testing.T) {
	store := newTestStore()
	clock := newFakeClock()
	a, promised := renewed(t, store, clock)

	clock.Set(promised.Time())
	a.TickNow()
	if st := memberState(t, a, orders, "m-1"); st != group.MemberActive {
		t.Fatalf("m-1 is %s at the end of its lease", st)
	}
	clock.Advance(time.Millisecond)
	a.TickNow()
	eventually.True(t, "m-1 expired right after its lease", func() bool {
		return store.stored(t, orders).Members["m-1"].State == group.MemberExpired
	})
}

// node starts a cluster node of id on store (a handle of its own) with a
// short renewal, stopped when the test ends.
func node(t *testing.T, store *memory.Store, id string) *cluster.Node {
	t.Helper()
	n, err := cluster.New(cluster.Options{Store: store, ID: id, URL: "http://" + id + ".test:8080",
		LeaseTTL: 2 * time.Second, RenewInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	n.Start(testCtx(t))
	t.Cleanup(func() { _ = n.Stop(context.Background()) })
	return n
}

// placedOn returns a group key whose stream is placed on want among the
// live coordinators n sees.
func placedOn(t *testing.T, n *cluster.Node, want string) group.Key {
	t.Helper()
	for i := range 1000 {
		prefix := fmt.Sprintf("orders-%d", i)
		if c, ok := n.Placed(prefix); ok && c.ID == want {
			return group.Key{StreamPrefix: prefix, ConsumerGroup: "orders-consumer"}
		}
	}
	t.Fatalf("no stream placed on %s", want)
	return group.Key{}
}

// A group handed over from one coordinator to another keeps its members,
// their epochs and assignments, and every lease the first promised: the
// new owner restarts the leases at takeover. Renewals are written by
// neither.
func TestHandOverKeepsMembersAndLeases(t *testing.T) {
	mem := memory.New()
	na, nb := node(t, mem, "a"), node(t, mem.Handle(), "b")
	eventually.True(t, "both nodes see each other", func() bool { return len(na.Live()) == 2 && len(nb.Live()) == 2 })
	key := placedOn(t, na, "a")
	clock := newFakeClock()
	sa, sb := wrapStore(mem), wrapStore(mem)
	a := start(t, Options{Store: sa, GroupCommit: true, Clock: clock.Now, Ownership: na})
	b := start(t, Options{Store: sb, GroupCommit: true, Clock: clock.Now, Ownership: nb})
	na.OnChange(a.HandOver)
	nb.OnChange(b.HandOver)

	if r := nb.Route(key, cluster.Mark{}); r.Decision != cluster.Forward || r.Owner.ID != "a" {
		t.Fatalf("b's route for a's group: %+v, want forward to a", r)
	}
	createGroup(t, a, key)
	resp := heartbeat(t, a, key, join("m-1"))
	resp = heartbeat(t, a, key, next("m-1", resp))
	epoch, shards := resp.MemberEpoch, resp.Assignment.AssignedShards
	clock.Advance(5 * time.Second)
	commits := sa.commits()
	resp = heartbeat(t, a, key, next("m-1", resp))
	if sa.commits() != commits {
		t.Fatal("a renewal was written")
	}
	promised := contract.InstantOf(clock.Now()).Add(group.DefaultSettings().MemberLeaseTTL)

	na.Leave() // a hands the group over and leaves
	eventually.True(t, "a handed its group over", func() bool { return a.Actors() == 0 })
	if err := na.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	eventually.True(t, "the group is placed on b", func() bool { return nb.PlacedHere(key.StreamPrefix) })

	clock.Advance(time.Second) // b takes over 1 s after a's last answer
	resp = heartbeat(t, b, key, next("m-1", resp))
	if resp.Status != contract.StatusOK || resp.MemberEpoch != epoch || !resp.Assignment.AssignedShards.Equal(shards) {
		t.Fatalf("after the handover: %+v, want OK at epoch %d with %v", resp, epoch, shards)
	}
	// m-1 falls silent: b keeps the lease a promised (and more: b
	// restarted it at takeover).
	clock.Set(promised.Time())
	b.TickNow()
	if st := memberState(t, b, key, "m-1"); st != group.MemberActive {
		t.Fatalf("m-1 is %s within the lease the previous owner promised", st)
	}
}

// isNotOwner reports a refusal naming another owner.
func isNotOwner(err error) bool { return errors.Is(err, persistence.ErrNotOwner) }

// A coordinator whose group was taken over without its knowing (its
// registry lease ended while it was cut off) writes nothing more: the
// store refuses its fence, it answers not-owner (RETRY over HTTP) and
// forgets the group, and then names the new owner.
func TestADeposedOwnerWritesNothing(t *testing.T) {
	mem := memory.New()
	na, nb := node(t, mem, "a"), node(t, mem.Handle(), "b")
	eventually.True(t, "both nodes see each other", func() bool { return len(na.Live()) == 2 && len(nb.Live()) == 2 })
	key := placedOn(t, na, "a")
	sa := wrapStore(mem)
	a := start(t, Options{Store: sa, GroupCommit: true, Ownership: na})
	b := start(t, Options{Store: wrapStore(mem.Handle()), GroupCommit: true, Ownership: nb})
	createGroup(t, a, key)
	wantStatus(t, heartbeat(t, a, key, join("m-1")), contract.StatusOK)

	// b takes the group over behind a's back (as after a's lease ended).
	if err := mem.Handle().Release(testCtx(t), key, na.Self()); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Heartbeat(testCtx(t), key, join("m-2")); err != nil {
		t.Fatalf("b's takeover: %v", err)
	}
	commits := sa.commits()
	if _, err := a.Heartbeat(testCtx(t), key, join("m-3")); !isNotOwner(err) {
		t.Fatalf("deposed owner's answer: %v; want not-owner (RETRY over HTTP)", err)
	}
	if _, err := a.Heartbeat(testCtx(t), key, join("m-3")); !isNotOwner(err) {
		t.Fatalf("after the refusal: %v, want not-owner", err)
	}
	stored, _ := mem.Owners(testCtx(t), []group.Key{key})
	if stored[0].Coordinator != "b" || sa.commits() != commits {
		t.Fatalf("owner %+v, a's commits %d (before %d): want b, and no commit by a", stored[0], sa.commits(), commits)
	}
	if m := sa.stored(t, key).Members["m-3"]; m != nil {
		t.Fatalf("the deposed owner's join was stored: %+v", m)
	}
}

// A heartbeat counts from its arrival: one that arrived before the
// member's lease ran out renews it even when the actor only gets to it
// later (here: behind a commit that blocks while the clock passes the
// lease end).
func TestHeartbeatCountsFromItsArrival(t *testing.T) {
	store := newTestStore()
	clock := newFakeClock()
	c := start(t, Options{Store: store, GroupCommit: true, Clock: clock.Now})
	createGroup(t, c, orders)
	resp := heartbeat(t, c, orders, join("m-1"))
	resp = heartbeat(t, c, orders, next("m-1", resp))
	lease := store.stored(t, orders).Members["m-1"].MemberLeaseExpiresAt
	g := newGateAt(store.commits() + 1) // block the next commit
	store.Before(g.before)
	clock.Set(lease.Time())
	out := make(chan result, 2)
	goHeartbeat(c, store, orders, "m-2", out) // its commit blocks the actor
	<-g.entered
	renewal := next("m-1", resp)
	late := make(chan contract.HeartbeatResponse, 1)
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
	if r := <-late; r.Status != contract.StatusOK {
		t.Fatalf("a heartbeat that arrived in time got %+v; stored %+v", r, store.stored(t, orders).Members["m-1"])
	}
	if m := store.stored(t, orders).Members["m-1"]; m.State != group.MemberActive {
		t.Fatalf("m-1 is %s", m.State)
	}
}
