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
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/grouptest"
	"github.com/redis-stream-coordinator/coordinator/persistence"
	"github.com/redis-stream-coordinator/coordinator/persistence/memory"
)

// waitLimit only keeps a broken test from hanging; no assertion depends on it.
const waitLimit = 30 * time.Second

// testStore wraps the memory store with fault hooks and a record of what
// it wrote. Hooks are set before the coordinator starts and never changed.
type testStore struct {
	*memory.Store
	shared bool
	// onCommit runs every Commit; n counts Commit calls from 1, write
	// performs the real commit. Nil: write.
	onCommit func(n int, write func() (persistence.Revision, error)) (persistence.Revision, error)
	// onDelete, when set, runs before every Delete; an error is returned
	// without deleting.
	onDelete func() error
	// beforeCommit, when set, runs first in every Commit with its
	// mutation (a panic in it is a panic of the committing actor).
	beforeCommit func(persistence.Mutation)

	mu      sync.Mutex
	calls   int                    // Commit calls
	written []persistence.Mutation // mutations of the commits that succeeded
	writes  int                    // Create, Commit and Delete calls through the wrapper
	reads   int                    // Load and Exists calls through the wrapper
}

func newTestStore() *testStore { return &testStore{Store: memory.New()} }

func (s *testStore) Shared() bool { return s.shared }

func (s *testStore) Load(ctx context.Context, key group.Key) (persistence.Document, persistence.Revision, error) {
	s.read()
	return s.Store.Load(ctx, key)
}

func (s *testStore) Exists(ctx context.Context, key group.Key) (bool, error) {
	s.read()
	return s.Store.Exists(ctx, key)
}

func (s *testStore) read() {
	s.mu.Lock()
	s.reads++
	s.mu.Unlock()
}

func (s *testStore) Create(ctx context.Context, key group.Key, doc persistence.Document) (persistence.Revision, error) {
	s.mu.Lock()
	s.writes++
	s.mu.Unlock()
	return s.Store.Create(ctx, key, doc)
}

func (s *testStore) Commit(ctx context.Context, key group.Key, expected persistence.Revision, m persistence.Mutation) (persistence.Revision, error) {
	if s.beforeCommit != nil {
		s.beforeCommit(m)
	}
	s.mu.Lock()
	s.writes++
	s.calls++
	n := s.calls
	s.mu.Unlock()
	write := func() (persistence.Revision, error) {
		rev, err := s.Store.Commit(ctx, key, expected, m)
		if err == nil {
			s.mu.Lock()
			s.written = append(s.written, m)
			s.mu.Unlock()
		}
		return rev, err
	}
	if s.onCommit == nil {
		return write()
	}
	return s.onCommit(n, write)
}

func (s *testStore) Delete(ctx context.Context, key group.Key, expected persistence.Revision) error {
	s.mu.Lock()
	s.writes++
	s.mu.Unlock()
	if s.onDelete != nil {
		if err := s.onDelete(); err != nil {
			return err
		}
	}
	return s.Store.Delete(ctx, key, expected)
}

// commits returns the number of commits that wrote.
func (s *testStore) commits() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.written)
}

// writeCalls returns the number of Create, Commit and Delete calls.
func (s *testStore) writeCalls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.writes
}

// readsAndWrites returns the number of reads (Load, Exists) and writes (Create,
// Commit, Delete).
func (s *testStore) readsAndWrites() (reads, writes int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reads, s.writes
}

// wrote reports whether a commit that has returned wrote member id.
func (s *testStore) wrote(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range s.written {
		if _, ok := m.PutMembers[id]; ok {
			return true
		}
	}
	return false
}

// stored decodes the group as the store holds it.
func (s *testStore) stored(t *testing.T, key group.Key) *group.Group {
	t.Helper()
	doc, rev, err := s.Store.Load(context.Background(), key)
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
// zero, and shuts it down when the test ends.
func start(t *testing.T, o Options) *System {
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

func (g *gate) onCommit(n int, write func() (persistence.Revision, error)) (persistence.Revision, error) {
	if n == g.at {
		close(g.entered)
		<-g.release
	}
	return write()
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
