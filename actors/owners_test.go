package actors

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis-stream-coordinator/coordinator/cluster"
	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/eventually"
	"github.com/redis-stream-coordinator/coordinator/persistence"
	"github.com/redis-stream-coordinator/coordinator/persistence/memory"
)

// record reads key's ownership record (zero when there is none).
func record(t *testing.T, mem *memory.Store, key group.Key) persistence.Owner {
	t.Helper()
	owners, err := mem.Owners(testCtx(t), []group.Key{key})
	if err != nil {
		t.Fatal(err)
	}
	return owners[0]
}

// actorsLive is an Observer that keeps the number of live group actors.
type actorsLive struct {
	NopObserver
	n atomic.Int64
}

func (a *actorsLive) ActorsLive(n int) { a.n.Store(int64(n)) }

// waitStopped waits until every group actor has stopped (so released
// what it held).
func (a *actorsLive) waitStopped(t *testing.T) {
	t.Helper()
	eventually.True(t, "every group actor stopped", func() bool { return a.n.Load() == 0 })
}

// soleNode starts the node of coordinator "a", alone on mem.
func soleNode(t *testing.T, mem *memory.Store) *cluster.Node {
	t.Helper()
	n := node(t, mem, "a")
	eventually.True(t, "a sees itself", func() bool { return len(n.Live()) == 1 })
	return n
}

// A request for a group that is not stored is answered as for no group
// after one read, and the group is not acquired: no ownership record, no
// load, no write.
func TestRequestsForAnAbsentGroupAcquireNothing(t *testing.T) {
	mem, live := memory.New(), new(actorsLive)
	store := wrapStore(mem)
	c := start(t, Options{Store: store, GroupCommit: true, Ownership: soleNode(t, mem), Observer: live})
	ctx := testCtx(t)

	wantStatus(t, heartbeat(t, c, orders, join("m-1")), contract.StatusUnknownMemberID)
	future := join("m-1")
	future.ProtocolVersion = 2
	resp, err := c.Heartbeat(ctx, orders, future)
	if err != nil {
		t.Fatal(err)
	}
	wantStatus(t, resp, contract.StatusUnsupportedProtocol)
	_, err = c.Group(ctx, orders)
	wantCode(t, err, contract.CodeGroupNotFound)
	_, err = c.DeleteGroup(ctx, orders, contract.DeleteRequest{RequestedBy: "t", Reason: "t"})
	wantCode(t, err, contract.CodeGroupNotFound)
	// The live operations too, at once (not after the request timeout).
	_, err = c.PauseShards(ctx, orders, contract.PauseRequest{Shards: []int{0}, RequestedBy: "t"})
	wantCode(t, err, contract.CodeGroupNotFound)
	_, err = c.StartReset(ctx, orders, group.ResetRequest{Target: group.ResetTarget{To: "LATEST"}, RequestedBy: "t"})
	wantCode(t, err, contract.CodeGroupNotFound)

	if reads, writes := store.readsAndWrites(); reads != 6 || writes != 0 {
		t.Errorf("%d reads and %d writes for 6 requests, want 6 and 0", reads, writes)
	}
	live.waitStopped(t)
	if o := record(t, mem, orders); o != (persistence.Owner{}) {
		t.Errorf("ownership record %+v of a group never stored", o)
	}
}

// A group created right after a request found it absent is served at
// once; its delete removes the ownership record, and a create at once
// after the delete takes a new record.
func TestCreateAfterAbsentAndAfterDelete(t *testing.T) {
	mem, live := memory.New(), new(actorsLive)
	c := start(t, Options{Store: wrapStore(mem), GroupCommit: true, Ownership: soleNode(t, mem), Observer: live})
	ctx := testCtx(t)
	wantStatus(t, heartbeat(t, c, orders, join("m-1")), contract.StatusUnknownMemberID)
	for range 2 {
		createGroup(t, c, orders)
		wantStatus(t, heartbeat(t, c, orders, join("m-1")), contract.StatusOK)
		if o := record(t, mem, orders); o.Epoch == 0 {
			t.Fatal("no ownership record of the created group")
		}
		if _, err := c.DeleteGroup(ctx, orders, contract.DeleteRequest{RequestedBy: "t", Reason: "t", Force: true}); err != nil {
			t.Fatal(err)
		}
		if o := record(t, mem, orders); o != (persistence.Owner{}) {
			t.Fatalf("ownership record %+v after the delete", o)
		}
	}
	live.waitStopped(t)
	if o := record(t, mem, orders); o != (persistence.Owner{}) {
		t.Errorf("ownership record %+v once the actor stopped", o)
	}
}

// A create refused after the group was acquired (here: no requestedBy)
// leaves no ownership record once its actor stops.
func TestARefusedCreateLeavesNoRecord(t *testing.T) {
	mem, live := memory.New(), new(actorsLive)
	c := start(t, Options{Store: wrapStore(mem), GroupCommit: true, Ownership: soleNode(t, mem), Observer: live})
	_, err := c.CreateGroup(testCtx(t), orders, contract.CreateRequest{}, false)
	if _, ok := err.(*group.Error); !ok {
		t.Fatalf("create without requestedBy: %v, want a domain error", err)
	}
	live.waitStopped(t)
	if o := record(t, mem, orders); o != (persistence.Owner{}) {
		t.Errorf("ownership record %+v after a refused create", o)
	}
}

// The first sweep removes the ownership records of groups that are not
// stored and that no live coordinator holds, and keeps those of stored
// groups.
func TestTheFirstSweepPrunesOrphanRecords(t *testing.T) {
	mem := memory.New()
	ctx := testCtx(t)
	gone := persistence.Peer{ID: "gone", Token: "t", URL: "http://gone.test:8080"}
	h := mem.Handle()
	if err := h.Register(ctx, gone, time.Minute); err != nil {
		t.Fatal(err)
	}
	for _, k := range []group.Key{orders, billing} {
		if _, err := h.Acquire(ctx, k, gone); err != nil {
			t.Fatal(err)
		}
	}
	g := group.New()
	if err := g.Create(contract.InstantOf(time.Now()), group.DefaultSettings(), billing, contract.CreateRequest{RequestedBy: "t"}).Err; err != nil {
		t.Fatal(err)
	}
	if _, err := h.Create(ctx, billing, persistence.Encode(g)); err != nil {
		t.Fatal(err)
	}
	if err := h.Deregister(ctx, gone); err != nil { // it stopped without releasing
		t.Fatal(err)
	}

	start(t, Options{Store: wrapStore(mem), GroupCommit: true, Ownership: soleNode(t, mem),
		TickEnabled: true, TickInterval: time.Second})
	eventually.True(t, "the record of the absent group is pruned", func() bool { return record(t, mem, orders) == persistence.Owner{} })
	if o := record(t, mem, billing); o.Epoch == 0 {
		t.Errorf("the stored group's record was pruned")
	}
}
