package actors

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redis-stream-coordinator/coordinator/actors/core"
	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/eventually"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/fakeclock"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/faultstore"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/grouptest"
	"github.com/redis-stream-coordinator/coordinator/persistence"
	"github.com/redis-stream-coordinator/coordinator/persistence/memory"
)

// waitLimit only keeps a broken test from hanging; no assertion depends on it.
const waitLimit = 30 * time.Second

// testStore is the test kit's fault-injecting store
// (internal/testkit/faultstore) on a memory store: package actors' own
// tests cannot use coordtest's (coordtest imports actors), so they use the
// store it wraps directly. shared makes the store say that other
// coordinator processes write it too (Shared), as Redis and SQL do; set it
// before the coordinator starts.
type testStore struct {
	*faultstore.Store
	shared bool
}

func newTestStore() *testStore { return wrapStore(memory.New()) }

// wrapStore puts the fault-injecting store in front of mem (a handle of
// its own, for a coordinator of its own).
func wrapStore(mem *memory.Store) *testStore { return &testStore{Store: faultstore.New(mem)} }

func (s *testStore) Shared() bool { return s.shared }

// commits returns the number of commits that wrote.
func (s *testStore) commits() int { return len(s.Committed()) }

// writeCalls returns the number of Create, Commit and Delete calls.
func (s *testStore) writeCalls() int {
	return s.Calls(faultstore.CallCreate, faultstore.CallCommit, faultstore.CallDelete)
}

// readsAndWrites returns the number of reads (Load, Exists) and writes (Create,
// Commit, Delete).
func (s *testStore) readsAndWrites() (reads, writes int) {
	return s.Calls(faultstore.CallLoad, faultstore.CallExists), s.writeCalls()
}

// wrote reports whether a commit that has returned wrote member id.
func (s *testStore) wrote(id string) bool {
	for _, m := range s.Committed() {
		if _, ok := m.PutMembers[id]; ok {
			return true
		}
	}
	return false
}

// stored decodes the group as the store holds it.
func (s *testStore) stored(t *testing.T, key group.Key) *group.Group {
	t.Helper()
	doc, rev, err := s.Wrapped.Load(context.Background(), key)
	if err != nil {
		t.Fatalf("load %s: %v", key, err)
	}
	g, err := persistence.Decode(doc, rev)
	if err != nil {
		t.Fatalf("decode %s: %v", key, err)
	}
	return g
}

// newFakeClock returns a settable clock at the tests' start time.
func newFakeClock() *fakeclock.Clock {
	return fakeclock.New(time.Date(2026, 5, 21, 0, 0, 0, 0, time.UTC))
}

// recorder is an Observer that keeps the conflicts and restarts it saw.
type recorder struct {
	NopObserver
	mu        sync.Mutex
	conflicts []string // "operation#attempt"
	restarted chan group.Key
}

func newRecorder() *recorder { return &recorder{restarted: make(chan group.Key, 16)} }

func (r *recorder) Conflict(_ group.Key, op core.Op, attempt int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.conflicts = append(r.conflicts, fmt.Sprintf("%s#%d", op, attempt))
}

func (r *recorder) ActorRestarted(key group.Key) { r.restarted <- key }

func (r *recorder) conflictList() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.conflicts...)
}

// start creates a coordinator with default settings where o leaves them
// zero, and shuts it down when the test ends (unless the test did). It is
// package actors' one builder of a coordinator: these tests cannot use
// internal/testkit/coordtest, which imports actors.
func start(t testing.TB, o Options) *System {
	t.Helper()
	if o.Settings == (group.Settings{}) {
		o.Settings = group.DefaultSettings()
	}
	c, err := New(o)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Shutdown(context.Background()); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	})
	return c
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	t.Cleanup(cancel)
	return ctx
}

var (
	orders  = group.Key{StreamPrefix: "orders", ConsumerGroup: "orders-consumer"}
	billing = group.Key{StreamPrefix: "billing", ConsumerGroup: "billing-consumer"}
)

func createGroup(t *testing.T, c *System, key group.Key) {
	t.Helper()
	if _, err := c.CreateGroup(testCtx(t), key, contract.CreateRequest{RequestedBy: "test"}, false); err != nil {
		t.Fatalf("create %s: %v", key, err)
	}
}

// join is a member's first heartbeat, next the one it sends after an
// answer (internal/testkit/grouptest).
var join, next = grouptest.JoinRequest, grouptest.NextRequest

// heartbeat sends a valid heartbeat and fails the test on an error.
func heartbeat(t *testing.T, c *System, key group.Key, req *contract.HeartbeatRequest) contract.HeartbeatResponse {
	t.Helper()
	if err := group.ValidateHeartbeat(req, group.DefaultSettings()); err != nil {
		t.Fatalf("invalid heartbeat: %v", err)
	}
	resp, err := c.Heartbeat(testCtx(t), key, req)
	if err != nil {
		t.Fatalf("heartbeat %s of %s: %v", req.MemberID, key, err)
	}
	return resp
}

// heartbeatFails sends req and fails the test unless it fails with want
// (errors.Is).
func heartbeatFails(t *testing.T, c *System, key group.Key, req *contract.HeartbeatRequest, want error) {
	t.Helper()
	if resp, err := c.Heartbeat(testCtx(t), key, req); !errors.Is(err, want) {
		t.Fatalf("heartbeat %s of %s: %+v, %v; want %v", req.MemberID, key, resp, err, want)
	}
}

func wantStatus(t *testing.T, resp contract.HeartbeatResponse, want contract.HeartbeatStatus) {
	t.Helper()
	if resp.Status != want {
		t.Fatalf("heartbeat %s: status %s, want %s", resp.MemberID, resp.Status, want)
	}
}

// wantCode checks that err is the domain error code.
func wantCode(t *testing.T, err error, code contract.Code) *group.Error {
	t.Helper()
	ge, ok := errors.AsType[*group.Error](err)
	if !ok || ge.Code != code {
		t.Fatalf("error %v, want domain error %s", err, code)
	}
	return ge
}

// queued returns the number of messages in key's mailbox, counting the one
// being handled.
func queued(c *System, key group.Key) int64 {
	ch, ok := c.registry.Load(key)
	if !ok {
		return 0
	}
	return ch.(*child).depth.n.Load()
}

// gate makes the at-th Commit block until released, so that requests pile
// up in the mailbox behind it: the actor is busy with that commit.
type gate struct {
	at               int
	entered, release chan struct{}
}

// newGate gates the first Commit.
func newGate() *gate { return newGateAt(1) }

func newGateAt(n int) *gate {
	return &gate{at: n, entered: make(chan struct{}), release: make(chan struct{})}
}

// before is the store's Before function (faultstore.Store.Before).
func (g *gate) before(_ context.Context, op faultstore.Op) error {
	if op.Call == faultstore.CallCommit && op.N == g.at {
		close(g.entered)
		<-g.release
	}
	return nil
}

// result is one concurrent heartbeat's outcome.
type result struct {
	id     string
	resp   contract.HeartbeatResponse
	err    error
	stored bool // the store had committed the member when the reply arrived
}

// goHeartbeat sends a join from a goroutine and reports on out whether the
// member was already stored when the reply arrived.
func goHeartbeat(c *System, store *testStore, key group.Key, id string, out chan<- result) {
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		resp, err := c.Heartbeat(ctx, key, join(id))
		out <- result{id: id, resp: resp, err: err, stored: store.wrote(id)}
	}()
}

// queueJoins sends n joins to orders (m-00 … m-nn) from goroutines so that
// they queue behind g: the first blocks in its commit, the other n-1 wait
// in the mailbox. It returns once all n are queued; their results arrive
// on the returned channel after g is released.
func queueJoins(t *testing.T, c *System, store *testStore, g *gate, n int) <-chan result {
	t.Helper()
	out := make(chan result, n)
	goHeartbeat(c, store, orders, "m-00", out)
	<-g.entered
	for i := 1; i < n; i++ {
		goHeartbeat(c, store, orders, fmt.Sprintf("m-%02d", i), out)
	}
	// The flush blocked in the first commit, plus the n-1 heartbeats.
	eventually.True(t, "queued heartbeats", func() bool { return queued(c, orders) >= int64(n) })
	return out
}

// wantJoinsStored takes n results from out and fails unless each is OK
// and was answered only after its commit returned.
func wantJoinsStored(t *testing.T, out <-chan result, n int) {
	t.Helper()
	for range n {
		r := <-out
		if r.err != nil {
			t.Fatalf("%s: %v", r.id, r.err)
		}
		wantStatus(t, r.resp, contract.StatusOK)
		if !r.stored {
			t.Errorf("%s answered before its commit returned", r.id)
		}
	}
}

// messages is an Observer that counts the messages group actors handled by
// type and signals each handled tick on ticked (when it has room).
type messages struct {
	NopObserver
	mu     sync.Mutex
	n      map[string]int
	ticked chan struct{}
}

func newMessages() *messages { return &messages{n: map[string]int{}, ticked: make(chan struct{}, 1)} }

func (o *messages) MessageHandled(msgType string, _ time.Duration) {
	o.mu.Lock()
	o.n[msgType]++
	o.mu.Unlock()
	if msgType == MsgTick {
		select {
		case o.ticked <- struct{}{}:
		default:
		}
	}
}

// handled returns the number of messages of msgType handled so far; a
// message is counted after its answer was sent.
func (o *messages) handled(msgType string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.n[msgType]
}
