package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/eventually"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/fakeclock"
)

// Two members share a real coordinator's group: they split the shards
// without ever reading one at the same time; when one leaves, the other
// gets every shard.
func TestMemberJoinSplitLeave(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a coordinator process")
	}
	srv := startCoordinator(t, "memory", "127.0.0.1:6379", "unused", 3*time.Second)
	coord := NewCoordinator(srv.Base, WithBearerLogin("admin", "password"))
	ctx := context.Background()
	if _, err := coord.CreateGroup(ctx, "mjs", "g", 4, "test"); err != nil {
		t.Fatal(err)
	}
	r := newReaders(t)
	run := func(id string) (context.CancelFunc, chan error) {
		m, err := NewMember(MemberConfig{Coordinator: coord, StreamPrefix: "mjs", Group: "g", MemberID: id, LeaseTTL: 3 * time.Second, Hooks: r.hooks(id)})
		if err != nil {
			t.Fatal(err)
		}
		mctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- m.Run(mctx) }()
		return cancel, done
	}
	stopA, doneA := run("a")
	eventually.True(t, "a reads 4 shards", func() bool { return r.count("a") == 4 })
	stopB, doneB := run("b")
	eventually.True(t, "a and b read 2 shards each", func() bool { return r.count("a") == 2 && r.count("b") == 2 })
	stopA()
	if err := <-doneA; err != nil {
		t.Fatalf("a: %v", err)
	}
	eventually.True(t, "b reads 4 shards", func() bool { return r.count("b") == 4 })
	g, err := coord.Group(ctx, "mjs", "g")
	if err != nil {
		t.Fatal(err)
	}
	if g.TargetAssignmentSummary["b"] != 4 || len(g.TargetAssignmentSummary) != 1 {
		t.Errorf("target summary %v: want only b with 4", g.TargetAssignmentSummary)
	}
	stopB()
	if err := <-doneB; err != nil {
		t.Fatalf("b: %v", err)
	}
}

// t0 is where the fake clocks of the member tests start.
var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// clocked is a Member run on a fake clock: every wait of the member
// (heartbeat interval, backoff, LeaveTimeout) and its local lease follow
// that clock, so the test decides when time passes.
type clocked struct {
	t     *testing.T
	clk   *fakeclock.Clock
	mu    sync.Mutex
	waits []time.Time // when each wait for the next heartbeat ends, in order
	stop  func() error
}

// runClocked runs m on clk. stop cancels Run and moves the clock on until
// Run returns, and returns its error.
func runClocked(t *testing.T, m *Member, clk *fakeclock.Clock) *clocked {
	t.Helper()
	c := &clocked{t: t, clk: clk}
	m.now = c.clk.Now
	m.onWait = func(until time.Time) {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.waits = append(c.waits, until)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	var err error
	stopped := false
	c.stop = func() error {
		cancel()
		if !stopped {
			eventually.True(t, "Run returns", func() bool {
				select {
				case err = <-done:
					return true
				default:
					c.clk.Advance(time.Second)
					return false
				}
			})
			stopped = true
		}
		return err
	}
	t.Cleanup(func() { _ = c.stop() })
	return c
}

// waited waits until the member started its n-th wait (from 1) and returns
// when that wait ends.
func (c *clocked) waited(n int) time.Time {
	c.t.Helper()
	var until time.Time
	eventually.True(c.t, fmt.Sprintf("wait %d of the member", n), func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		if len(c.waits) < n {
			return false
		}
		until = c.waits[n-1]
		return true
	})
	return until
}

// leaseEnd is the end of m's local lease (zero when there is none).
func (m *Member) leaseEnd() time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	if end, ok := m.st.LeaseEnd(); ok {
		return end
	}
	return time.Time{}
}

// clockRecorder records the fake clock's reading at each event.
type clockRecorder struct {
	clk *fakeclock.Clock
	mu  sync.Mutex
	at  map[string][]time.Time
}

func (r *clockRecorder) record(ev string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.at == nil {
		r.at = map[string][]time.Time{}
	}
	r.at[ev] = append(r.at[ev], r.clk.Peek())
}

func (r *clockRecorder) times(ev string) []time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]time.Time(nil), r.at[ev]...)
}

// With the coordinator unreachable, a member stops reading every shard
// exactly one lease TTL after the send time of its last accepted
// heartbeat, and cancels its handler calls from the lease's last tenth on.
func TestMemberLocalLease(t *testing.T) {
	var down atomic.Bool
	f := newFake(t, func(n int, req contract.HeartbeatRequest) (contract.HeartbeatResponse, int) {
		if down.Load() {
			return contract.HeartbeatResponse{}, 503
		}
		return ok(1, 0, 1), 200
	})
	clk := fakeclock.New(t0)
	rec := &clockRecorder{clk: clk}
	m, _ := NewMember(MemberConfig{
		Coordinator: NewCoordinator(f.httpSrv.URL), StreamPrefix: "p", Group: "g", MemberID: "m", LeaseTTL: 2 * time.Second,
		Hooks: Hooks{
			OnRevoked:      func(int) { rec.record("revoked") },
			CancelInFlight: func() { rec.record("cancelled") },
		},
	})
	c := runClocked(t, m, clk)
	c.waited(1) // after the join, sent at t0
	if len(m.Owned()) != 2 || !m.leaseEnd().Equal(t0.Add(2*time.Second)) {
		t.Fatalf("after the join sent at t0: owns %v, lease ends at t0+%v, want 2 shards and t0+2s", m.Owned(), m.leaseEnd().Sub(t0))
	}
	c.clk.Set(t0.Add(500 * time.Millisecond)) // the next heartbeat goes out at t0+500ms
	c.waited(2)
	end := t0.Add(2500 * time.Millisecond)
	if got := m.leaseEnd(); !got.Equal(end) {
		t.Fatalf("after the heartbeat sent at t0+500ms the lease ends at t0+%v, want t0+2.5s", got.Sub(t0))
	}
	down.Store(true)
	c.clk.Set(end.Add(-time.Millisecond)) // a refused heartbeat goes out
	c.waited(3)
	if len(rec.times("cancelled")) == 0 {
		t.Error("handler calls not cancelled in the lease's last tenth")
	}
	if got := rec.times("revoked"); len(got) != 0 || len(m.Owned()) != 2 {
		t.Fatalf("revoked at %v before the lease ended; owns %v", got, m.Owned())
	}
	c.clk.Set(end)
	eventually.True(t, "the member stops reading", func() bool { return len(m.Owned()) == 0 })
	for _, at := range rec.times("revoked") {
		if !at.Equal(end) {
			t.Errorf("shard revoked at t0+%v, want at the lease end t0+2.5s", at.Sub(t0))
		}
	}
	down.Store(false)
	if err := c.stop(); err != nil {
		t.Fatal(err)
	}
}

// inFlightTransport counts the heartbeats in flight on the client side.
type inFlightTransport struct{ n atomic.Int64 }

func (tr *inFlightTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	tr.n.Add(1)
	defer tr.n.Add(-1)
	return http.DefaultTransport.RoundTrip(r)
}

// The local lease is applied while a heartbeat waits for its answer: a
// coordinator that does not answer does not keep the member reading past
// its lease (the wait for the answer can outlast the lease's end).
func TestMemberLeaseLapsesWhileHeartbeatHangs(t *testing.T) {
	hang, release := make(chan struct{}), make(chan struct{})
	f := newFake(t, func(n int, req contract.HeartbeatRequest) (contract.HeartbeatResponse, int) {
		if n == 2 {
			close(hang)
			<-release
			return contract.HeartbeatResponse{}, 503
		}
		return ok(1, 0), 200
	})
	defer close(release)
	tr := &inFlightTransport{}
	revoked := make(chan int64, 1) // heartbeats in flight at the first revocation
	m, _ := NewMember(MemberConfig{
		// A 15 s lease makes the answer's timeout 5 s.
		Coordinator: NewCoordinator(f.httpSrv.URL, WithHTTPClient(&http.Client{Transport: tr})), StreamPrefix: "p", Group: "g", MemberID: "m", LeaseTTL: 15 * time.Second,
		Hooks: Hooks{OnRevoked: func(int) {
			select {
			case revoked <- tr.n.Load():
			default:
			}
		}},
	})
	c := runClocked(t, m, fakeclock.New(t0))
	c.waited(1) // after the join, which assigned shard 0
	c.clk.Set(t0.Add(time.Second))
	eventually.True(t, "the next heartbeat hangs", func() bool {
		select {
		case <-hang:
			return true
		default:
			return false
		}
	})
	c.clk.Set(t0.Add(15 * time.Second))
	var n int64
	eventually.True(t, "the lease lapses", func() bool {
		select {
		case n = <-revoked:
			return true
		default:
			return false
		}
	})
	if n != 1 {
		t.Errorf("shard revoked with %d heartbeats in flight, want while the hanging one waits", n)
	}
}

// fakeCoordinator answers heartbeats from a script and records requests.
type fakeCoordinator struct {
	mu      sync.Mutex
	reqs    []contract.HeartbeatRequest
	answer  func(n int, req contract.HeartbeatRequest) (contract.HeartbeatResponse, int)
	httpSrv *httptest.Server
}

func newFake(t *testing.T, answer func(n int, req contract.HeartbeatRequest) (contract.HeartbeatResponse, int)) *fakeCoordinator {
	f := &fakeCoordinator{answer: answer}
	f.httpSrv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req contract.HeartbeatRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		f.mu.Lock()
		f.reqs = append(f.reqs, req)
		n := len(f.reqs)
		f.mu.Unlock()
		resp, code := f.answer(n, req)
		if code != 200 {
			w.WriteHeader(code)
			return
		}
		resp.ResponseTo, resp.MemberID, resp.HeartbeatIntervalMs = req.RequestID, req.MemberID, 10
		_ = json.NewEncoder(w).Encode(resp)
	}))
	t.Cleanup(f.httpSrv.Close)
	return f
}

func (f *fakeCoordinator) requests() []contract.HeartbeatRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]contract.HeartbeatRequest(nil), f.reqs...)
}

func ok(epoch int64, shards ...int) contract.HeartbeatResponse {
	r := contract.HeartbeatResponse{Status: StatusOK, MemberEpoch: epoch, MetadataVersion: epoch}
	r.Assignment.AssignedShards = contract.NewShardSet(shards...)
	return r
}

// The status table of the member: a lost answer is retried with the
// previous epoch; FENCED_MEMBER_EPOCH drops everything and rejoins with
// epoch 0; RETRY keeps the state; INVALID_REQUEST ends Run with an error.
func TestMemberStatuses(t *testing.T) {
	f := newFake(t, func(n int, req contract.HeartbeatRequest) (contract.HeartbeatResponse, int) {
		switch n {
		case 1:
			return ok(2, 0, 1), 200
		case 2:
			return contract.HeartbeatResponse{}, 500 // lost answer
		case 3:
			return contract.HeartbeatResponse{Status: StatusRetry}, 200
		case 4:
			return contract.HeartbeatResponse{Status: StatusFencedMemberEpoch, MemberEpoch: 5, MetadataVersion: 4}, 200
		case 5:
			return ok(6, 1), 200
		case 6:
			r := ok(6, 1)
			r.Status = StatusRevokePending
			r.Assignment.AssignedShards = nil
			return r, 200
		default:
			return contract.HeartbeatResponse{Status: StatusInvalidRequest}, 200
		}
	})
	var mu sync.Mutex
	var events []string
	rec := func(e string) { mu.Lock(); events = append(events, e); mu.Unlock() }
	m, _ := NewMember(MemberConfig{
		Coordinator: NewCoordinator(f.httpSrv.URL), StreamPrefix: "p", Group: "g", MemberID: "m",
		Hooks: Hooks{
			OnAssigned: func(s int) { rec("+" + string(rune('0'+s))) },
			OnRevoked:  func(s int) { rec("-" + string(rune('0'+s))) },
			OnFenced:   func(Status) { rec("fenced") },
		},
	})
	err := m.Run(context.Background())
	var pe *ProtocolError
	if !errors.As(err, &pe) || pe.Status != StatusInvalidRequest {
		t.Fatalf("Run: %v, want INVALID_REQUEST", err)
	}
	reqs := f.requests()
	epochs := []int64{}
	for _, r := range reqs {
		epochs = append(epochs, r.MemberEpoch)
	}
	want := []int64{0, 2, 2, 2, 0, 6, 6}
	if len(epochs) != len(want) {
		t.Fatalf("epochs %v, want %v", epochs, want)
	}
	for i := range want {
		if epochs[i] != want[i] {
			t.Fatalf("epochs %v, want %v", epochs, want)
		}
	}
	if got := len(reqs[4].OwnedShards) + len(reqs[4].RevokingShards); got != 0 {
		t.Errorf("rejoin reports %+v", reqs[4])
	}
	if len(reqs[6].OwnedShards) != 0 || len(reqs[6].RevokingShards) != 1 || reqs[6].RevokingShards[0].State != contract.RevokeRevoked {
		t.Errorf("after REVOKE_PENDING dropped shard 1: %+v", reqs[6])
	}
	mu.Lock()
	defer mu.Unlock()
	wantEv := []string{"+0", "+1", "-0", "-1", "fenced", "+1", "-1"}
	if len(events) != len(wantEv) {
		t.Fatalf("events %v, want %v", events, wantEv)
	}
	for i := range wantEv {
		if events[i] != wantEv[i] {
			t.Fatalf("events %v, want %v", events, wantEv)
		}
	}
}

// RETRY answers do not renew the local lease, and a revoked shard is
// reported DRAINING with its in-flight count until it drains.
func TestMemberRetryDoesNotRenewAndDrains(t *testing.T) {
	var inflight atomic.Int64
	inflight.Store(3)
	f := newFake(t, func(n int, req contract.HeartbeatRequest) (contract.HeartbeatResponse, int) {
		if n == 1 || req.MemberEpoch == -1 {
			return ok(2, 0), 200
		}
		return contract.HeartbeatResponse{Status: StatusRetry}, 200
	})
	clk := fakeclock.New(t0)
	rec := &clockRecorder{clk: clk}
	m, _ := NewMember(MemberConfig{
		Coordinator: NewCoordinator(f.httpSrv.URL), StreamPrefix: "p", Group: "g", MemberID: "m", LeaseTTL: 300 * time.Millisecond,
		Hooks: Hooks{
			OnRevoked: func(int) { rec.record("revoked") },
			InFlight:  func(int) int { return int(inflight.Load()) },
		},
	})
	c := runClocked(t, m, clk)
	c.waited(1) // after the join, sent at t0
	clk.Set(t0.Add(200 * time.Millisecond))
	c.waited(2) // after a RETRY
	if end := m.leaseEnd(); !end.Equal(t0.Add(300 * time.Millisecond)) {
		t.Fatalf("after a RETRY the lease ends at t0+%v, want t0+300ms", end.Sub(t0))
	}
	clk.Set(t0.Add(300 * time.Millisecond))
	eventually.True(t, "the lease lapses", func() bool { return len(rec.times("revoked")) == 1 })
	if at := rec.times("revoked")[0]; !at.Equal(t0.Add(300 * time.Millisecond)) {
		t.Errorf("revoked at t0+%v, want at the lease end t0+300ms", at.Sub(t0))
	}
	// The clock moves on as the member retries.
	lastReport := func(state contract.RevokingShardState, inFlight int64) func() bool {
		return func() bool {
			clk.Advance(100 * time.Millisecond)
			r := f.requests()
			rs := r[len(r)-1].RevokingShards
			return len(rs) == 1 && rs[0].State == state && rs[0].InFlight == inFlight
		}
	}
	eventually.True(t, "a DRAINING report with 3 in flight", lastReport(contract.RevokeDraining, 3))
	inflight.Store(0)
	eventually.True(t, "REVOKED report", lastReport(contract.RevokeRevoked, 0))
}

// countingProxy forwards to target and counts heartbeat requests.
func countingProxy(t *testing.T, target string) (*httptest.Server, *atomic.Int64) {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int64
	rp := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: u.Scheme, Host: u.Host})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/heartbeat") {
			n.Add(1)
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// Against a group that does not exist, Run returns ErrGroupNotFound after
// a handful of heartbeats; with CreateGroup it creates the group and reads
// its shards.
func TestMemberMissingGroup(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a coordinator process")
	}
	srv := startCoordinator(t, "memory", "127.0.0.1:6379", "unused", 3*time.Second)
	proxy, heartbeats := countingProxy(t, srv.Base)
	base := proxy.URL + strings.TrimPrefix(srv.Base, "http://"+strings.Split(strings.TrimPrefix(srv.Base, "http://"), "/")[0])
	coord := NewCoordinator(base, WithBasicAuth("admin", "password"))
	m, _ := NewMember(MemberConfig{Coordinator: coord, StreamPrefix: "missing", Group: "g", MemberID: "a"})
	err := m.Run(context.Background())
	t.Logf("Run returned %v after %d heartbeats", err, heartbeats.Load())
	if !errors.Is(err, ErrGroupNotFound) {
		t.Fatalf("Run: %v, want ErrGroupNotFound", err)
	}
	if n := heartbeats.Load(); n >= 20 {
		t.Errorf("%d heartbeats sent against a missing group", n)
	}

	r := newReaders(t)
	m, _ = NewMember(MemberConfig{Coordinator: coord, StreamPrefix: "missing", Group: "g", MemberID: "a", CreateGroup: true, CreateShards: 3, Hooks: r.hooks("a")})
	mctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(mctx) }()
	eventually.True(t, "the member created the group and reads its 3 shards", func() bool { return r.count("a") == 3 })
	if ttl := m.LeaseTTL(); ttl != 3*time.Second {
		t.Errorf("lease TTL %v, want the coordinator's 3s", ttl)
	}
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// Refused heartbeats (here UNKNOWN_MEMBER_ID for a group the member cannot
// check) are retried with capped exponential backoff, not in a loop: the
// member's clock is moved to the end of each of its waits, and fewer than
// 20 heartbeats go out in 3 s of that clock.
func TestMemberBacksOffWhenRefused(t *testing.T) {
	f := newFake(t, func(int, contract.HeartbeatRequest) (contract.HeartbeatResponse, int) {
		return contract.HeartbeatResponse{Status: StatusUnknownMemberID}, 200
	})
	m, _ := NewMember(MemberConfig{Coordinator: NewCoordinator(f.httpSrv.URL), StreamPrefix: "p", Group: "g", MemberID: "m"})
	c := runClocked(t, m, fakeclock.New(t0))
	for n := 1; n <= 20; n++ {
		until := c.waited(n)
		if until.After(t0.Add(3 * time.Second)) {
			break
		}
		c.clk.Set(until)
	}
	n := len(f.requests())
	t.Logf("%d heartbeats in 3 s of UNKNOWN_MEMBER_ID answers", n)
	if n >= 20 {
		t.Errorf("%d heartbeats in 3 s: no backoff", n)
	}
	if err := c.stop(); err != nil {
		t.Fatal(err)
	}
}

// Heartbeats follow the owner named by X-Coordinator-Owner (keeping the
// configured base path), and fall back to the configured coordinator
// after a RETRY from the owner or a connection error.
func TestMemberFollowsOwner(t *testing.T) {
	var mu sync.Mutex
	hits := map[string]int{}
	answer := func(name, owner string, retry func() bool) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !strings.HasPrefix(r.URL.Path, "/coord/v1/streams/p/groups/g/members/m/heartbeat") {
				http.Error(w, "wrong path "+r.URL.Path, 404)
				return
			}
			var req contract.HeartbeatRequest
			_ = json.NewDecoder(r.Body).Decode(&req)
			mu.Lock()
			hits[name]++
			mu.Unlock()
			resp := ok(1, 0)
			if retry() {
				resp = contract.HeartbeatResponse{Status: StatusRetry}
			}
			resp.ResponseTo, resp.MemberID, resp.HeartbeatIntervalMs = req.RequestID, req.MemberID, 10
			if owner != "" {
				w.Header().Set(OwnerHeader, owner)
			}
			_ = json.NewEncoder(w).Encode(resp)
		})
	}
	count := func(name string) int { mu.Lock(); defer mu.Unlock(); return hits[name] }
	var ownerRetries atomic.Bool
	owner := httptest.NewServer(answer("owner", "", ownerRetries.Load))
	configured := httptest.NewServer(answer("configured", owner.URL, func() bool { return false }))
	defer configured.Close()

	m, _ := NewMember(MemberConfig{Coordinator: NewCoordinator(configured.URL + "/coord/v1"), StreamPrefix: "p", Group: "g", MemberID: "m"})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	eventually.True(t, "heartbeats go to the owner", func() bool { return count("owner") >= 5 })
	before := count("configured")
	ownerRetries.Store(true)
	eventually.True(t, "after a RETRY from the owner, back to the configured coordinator", func() bool { return count("configured") > before })
	ownerRetries.Store(false)
	eventually.True(t, "heartbeats go to the owner again", func() bool { return count("owner") >= 10 })
	owner.Close()
	before = count("configured")
	eventually.True(t, "after a connection error, back to the configured coordinator", func() bool { return count("configured") > before+1 })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	t.Logf("heartbeats: %d to the configured coordinator, %d to the owner", count("configured"), count("owner"))
}

// A leave nobody answers ends Run with ErrLeaveNotAnswered after
// LeaveTimeout (nothing was in flight).
func TestMemberLeaveNotAnswered(t *testing.T) {
	var down atomic.Bool
	f := newFake(t, func(n int, req contract.HeartbeatRequest) (contract.HeartbeatResponse, int) {
		if down.Load() {
			return contract.HeartbeatResponse{}, 503
		}
		return ok(1, 0), 200
	})
	m, _ := NewMember(MemberConfig{Coordinator: NewCoordinator(f.httpSrv.URL), StreamPrefix: "p", Group: "g", MemberID: "m", LeaveTimeout: 500 * time.Millisecond})
	c := runClocked(t, m, fakeclock.New(t0))
	c.waited(1)
	if len(m.Owned()) != 1 {
		t.Fatalf("owns %v after the join, want shard 0", m.Owned())
	}
	down.Store(true)
	if err := c.stop(); !errors.Is(err, ErrLeaveNotAnswered) {
		t.Fatalf("Run: %v, want ErrLeaveNotAnswered", err)
	}
}

// A leave the coordinator cannot answer (it is down) ends once the local
// lease has ended, with ErrLeaveNotAnswered, however long LeaveTimeout is:
// the member's clock is moved to the end of its lease and no further.
func TestMemberLeaveEndsWithTheLease(t *testing.T) {
	var down atomic.Bool
	f := newFake(t, func(n int, req contract.HeartbeatRequest) (contract.HeartbeatResponse, int) {
		if down.Load() {
			return contract.HeartbeatResponse{}, 503
		}
		return ok(1, 0), 200
	})
	m, _ := NewMember(MemberConfig{Coordinator: NewCoordinator(f.httpSrv.URL), StreamPrefix: "p", Group: "g", MemberID: "m",
		LeaseTTL: 2 * time.Second, LeaveTimeout: time.Hour})
	clk := fakeclock.New(t0)
	m.now = clk.Now
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	eventually.True(t, "the member reads shard 0", func() bool { return len(m.Owned()) == 1 })
	end := m.leaseEnd()
	down.Store(true)
	cancel()
	eventually.True(t, "a leave sent and refused", func() bool {
		r := f.requests()
		return r[len(r)-1].MemberEpoch == -1
	})
	clk.Set(end)
	var err error
	eventually.True(t, "Run returns at the end of the lease", func() bool {
		select {
		case err = <-done:
			return true
		default:
			return false
		}
	})
	if !errors.Is(err, ErrLeaveNotAnswered) {
		t.Fatalf("Run: %v, want ErrLeaveNotAnswered", err)
	}
}
