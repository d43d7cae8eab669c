package actors

import (
	"fmt"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/eventually"
)

// shedCounter is an Observer counting shed heartbeats.
type shedCounter struct {
	NopObserver
	shed atomic.Int64
}

func (s *shedCounter) HeartbeatShed(group.Key) { s.shed.Add(1) }

// A group with MaxQueuedHeartbeats heartbeats queued answers the next one
// at once with RETRY (it never enters the mailbox, the member keeps its
// lease) and counts it; the queued ones are answered normally once the
// actor moves on, and the group takes heartbeats again.
func TestHeartbeatsShedAboveTheQueueBound(t *testing.T) {
	const bound = 3
	entered, release := make(chan struct{}), make(chan struct{})
	obs := &shedCounter{}
	c := start(t, Options{Store: newTestStore(), GroupCommit: true, MaxQueuedHeartbeats: bound, Observer: obs,
		BeforeHandle: func(_ group.Key, msg any) {
			if hb, ok := msg.(*heartbeatMsg); ok && hb.Request.MemberID == "m-blocker" {
				close(entered)
				<-release
			}
		}})
	createGroup(t, c, orders)

	out := make(chan result, bound)
	store := newTestStore() // goHeartbeat's stored flag is not looked at here
	goHeartbeat(c, store, orders, "m-blocker", out)
	<-entered // the actor is busy with it; it counts until handled
	for i := range bound - 1 {
		goHeartbeat(c, store, orders, fmt.Sprintf("m-%d", i), out)
	}
	eventually.True(t, "queued heartbeats", func() bool { return queuedHeartbeats(c, orders) == bound })

	req := join("m-shed")
	resp := heartbeat(t, c, orders, req)
	if want := group.RetryResponse(group.DefaultSettings(), req); !reflect.DeepEqual(resp, want) {
		t.Errorf("heartbeat over the bound: %+v, want the RETRY answer %+v", resp, want)
	}
	if n := obs.shed.Load(); n != 1 {
		t.Errorf("%d heartbeats shed, want 1", n)
	}
	if n := queuedHeartbeats(c, orders); n != bound {
		t.Errorf("%d heartbeats queued after shedding, want %d (the shed one must not be queued)", n, bound)
	}

	close(release)
	for range bound {
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
	h := newHold(func(msg any) bool { _, ok := msg.(*createMsg); return ok })
	entered, release := h.entered, h.release
	obs := &shedCounter{}
	c := start(t, Options{Store: newTestStore(), GroupCommit: true, MaxQueuedHeartbeats: 1, Observer: obs, BeforeHandle: h.hook})
	createGroup(t, c, orders)
	h.armed.Store(true)
	creates := make(chan error, 3)
	for range 3 { // the first blocks the actor, two wait in the mailbox
		go func() {
			_, err := c.CreateGroup(testCtx(t), orders, group.CreateRequest{RequestedBy: "t"}, false)
			creates <- err
		}()
	}
	<-entered
	eventually.True(t, "queued creates", func() bool { return queued(c, orders) >= 2 })
	out := make(chan result, 1)
	goHeartbeat(c, newTestStore(), orders, "m-1", out)
	eventually.True(t, "queued heartbeat", func() bool { return queuedHeartbeats(c, orders) == 1 })

	close(release)
	for range 3 {
		wantCode(t, <-creates, contract.CodeGroupAlreadyExists)
	}
	r := <-out
	if r.err != nil {
		t.Fatal(r.err)
	}
	wantStatus(t, r.resp, contract.StatusOK)
	if n := obs.shed.Load(); n != 0 {
		t.Errorf("%d heartbeats shed behind other requests, want 0", n)
	}
}

// queuedHeartbeats returns the number of heartbeats in key's mailbox,
// counting one being handled.
func queuedHeartbeats(c *Coordinator, key group.Key) int64 {
	ch, ok := c.registry.Load(key)
	if !ok {
		return 0
	}
	return ch.(*child).depth.heartbeats.Load()
}

// A heartbeat waits for its group actor at most StoreTimeout: behind an
// actor held up (here by a hook; with a frozen store, by store calls that
// each take the whole timeout) it is answered RETRY and counted as shed
// while the actor is still busy, and the actor's late answer is dropped.
func TestAHeartbeatWaitsForItsActorAtMostTheStoreTimeout(t *testing.T) {
	h := newHold(func(msg any) bool { _, ok := msg.(*heartbeatMsg); return ok })
	entered, release := h.entered, h.release
	obs := &shedCounter{}
	c := start(t, Options{Store: newTestStore(), GroupCommit: true, Observer: obs,
		StoreTimeout: 20 * time.Millisecond, RequestTimeout: time.Hour, BeforeHandle: h.hook})
	createGroup(t, c, orders)
	h.armed.Store(true)
	out := make(chan result, 2)
	store := newTestStore() // goHeartbeat's stored flag is not looked at here
	goHeartbeat(c, store, orders, "m-held", out)
	<-entered
	goHeartbeat(c, store, orders, "m-queued", out)
	for range 2 {
		r := <-out
		if r.err != nil {
			t.Fatalf("%s: %v", r.id, r.err)
		}
		wantStatus(t, r.resp, contract.StatusRetry)
	}
	select {
	case <-release:
		t.Fatal("released before the heartbeats were answered")
	default:
	}
	if n := obs.shed.Load(); n != 2 {
		t.Errorf("%d heartbeats counted as shed, want 2", n)
	}
	close(release)
	wantStatus(t, heartbeat(t, c, orders, join("m-after")), contract.StatusOK)
}

// hold is a BeforeHandle hook that, once armed, holds the group actor in
// the first message match accepts: it closes entered and waits for
// release to be closed.
type hold struct {
	armed            atomic.Bool
	match            func(msg any) bool
	entered, release chan struct{}
}

func newHold(match func(msg any) bool) *hold {
	return &hold{match: match, entered: make(chan struct{}), release: make(chan struct{})}
}

func (h *hold) hook(_ group.Key, msg any) {
	if h.match(msg) && h.armed.CompareAndSwap(true, false) {
		close(h.entered)
		<-h.release
	}
}
