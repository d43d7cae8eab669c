package actors

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/eventually"
)

// shedCounter is an Observer counting shed heartbeats.
type shedCounter struct {
	NopObserver
	shed atomic.Int64
}

func (s *shedCounter) HeartbeatShed(group.Key) { s.shed.Add(1) }

// A group with MaxQueuedHeartbeats heartbeats queued fails the next one
// at once with ErrShed (status RETRY: it never enters the mailbox, the
// member keeps its lease) and counts it; the queued ones are answered normally once the
// actor moves on, and the group takes heartbeats again. The actor is held
// in the commit of a first heartbeat, which is then parked in its batch
// and no longer counts.
func TestHeartbeatsShedAboveTheQueueBound(t *testing.T) {
	const bound = 3
	g := newGate()
	store := newTestStore()
	store.Before(g.before)
	obs := &shedCounter{}
	c := start(t, Options{Store: store, GroupCommit: true, MaxQueuedHeartbeats: bound, Observer: obs})
	createGroup(t, c, orders)

	out := make(chan result, bound+1)
	goHeartbeat(c, store, orders, "m-blocker", out)
	<-g.entered // the actor is busy with its commit
	for i := range bound {
		goHeartbeat(c, store, orders, fmt.Sprintf("m-%d", i), out)
	}
	eventually.True(t, "queued heartbeats", func() bool { return queuedHeartbeats(c, orders) == bound })

	req := join("m-shed")
	heartbeatFails(t, c, orders, req, contract.ErrShed)
	if n := obs.shed.Load(); n != 1 {
		t.Errorf("%d heartbeats shed, want 1", n)
	}
	if n := queuedHeartbeats(c, orders); n != bound {
		t.Errorf("%d heartbeats queued after shedding, want %d (the shed one must not be queued)", n, bound)
	}

	close(g.release)
	for range bound + 1 {
		r := <-out
		if r.err != nil {
			t.Fatalf("%s: %v", r.id, r.err)
		}
		wantStatus(t, r.resp, contract.StatusOK)
	}
	wantStatus(t, heartbeat(t, c, orders, req), contract.StatusOK)
	if n := obs.shed.Load(); n != 1 {
		t.Errorf("%d heartbeats shed after the queue drained, want 1", n)
	}
}

// Only heartbeats count towards the bound: other requests queued for the
// group do not make heartbeats shed.
func TestOnlyQueuedHeartbeatsCountTowardsTheBound(t *testing.T) {
	g := newGate()
	store := newTestStore()
	store.Before(g.before)
	obs := &shedCounter{}
	c := start(t, Options{Store: store, GroupCommit: true, MaxQueuedHeartbeats: 1, Observer: obs})
	createGroup(t, c, orders)
	out := make(chan result, 2)
	goHeartbeat(c, store, orders, "m-blocker", out)
	<-g.entered // the actor is busy with its commit
	creates := make(chan error, 2)
	for range 2 { // wait in the mailbox
		go func() {
			_, err := c.CreateGroup(testCtx(t), orders, contract.CreateRequest{RequestedBy: "t"}, false)
			creates <- err
		}()
	}
	eventually.True(t, "queued creates", func() bool { return queued(c, orders) >= 3 }) // the flush and the creates
	goHeartbeat(c, store, orders, "m-1", out)
	eventually.True(t, "queued heartbeat", func() bool { return queuedHeartbeats(c, orders) == 1 })

	close(g.release)
	for range 2 {
		wantCode(t, <-creates, contract.CodeGroupAlreadyExists)
	}
	for range 2 {
		r := <-out
		if r.err != nil {
			t.Fatal(r.err)
		}
		wantStatus(t, r.resp, contract.StatusOK)
	}
	if n := obs.shed.Load(); n != 0 {
		t.Errorf("%d heartbeats shed behind other requests, want 0", n)
	}
}

// queuedHeartbeats returns the number of heartbeats in key's mailbox,
// counting one being handled.
func queuedHeartbeats(c *System, key group.Key) int64 {
	ch, ok := c.registry.Load(key)
	if !ok {
		return 0
	}
	return ch.(*child).depth.heartbeats.Load()
}

// A heartbeat waits for its group actor at most StoreTimeout: behind an
// actor held up (here in a commit that ignores its deadline; with a frozen
// store, by store calls that each take the whole timeout) it fails with
// ErrShed (status RETRY) and is counted as shed while the actor is still busy, and the
// actor's late answer is dropped.
func TestAHeartbeatWaitsForItsActorAtMostTheStoreTimeout(t *testing.T) {
	g := newGate()
	store := newTestStore()
	store.Before(g.before)
	obs := &shedCounter{}
	c := start(t, Options{Store: store, GroupCommit: true, Observer: obs,
		StoreTimeout: 20 * time.Millisecond, RequestTimeout: time.Hour})
	createGroup(t, c, orders)
	out := make(chan result, 2)
	goHeartbeat(c, store, orders, "m-held", out)
	<-g.entered
	goHeartbeat(c, store, orders, "m-queued", out)
	for range 2 {
		if r := <-out; !errors.Is(r.err, contract.ErrShed) {
			t.Fatalf("%s: %+v, %v; want ErrShed", r.id, r.resp, r.err)
		}
	}
	select {
	case <-g.release:
		t.Fatal("released before the heartbeats were answered")
	default:
	}
	if n := obs.shed.Load(); n != 2 {
		t.Errorf("%d heartbeats counted as shed, want 2", n)
	}
	close(g.release)
	wantStatus(t, heartbeat(t, c, orders, join("m-after")), contract.StatusOK)
}
