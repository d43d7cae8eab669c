package actors

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/eventually"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/faultstore"
	"github.com/redis-stream-coordinator/coordinator/persistence"
)

// N heartbeats queued behind a commit in flight join one batch (group
// commit; MaxBatch splits it), or are committed one by one without group
// commit; either way every reply arrives only after the commit holding its
// member has returned.
func TestGroupCommit(t *testing.T) {
	const n = 20
	for _, tc := range []struct {
		name        string
		groupCommit bool
		maxBatch    int
		wantCommits int
		// exact: the count is exact; otherwise it is a lower bound (with
		// MaxBatch, a heartbeat that reaches the mailbox after the batches
		// were cut may commit alone).
		exact bool
	}{
		{"batched", true, 0, 2, true},    // the first join alone, then the n-1 queued behind it
		{"max batch", true, 5, 5, false}, // the first, then 19 queued in batches of at most 5
		{"one per heartbeat", false, 0, n, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newGate()
			store := newTestStore()
			store.Before(g.before)
			c := start(t, Options{Store: store, GroupCommit: tc.groupCommit, MaxBatch: tc.maxBatch})
			createGroup(t, c, orders)

			out := queueJoins(t, c, store, g, n)
			close(g.release)

			wantJoinsStored(t, out, n)
			if got := store.commits(); got < tc.wantCommits || tc.exact && got != tc.wantCommits {
				t.Errorf("%d commits for %d heartbeats, want %d (exact %v)", got, n, tc.wantCommits, tc.exact)
			}
			members, err := c.Members(testCtx(t), orders)
			if err != nil || len(members) != n {
				t.Fatalf("members: %d, %v; want %d", len(members), err, n)
			}
		})
	}
}

// Two coordinators share a store: the second writes behind the first's
// back, so the first's commit conflicts, reloads, re-runs the heartbeat on
// the fresh state and succeeds.
func TestConflictReloadsAndReruns(t *testing.T) {
	store := newTestStore()
	obs := newRecorder()
	a := start(t, Options{Store: store, GroupCommit: true, Observer: obs})
	b := start(t, Options{Store: store, GroupCommit: true})
	createGroup(t, a, orders)

	wantStatus(t, heartbeat(t, b, orders, join("member-b")), contract.StatusOK)
	wantStatus(t, heartbeat(t, a, orders, join("member-a")), contract.StatusOK)

	if got := obs.conflictList(); !slices.Equal(got, []string{"heartbeat#1"}) {
		t.Errorf("conflicts %v, want [heartbeat#1]", got)
	}
	stored := store.stored(t, orders)
	for _, id := range []string{"member-a", "member-b"} {
		if stored.Members[id] == nil {
			t.Errorf("%s not stored", id)
		}
	}
	members, err := a.Members(testCtx(t), orders)
	if err != nil || len(members) != 2 {
		t.Errorf("members after re-run: %v, %v; want both", members, err)
	}
}

// A store that always conflicts: after CommitAttempts tries heartbeats
// fail with ErrNotStored (status RETRY) and admin commands with
// STATE_VERSION_CONFLICT; nothing is
// acknowledged or kept.
func TestConflictsExhausted(t *testing.T) {
	store := newTestStore()
	store.Before(func(_ context.Context, op faultstore.Op) error {
		if op.Call == faultstore.CallCommit || op.Call == faultstore.CallDelete {
			return persistence.ErrConflict
		}
		return nil
	})
	obs := newRecorder()
	c := start(t, Options{Store: store, GroupCommit: true, Observer: obs})
	createGroup(t, c, orders)

	heartbeatFails(t, c, orders, join("m-1"), contract.ErrNotStored)
	_, err := c.DeleteGroup(testCtx(t), orders, contract.DeleteRequest{RequestedBy: "test", Reason: "test", Force: true})
	if !errors.Is(err, contract.ErrStateConflict) {
		t.Errorf("delete: %v, want ErrStateConflict", err)
	}
	want := []string{"heartbeat#1", "heartbeat#2", "heartbeat#3", "delete-group#1", "delete-group#2", "delete-group#3"}
	if got := obs.conflictList(); !slices.Equal(got, want) {
		t.Errorf("conflicts %v, want %v", got, want)
	}
	if members, err := c.Members(testCtx(t), orders); err != nil || len(members) != 0 {
		t.Errorf("members %v, %v; want none", members, err)
	}
}

// An unavailable store: heartbeats fail with ErrNotStored (status RETRY),
// admin commands with the store's error, the uncommitted change is dropped; once the store is back the
// group works from its committed state.
func TestUnavailableStore(t *testing.T) {
	var down atomic.Bool
	store := newTestStore()
	store.Before(func(_ context.Context, op faultstore.Op) error {
		if down.Load() && (op.Call == faultstore.CallCommit || op.Call == faultstore.CallDelete) {
			return fmt.Errorf("redis: %w", persistence.ErrUnavailable)
		}
		return nil
	})
	c := start(t, Options{Store: store, GroupCommit: true})
	createGroup(t, c, orders)

	down.Store(true)
	heartbeatFails(t, c, orders, join("m-1"), persistence.ErrUnavailable)
	heartbeatFails(t, c, orders, join("m-1"), contract.ErrNotStored)
	if members, err := c.Members(testCtx(t), orders); err != nil || len(members) != 0 {
		t.Errorf("members while down: %v, %v; want none", members, err)
	}
	_, err := c.DeleteGroup(testCtx(t), orders, contract.DeleteRequest{RequestedBy: "test", Reason: "test", Force: true})
	if !errors.Is(err, persistence.ErrUnavailable) {
		t.Errorf("delete while down: %v, want ErrUnavailable", err)
	}

	down.Store(false)
	wantStatus(t, heartbeat(t, c, orders, join("m-1")), contract.StatusOK)
	if store.stored(t, orders).Members["m-1"] == nil {
		t.Error("m-1 not stored after recovery")
	}
}

// A commit whose outcome is unknown (it did write, then failed): the
// heartbeat fails with ErrNotStored (status RETRY) and the actor resyncs, so its state holds the
// write and the next commit does not conflict.
func TestUnknownCommitOutcome(t *testing.T) {
	store := newTestStore()
	store.After(func(op faultstore.Op, err error) error {
		if op.Call == faultstore.CallCommit && op.N == 1 {
			return errors.New("connection reset after write")
		}
		return err
	})
	obs := newRecorder()
	c := start(t, Options{Store: store, GroupCommit: true, Observer: obs})
	createGroup(t, c, orders)

	heartbeatFails(t, c, orders, join("m-1"), contract.ErrNotStored)
	members, err := c.Members(testCtx(t), orders)
	if err != nil || len(members) != 1 || members[0].MemberID != "m-1" {
		t.Fatalf("members after unknown outcome: %v, %v; want the written m-1", members, err)
	}
	wantStatus(t, heartbeat(t, c, orders, join("m-2")), contract.StatusOK)
	if got := obs.conflictList(); len(got) != 0 {
		t.Errorf("conflicts %v, want none", got)
	}
}

// A corrupt stored group fails closed: every request is answered with
// ErrCorrupt, ticks and admin commands write nothing, and the load is
// retried on each request until the data is readable again.
func TestCorruptGroupFailsClosed(t *testing.T) {
	store := newTestStore()
	ctx := context.Background()
	corrupt := persistence.Document{Aggregate: []byte("{not json"), SchemaVersion: persistence.SchemaVersion, LayoutVersion: persistence.LayoutVersion}
	if _, err := store.Wrapped.Create(ctx, orders, corrupt); err != nil {
		t.Fatal(err)
	}
	obs := newMessages()
	c := start(t, Options{Store: store, GroupCommit: true, Observer: obs})

	if _, err := c.Heartbeat(testCtx(t), orders, join("m-1")); !errors.Is(err, persistence.ErrCorrupt) {
		t.Errorf("heartbeat: %v, want ErrCorrupt", err)
	}
	if _, err := c.Group(testCtx(t), orders); !errors.Is(err, persistence.ErrCorrupt) {
		t.Errorf("read: %v, want ErrCorrupt", err)
	}
	if _, err := c.CreateGroup(testCtx(t), orders, contract.CreateRequest{RequestedBy: "test"}, false); !errors.Is(err, persistence.ErrCorrupt) {
		t.Errorf("create: %v, want ErrCorrupt", err)
	}
	if _, err := c.DeleteGroup(testCtx(t), orders, contract.DeleteRequest{RequestedBy: "t", Reason: "t", Force: true}); !errors.Is(err, persistence.ErrCorrupt) {
		t.Errorf("delete: %v, want ErrCorrupt", err)
	}
	c.TickNow()
	<-obs.ticked
	if _, err := c.Members(testCtx(t), orders); !errors.Is(err, persistence.ErrCorrupt) {
		t.Errorf("members: %v, want ErrCorrupt", err)
	}
	if n := store.writeCalls(); n != 0 {
		t.Errorf("%d writes to a corrupt group, want 0", n)
	}

	// Repair the data behind the coordinator's back: the next request loads it.
	g := group.New()
	if err := g.Create(contract.InstantOf(time.Now()), group.DefaultSettings(), orders, contract.CreateRequest{RequestedBy: "fix"}).Err; err != nil {
		t.Fatal(err)
	}
	if err := store.Wrapped.Delete(ctx, orders, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Wrapped.Create(ctx, orders, persistence.Encode(g)); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, heartbeat(t, c, orders, join("m-1")), contract.StatusOK)
}

// Shutdown answers every request already queued (committing it) and
// rejects new ones with ErrTerminating.
func TestShutdownDrains(t *testing.T) {
	const n = 10
	g := newGate()
	store := newTestStore()
	store.Before(g.before)
	c := start(t, Options{Store: store, GroupCommit: true})
	createGroup(t, c, orders)

	out := queueJoins(t, c, store, g, n)

	stopped := make(chan error, 1)
	go func() { stopped <- c.Shutdown(testCtx(t)) }()
	eventually.True(t, "terminating", func() bool {
		_, err := c.Group(testCtx(t), billing) // another group's actor, not blocked
		return errors.Is(err, contract.ErrTerminating)
	})
	close(g.release)

	wantJoinsStored(t, out, n)
	if err := <-stopped; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if _, err := c.Heartbeat(testCtx(t), orders, join("late")); !errors.Is(err, contract.ErrTerminating) {
		t.Errorf("heartbeat after shutdown: %v, want ErrTerminating", err)
	}
	if got := len(store.stored(t, orders).Members); got != n {
		t.Errorf("%d members stored, want %d", got, n)
	}
}

// panicOnCommit panics in GroupCommitted once armed: after the core has
// decided the batch's answers and before the actor sent them.
type panicOnCommit struct {
	*recorder
	armed atomic.Bool
}

func (p *panicOnCommit) GroupCommitted(group.Key, *group.Group, []group.Record) {
	if p.armed.CompareAndSwap(true, false) {
		panic("injected fault after the commit")
	}
}

// A panic between a commit and its answers answers the batch with
// ErrInternal (not a request timeout).
func TestPanicAfterCommitAnswersTheBatch(t *testing.T) {
	obs := &panicOnCommit{recorder: newRecorder()}
	c := start(t, Options{Store: newTestStore(), GroupCommit: true, Observer: obs})
	createGroup(t, c, orders)
	obs.armed.Store(true)
	if _, err := c.Heartbeat(testCtx(t), orders, join("m-1")); !errors.Is(err, contract.ErrInternal) {
		t.Fatalf("heartbeat whose answer a panic interrupted: %v, want ErrInternal", err)
	}
	if key := <-obs.restarted; key != orders {
		t.Fatalf("restarted %s, want %s", key, orders)
	}
}

// A panic while handling one group's heartbeat (here in its commit)
// answers it with ErrInternal; the actor restarts and serves again from
// its stored state, and another group serves throughout.
func TestPanicRestartsOnlyThatActor(t *testing.T) {
	store := newTestStore()
	store.Before(func(_ context.Context, op faultstore.Op) error {
		if _, ok := op.Mutation.PutMembers["boom"]; ok && op.Call == faultstore.CallCommit {
			panic("injected fault")
		}
		return nil
	})
	obs := newRecorder()
	c := start(t, Options{Store: store, GroupCommit: true, Observer: obs})
	createGroup(t, c, orders)
	createGroup(t, c, billing)
	m1 := heartbeat(t, c, orders, join("m-1"))
	wantStatus(t, m1, contract.StatusOK)
	b1 := heartbeat(t, c, billing, join("b-1"))

	if _, err := c.Heartbeat(testCtx(t), orders, join("boom")); !errors.Is(err, contract.ErrInternal) {
		t.Fatalf("panicking heartbeat: %v, want ErrInternal", err)
	}
	b1 = heartbeat(t, c, billing, next("b-1", b1))
	wantStatus(t, b1, contract.StatusOK)
	if key := <-obs.restarted; key != orders {
		t.Fatalf("restarted %s, want %s", key, orders)
	}

	// The restarted actor knows m-1 from the store: its steady heartbeat is
	// accepted at the epoch it had.
	resp := heartbeat(t, c, orders, next("m-1", m1))
	wantStatus(t, resp, contract.StatusOK)
	if resp.MemberEpoch != m1.MemberEpoch {
		t.Errorf("epoch after restart %d, want %d", resp.MemberEpoch, m1.MemberEpoch)
	}
	wantStatus(t, heartbeat(t, c, billing, next("b-1", b1)), contract.StatusOK)
}

// Lease renewals are never written: liveness lives in the owner's memory.
func TestLeaseRenewalsAreNotWritten(t *testing.T) {
	store := newTestStore()
	clock := newFakeClock()
	c := start(t, Options{Store: store, Clock: clock.Now, GroupCommit: true})
	createGroup(t, c, orders)

	resp := heartbeat(t, c, orders, join("m-1")) // joins: written
	clock.Advance(time.Second)
	resp = heartbeat(t, c, orders, next("m-1", resp)) // takes its shards: written
	stored := store.stored(t, orders).Members["m-1"].MemberLeaseExpiresAt
	for range 8 { // past the stored lease
		clock.Advance(2 * time.Second)
		resp = heartbeat(t, c, orders, next("m-1", resp))
		wantStatus(t, resp, contract.StatusOK)
	}
	if got := store.commits(); got != 2 {
		t.Fatalf("%d commits after join, takeover and lease renewals, want 2", got)
	}
	if got := store.stored(t, orders).Members["m-1"].MemberLeaseExpiresAt; got != stored {
		t.Errorf("stored lease %s moved to %s", stored, got)
	}
	if st := memberState(t, c, orders, "m-1"); st != group.MemberActive {
		t.Errorf("m-1 is %s 16 s after its stored lease", st)
	}
}

// The ticker reaches groups no actor has loaded yet (a restarted
// coordinator) and expires their leases.
func TestTickerExpiresStoredGroups(t *testing.T) {
	store := newTestStore()
	clock := newFakeClock()
	first := start(t, Options{Store: store, Clock: clock.Now, GroupCommit: true})
	createGroup(t, first, orders)
	wantStatus(t, heartbeat(t, first, orders, join("m-1")), contract.StatusOK)
	if err := first.Shutdown(testCtx(t)); err != nil {
		t.Fatal(err)
	}

	clock.Advance(time.Minute)
	obs := newMessages() // orders is the only group: its first tick
	second := start(t, Options{Store: store, Clock: clock.Now, GroupCommit: true, TickEnabled: true, TickInterval: time.Millisecond,
		Observer: obs})
	<-obs.ticked
	// Loading the group restarted m-1's lease (the coordinator cannot know
	// what an earlier run promised); it expires one TTL later.
	clock.Advance(group.DefaultSettings().MemberLeaseTTL + time.Millisecond)
	second.TickNow()
	eventually.True(t, "m-1 expired in the store", func() bool {
		return store.stored(t, orders).Members["m-1"].State == group.MemberExpired
	})
}

// Admin commands run under the state mutex; a heartbeat batch relies on
// the compare-and-set and the ownership fence alone.
func TestOnlyAdminCommandsTakeTheMutex(t *testing.T) {
	var locks atomic.Int64
	locker := lockerFunc(func(context.Context, group.Key) (func(), error) {
		locks.Add(1)
		return func() {}, nil
	})
	c := start(t, Options{Store: newTestStore(), Locker: locker, GroupCommit: true})
	createGroup(t, c, orders)
	wantStatus(t, heartbeat(t, c, orders, join("m-1")), contract.StatusOK)
	if locks.Load() != 1 {
		t.Errorf("%d locks for a create and a heartbeat commit, want 1 (the create)", locks.Load())
	}
}

type lockerFunc func(context.Context, group.Key) (func(), error)

func (f lockerFunc) Lock(ctx context.Context, key group.Key) (func(), error) { return f(ctx, key) }

// Admin commands and reads: create (group and stream level), duplicates,
// reads, listing, delete and its refusal, and a heartbeat to a missing group.
func TestAdminAndReads(t *testing.T) {
	c := start(t, Options{Store: newTestStore(), GroupCommit: true})
	ctx := testCtx(t)
	create := contract.CreateRequest{RequestedBy: "test"}

	view, err := c.CreateGroup(ctx, group.Key{StreamPrefix: "payments", ConsumerGroup: "ignored"}, create, true)
	if err != nil || view.StreamPrefix != "payments" || view.ConsumerGroup != "payments" {
		t.Fatalf("stream-level create: %+v, %v", view, err)
	}
	_, err = c.CreateGroup(ctx, group.Key{StreamPrefix: "payments"}, create, true)
	if ge := wantCode(t, err, contract.CodeStreamPrefixAlreadyExists); ge.Message != "Stream prefix 'payments' is already managed by coordinator metadata" {
		t.Errorf("message %q", ge.Message)
	}
	_, err = c.CreateGroup(ctx, group.Key{StreamPrefix: "payments", ConsumerGroup: "payments"}, create, false)
	wantCode(t, err, contract.CodeGroupAlreadyExists)
	createGroup(t, c, orders)
	_, err = c.CreateGroup(ctx, group.Key{StreamPrefix: orders.StreamPrefix}, create, true)
	wantCode(t, err, contract.CodeStreamPrefixAlreadyExists)
	createGroup(t, c, billing)

	views, err := c.Groups(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, v := range views {
		names = append(names, v.StreamPrefix+"/"+v.ConsumerGroup)
	}
	if want := []string{"billing/billing-consumer", "orders/orders-consumer", "payments/payments"}; !slices.Equal(names, want) {
		t.Errorf("groups %v, want %v", names, want)
	}

	missing := group.Key{StreamPrefix: "nope", ConsumerGroup: "nope"}
	_, err = c.Group(ctx, missing)
	wantCode(t, err, contract.CodeGroupNotFound)
	_, err = c.Routing(ctx, missing)
	wantCode(t, err, contract.CodeGroupNotFound)
	wantStatus(t, heartbeat(t, c, missing, next("m-1", contract.HeartbeatResponse{MemberEpoch: 3, MetadataVersion: 1})), contract.StatusUnknownMemberID)

	wantStatus(t, heartbeat(t, c, orders, join("m-1")), contract.StatusOK)
	r, err := c.Routing(ctx, orders)
	if err != nil || r.ShardCount != 4 || r.ConsumerGroup != orders.ConsumerGroup {
		t.Errorf("routing %+v, %v", r, err)
	}
	if a, err := c.Assignments(ctx, orders); err != nil || len(a.TargetAssignment["m-1"]) != 4 {
		t.Errorf("assignments %+v, %v", a, err)
	}
	del := contract.DeleteRequest{RequestedBy: "test", Reason: "test"}
	_, err = c.DeleteGroup(ctx, orders, del)
	wantCode(t, err, contract.CodeGroupHasActiveMembers)
	del.Force = true
	before, err := c.DeleteGroup(ctx, orders, del)
	if err != nil || before.ConsumerGroup != orders.ConsumerGroup || before.TargetAssignmentSummary["m-1"] != 4 {
		t.Fatalf("delete: %+v, %v", before, err)
	}
	_, err = c.Group(ctx, orders)
	wantCode(t, err, contract.CodeGroupNotFound)
	_, err = c.DeleteGroup(ctx, orders, del)
	wantCode(t, err, contract.CodeGroupNotFound)
}

func TestOptionsValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    Options
	}{
		{"no store", Options{Settings: group.DefaultSettings()}},
		{"no lease ttl", Options{Store: newTestStore()}},
		{"tick without interval", Options{Store: newTestStore(), Settings: group.DefaultSettings(), TickEnabled: true}},
		{"negative batch", Options{Store: newTestStore(), Settings: group.DefaultSettings(), MaxBatch: -1}},
	} {
		if _, err := New(tc.o); err == nil {
			t.Errorf("%s: New succeeded", tc.name)
		}
	}
}

// prefixesHere is an Ownership that places the stream prefixes it holds here
// and every other prefix elsewhere.
type prefixesHere map[string]bool

func (p prefixesHere) Acquire(context.Context, group.Key) (int64, error)    { return 1, nil }
func (prefixesHere) Release(context.Context, group.Key) error               { return nil }
func (prefixesHere) Held(context.Context, []group.Key) ([]group.Key, error) { return nil, nil }
func (prefixesHere) PruneOwners(context.Context) (int, error)               { return 0, nil }
func (prefixesHere) Serving() bool                                          { return true }
func (p prefixesHere) PlacedHere(prefix string) bool                        { return p[prefix] }
func (prefixesHere) Leaving() bool                                          { return false }
func (prefixesHere) Created(group.Key)                                      {}
func (prefixesHere) ID() string                                             { return "here" }

// In a cluster, PlacedKeys lists only the stored groups placed on this
// coordinator (each owner refreshes the gauges of its own groups); outside
// one, every stored group.
func TestPlacedKeysAreTheGroupsPlacedHere(t *testing.T) {
	ctx := t.Context()
	store := newTestStore()
	keys := []group.Key{{StreamPrefix: "here", ConsumerGroup: "a"}, {StreamPrefix: "here", ConsumerGroup: "b"}, {StreamPrefix: "there", ConsumerGroup: "a"}}
	for _, k := range keys {
		g := group.New()
		if err := g.Create(contract.InstantOf(time.Now()), group.DefaultSettings(), k, contract.CreateRequest{RequestedBy: "t"}).Err; err != nil {
			t.Fatal(err)
		}
		if _, err := store.Wrapped.Create(ctx, k, persistence.Encode(g)); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name string
		own  Ownership
		want []group.Key
	}{
		{"no cluster", nil, keys},
		{"cluster", prefixesHere{"here": true}, keys[:2]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := start(t, Options{Store: store, Ownership: tc.own}).PlacedKeys(ctx)
			if err != nil || !slices.Equal(got, tc.want) {
				t.Fatalf("PlacedKeys = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}
