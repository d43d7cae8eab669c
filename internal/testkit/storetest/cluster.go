package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/eventually"
	"github.com/redis-stream-coordinator/coordinator/persistence"
)

// ClusterStore is a store that also keeps the coordinator registry and
// the ownership records.
type ClusterStore interface {
	persistence.Store
	persistence.Cluster
}

// ClusterLeaseTTL is the registry lease the suite's "ended" cases use: the
// store must let it end on its own clock.
const ClusterLeaseTTL = 300 * time.Millisecond

// ClusterOptions adapt the cluster suite to a store.
type ClusterOptions struct {
	// Released writes to s, behind the store's back, an ownership record
	// of key that names no coordinator, at epoch 1: the record a release
	// by an earlier version left for a group that was never stored.
	// Required.
	Released func(t *testing.T, s ClusterStore, key group.Key)
}

// RunCluster runs the persistence.Cluster contract. newHandles returns
// two handles on the same empty data, as two coordinator processes have.
func RunCluster(t *testing.T, newHandles func(t *testing.T) (a, b ClusterStore), opts ClusterOptions) {
	tests := []struct {
		name string
		run  func(t *testing.T, a, b ClusterStore)
	}{
		{"RegisterRenewDeregister", testRegistry},
		{"LeaseEndsOnStoreClock", testLeaseEnds},
		{"AcquireAndRelease", testAcquire},
		{"ManyAcquiresAtOnce", testAcquireMany},
		{"DeposedWriterIsFenced", testDeposed},
		{"DeleteRemovesTheRecord", testDeleteRemovesRecord},
		{"ReleaseOfAnAbsentGroupRemovesTheRecord", testReleaseAbsent},
		{"PruneRemovesOrphansOnly", func(t *testing.T, a, b ClusterStore) { testPrune(t, a, b, opts.Released) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, b := newHandles(t)
			tc.run(t, a, b)
		})
	}
}

func coordinator(t *testing.T, name string) persistence.Peer {
	return persistence.Peer{ID: name + "-" + random(t), Token: random(t), URL: "http://" + name + ".example:8080"}
}

func testRegistry(t *testing.T, a, _ ClusterStore) {
	ctx := t.Context()
	c := coordinator(t, "c")
	must(t, a.Register(ctx, c, time.Minute))
	must(t, a.Register(ctx, c, time.Minute)) // same token: a renewal
	listed(t, a, c, true)
	other := c
	other.Token = random(t)
	if err := a.Register(ctx, other, time.Minute); !errors.Is(err, persistence.ErrIdentityInUse) {
		t.Fatalf("register a live id with another token: %v, want ErrIdentityInUse", err)
	}
	if err := a.Renew(ctx, other, time.Minute); !errors.Is(err, persistence.ErrNotRegistered) {
		t.Fatalf("renew with another token: %v, want ErrNotRegistered", err)
	}
	must(t, a.Renew(ctx, c, time.Minute))
	must(t, a.Deregister(ctx, c))
	listed(t, a, c, false)
	if err := a.Renew(ctx, c, time.Minute); !errors.Is(err, persistence.ErrNotRegistered) {
		t.Fatalf("renew after deregister: %v, want ErrNotRegistered", err)
	}
	must(t, a.Register(ctx, other, time.Minute)) // the id is free again
	must(t, a.Deregister(ctx, other))
}

func testLeaseEnds(t *testing.T, a, b ClusterStore) {
	ctx := t.Context()
	c := coordinator(t, "c")
	must(t, a.Register(ctx, c, ClusterLeaseTTL))
	waitUnlisted(t, b, c)
	if err := a.Renew(ctx, c, time.Minute); !errors.Is(err, persistence.ErrNotRegistered) {
		t.Fatalf("renew an ended lease: %v, want ErrNotRegistered", err)
	}
	next := c
	next.Token = random(t)
	must(t, b.Register(ctx, next, time.Minute)) // a new run of the id
	must(t, b.Deregister(ctx, next))
}

func testAcquire(t *testing.T, a, b ClusterStore) {
	ctx := t.Context()
	ca, cb := coordinator(t, "a"), coordinator(t, "b")
	key := Key(t)
	if _, err := a.Acquire(ctx, key, ca); !errors.Is(err, persistence.ErrNotRegistered) {
		t.Fatalf("acquire unregistered: %v, want ErrNotRegistered", err)
	}
	must(t, a.Register(ctx, ca, time.Minute))
	must(t, b.Register(ctx, cb, time.Minute))
	t.Cleanup(func() { _ = a.Deregister(ctx, ca); _ = b.Deregister(ctx, cb) })
	o, err := a.Acquire(ctx, key, ca)
	if err != nil || o.Epoch != 1 || o.Coordinator != ca.ID {
		t.Fatalf("first acquire: %+v, %v; want epoch 1 owned by a", o, err)
	}
	if again, err := a.Acquire(ctx, key, ca); err != nil || again.Epoch != 1 {
		t.Fatalf("re-acquire by the owner: %+v, %v; want epoch 1 kept", again, err)
	}
	_, err = b.Acquire(ctx, key, cb)
	if owned, ok := errors.AsType[*persistence.OwnedError](err); !ok || owned.Owner.ID != ca.ID || owned.Owner.URL != ca.URL {
		t.Fatalf("acquire of a live owner's group: %v, want OwnedError naming a and its URL", err)
	}
	g := Group(key, "m-1")
	if _, err := a.Create(ctx, key, persistence.Encode(g)); err != nil {
		t.Fatalf("owner's create: %v", err)
	}
	ownedBy(t, b, key, ca.ID, 1)
	must(t, a.Release(ctx, key, ca))
	o, err = b.Acquire(ctx, key, cb)
	if err != nil || o.Epoch != 2 || o.Coordinator != cb.ID {
		t.Fatalf("acquire after release: %+v, %v; want epoch 2 owned by b", o, err)
	}
	if _, err := b.Commit(ctx, key, 1, persistence.Mutation{Aggregate: persistence.Encode(g).Aggregate, UpdatedAt: time.Now()}); err != nil {
		t.Fatalf("new owner's commit: %v", err)
	}
}

// testDeposed: a writer whose registry lease ended while it was paused
// loses the group to another coordinator and can no longer write it.
func testDeposed(t *testing.T, a, b ClusterStore) {
	ctx := t.Context()
	ca, cb := coordinator(t, "a"), coordinator(t, "b")
	key := Key(t)
	must(t, a.Register(ctx, ca, ClusterLeaseTTL))
	must(t, b.Register(ctx, cb, time.Minute))
	t.Cleanup(func() { _ = b.Deregister(ctx, cb) })
	if _, err := a.Acquire(ctx, key, ca); err != nil {
		t.Fatal(err)
	}
	g := Group(key, "m-1")
	if _, err := a.Create(ctx, key, persistence.Encode(g)); err != nil {
		t.Fatal(err)
	}
	waitUnlisted(t, b, ca)
	o, err := b.Acquire(ctx, key, cb)
	if err != nil || o.Epoch != 2 {
		t.Fatalf("take over from an ended lease: %+v, %v; want epoch 2", o, err)
	}
	m := persistence.Mutation{Aggregate: persistence.Encode(g).Aggregate, UpdatedAt: time.Now()}
	if _, err := a.Commit(ctx, key, 1, m); !errors.Is(err, persistence.ErrNotOwner) {
		t.Fatalf("deposed owner's commit: %v, want ErrNotOwner", err)
	}
	if err := a.Delete(ctx, key, 1); !errors.Is(err, persistence.ErrNotOwner) {
		t.Fatalf("deposed owner's delete: %v, want ErrNotOwner", err)
	}
	if _, rev, err := b.Load(ctx, key); err != nil || rev != 1 {
		t.Fatalf("after the deposed writes: revision %d, %v; want 1 (nothing written)", rev, err)
	}
	if rev, err := b.Commit(ctx, key, 1, m); err != nil || rev != 2 {
		t.Fatalf("new owner's commit: %d, %v", rev, err)
	}
	ownedBy(t, a, key, cb.ID, 2)
}

// testDeleteRemovesRecord: a delete removes the group's ownership record
// with the group (a refused one keeps it), so that another coordinator
// acquires the group anew, at epoch 1, while the deleter still lives.
func testDeleteRemovesRecord(t *testing.T, a, b ClusterStore) {
	ctx := t.Context()
	ca, cb := coordinator(t, "a"), coordinator(t, "b")
	key := Key(t)
	must(t, a.Register(ctx, ca, time.Minute))
	must(t, b.Register(ctx, cb, time.Minute))
	t.Cleanup(func() { _ = a.Deregister(ctx, ca); _ = b.Deregister(ctx, cb) })
	if _, err := a.Acquire(ctx, key, ca); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Create(ctx, key, persistence.Encode(Group(key, "m-1"))); err != nil {
		t.Fatal(err)
	}
	if err := a.Delete(ctx, key, 2); !errors.Is(err, persistence.ErrConflict) {
		t.Fatalf("stale delete: %v, want ErrConflict", err)
	}
	ownedBy(t, b, key, ca.ID, 1)
	must(t, a.Delete(ctx, key, 1))
	ownedBy(t, b, key, "", 0)
	o, err := b.Acquire(ctx, key, cb)
	if err != nil || o.Epoch != 1 || o.Coordinator != cb.ID {
		t.Fatalf("acquire after the delete: %+v, %v; want epoch 1 owned by b", o, err)
	}
	if _, err := b.Create(ctx, key, persistence.Encode(Group(key, "m-2"))); err != nil {
		t.Fatalf("new owner's create: %v", err)
	}
}

// testReleaseAbsent: releasing a group that was acquired but never
// stored (a create refused after the acquire) removes the record; a
// stored group's release keeps it, with its epoch.
func testReleaseAbsent(t *testing.T, a, b ClusterStore) {
	ctx := t.Context()
	ca := coordinator(t, "a")
	absent, stored := Key(t), Key(t)
	must(t, a.Register(ctx, ca, time.Minute))
	t.Cleanup(func() { _ = a.Deregister(ctx, ca) })
	for _, k := range []group.Key{absent, stored} {
		if _, err := a.Acquire(ctx, k, ca); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := a.Create(ctx, stored, persistence.Encode(Group(stored, "m-1"))); err != nil {
		t.Fatal(err)
	}
	must(t, a.Release(ctx, absent, ca))
	must(t, a.Release(ctx, stored, ca))
	ownedBy(t, b, absent, "", 0)
	ownedBy(t, b, stored, "", 1)
}

// testPrune: PruneOwners removes the records of groups not stored that
// no live coordinator holds (one left by an earlier version's release,
// one of a coordinator whose lease ended), and keeps a record a live
// coordinator holds (it may be creating the group) and every record of a
// stored group.
func testPrune(t *testing.T, a, b ClusterStore, released func(*testing.T, ClusterStore, group.Key)) {
	ctx := t.Context()
	ca, cx := coordinator(t, "a"), coordinator(t, "x")
	liveAbsent, deadAbsent, deadStored, releasedStored, legacy := Key(t), Key(t), Key(t), Key(t), Key(t)
	acquire := func(s ClusterStore, c persistence.Peer, key group.Key, create bool) {
		t.Helper()
		if _, err := s.Acquire(ctx, key, c); err != nil {
			t.Fatal(err)
		}
		if create {
			if _, err := s.Create(ctx, key, persistence.Encode(Group(key, "m-1"))); err != nil {
				t.Fatal(err)
			}
		}
	}
	must(t, b.Register(ctx, cx, ClusterLeaseTTL))
	acquire(b, cx, deadAbsent, false)
	acquire(b, cx, deadStored, true)
	must(t, a.Register(ctx, ca, time.Minute))
	t.Cleanup(func() { _ = a.Deregister(ctx, ca) })
	acquire(a, ca, liveAbsent, false)
	acquire(a, ca, releasedStored, true)
	must(t, a.Release(ctx, releasedStored, ca))
	released(t, a, legacy)
	ownedBy(t, a, legacy, "", 1)
	waitUnlisted(t, a, cx)

	if n, err := b.PruneOwners(ctx); err != nil || n != 2 {
		t.Fatalf("PruneOwners = %d, %v; want 2 (the legacy record and the ended lease's)", n, err)
	}
	ownedBy(t, a, liveAbsent, ca.ID, 1)
	ownedBy(t, a, deadAbsent, "", 0)
	ownedBy(t, a, deadStored, cx.ID, 1)
	ownedBy(t, a, releasedStored, "", 1)
	ownedBy(t, a, legacy, "", 0)
	if n, err := a.PruneOwners(ctx); err != nil || n != 0 {
		t.Fatalf("second PruneOwners = %d, %v; want 0", n, err)
	}
}

func ownedBy(t *testing.T, s ClusterStore, key group.Key, id string, epoch int64) {
	t.Helper()
	owners, err := s.Owners(t.Context(), []group.Key{key, Key(t)})
	must(t, err)
	if len(owners) != 2 || owners[0].Coordinator != id || owners[0].Epoch != epoch || owners[1] != (persistence.Owner{}) {
		t.Fatalf("owners: %+v, want %s at epoch %d, then a zero record", owners, id, epoch)
	}
}

func listed(t *testing.T, s ClusterStore, c persistence.Peer, want bool) {
	t.Helper()
	all, err := s.Coordinators(t.Context())
	must(t, err)
	found := false
	for _, x := range all {
		if x.ID == c.ID {
			found = x.URL == c.URL && x.Token == c.Token
		}
	}
	if found != want {
		t.Fatalf("coordinator %s listed = %v, want %v (%+v)", c.ID, found, want, all)
	}
}

// waitUnlisted waits until c's lease has ended on the store's clock.
func waitUnlisted(t *testing.T, s ClusterStore, c persistence.Peer) {
	t.Helper()
	eventually.True(t, "the lease of "+c.ID+" ended", func() bool {
		all, err := s.Coordinators(t.Context())
		must(t, err)
		for _, x := range all {
			if x.ID == c.ID {
				return false
			}
		}
		return true
	})
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
