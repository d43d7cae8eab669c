package client

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/eventually"
	"github.com/redis-stream-coordinator/coordinator/internal/testredis"
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

// With the coordinator gone, a member stops reading every shard one lease
// TTL after the send time of its last answered heartbeat.
func TestMemberLocalLease(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a coordinator process")
	}
	rs := testredis.Start(t)
	srv := startCoordinator(t, "redis", rs.Addr, "lease", 2*time.Second)
	coord := NewCoordinator(srv.Base, WithBasicAuth("admin", "password"))
	if _, err := coord.CreateGroup(context.Background(), "lease", "g", 2, "test"); err != nil {
		t.Fatal(err)
	}
	r := newReaders(t)
	var mu sync.Mutex
	var revokedAt time.Time
	h := r.hooks("a")
	onRevoked := h.OnRevoked
	h.OnRevoked = func(s int) {
		onRevoked(s)
		mu.Lock()
		revokedAt = time.Now()
		mu.Unlock()
	}
	m, _ := NewMember(MemberConfig{Coordinator: coord, StreamPrefix: "lease", Group: "g", MemberID: "a", LeaseTTL: 2 * time.Second, Hooks: h})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = m.Run(ctx) }()
	eventually.True(t, "a reads 2 shards", func() bool { return r.count("a") == 2 })
	killed := time.Now()
	srv.Kill()
	eventually.True(t, "a stops reading", func() bool { return r.count("a") == 0 })
	mu.Lock()
	gap := revokedAt.Sub(killed)
	mu.Unlock()
	// The last answered heartbeat was sent at most one interval (200 ms)
	// before the kill.
	if gap > 2*time.Second+100*time.Millisecond || gap < 2*time.Second-300*time.Millisecond {
		t.Errorf("stopped reading %v after the coordinator died: want about the 2 s lease", gap)
	}
}

// fakeCoordinator answers heartbeats from a script and records requests.
type fakeCoordinator struct {
	mu      sync.Mutex
	reqs    []group.HeartbeatRequest
	answer  func(n int, req group.HeartbeatRequest) (group.HeartbeatResponse, int)
	httpSrv *httptest.Server
}

func newFake(t *testing.T, answer func(n int, req group.HeartbeatRequest) (group.HeartbeatResponse, int)) *fakeCoordinator {
	f := &fakeCoordinator{answer: answer}
	f.httpSrv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req group.HeartbeatRequest
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

func (f *fakeCoordinator) requests() []group.HeartbeatRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]group.HeartbeatRequest(nil), f.reqs...)
}

func ok(epoch int64, shards ...int) group.HeartbeatResponse {
	r := group.HeartbeatResponse{Status: StatusOK, MemberEpoch: epoch, MetadataVersion: epoch}
	r.Assignment.AssignedShards = group.NewShardSet(shards...)
	return r
}

// The status table of the member: a lost answer is retried with the
// previous epoch; FENCED_MEMBER_EPOCH drops everything and rejoins with
// epoch 0; RETRY keeps the state; INVALID_REQUEST ends Run with an error.
func TestMemberStatuses(t *testing.T) {
	f := newFake(t, func(n int, req group.HeartbeatRequest) (group.HeartbeatResponse, int) {
		switch n {
		case 1:
			return ok(2, 0, 1), 200
		case 2:
			return group.HeartbeatResponse{}, 500 // lost answer
		case 3:
			return group.HeartbeatResponse{Status: StatusRetry}, 200
		case 4:
			return group.HeartbeatResponse{Status: StatusFencedMemberEpoch, MemberEpoch: 5, MetadataVersion: 4}, 200
		case 5:
			return ok(6, 1), 200
		case 6:
			r := ok(6, 1)
			r.Status = StatusRevokePending
			r.Assignment.AssignedShards = nil
			return r, 200
		default:
			return group.HeartbeatResponse{Status: StatusInvalidRequest}, 200
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
	if len(reqs[6].OwnedShards) != 0 || len(reqs[6].RevokingShards) != 1 || reqs[6].RevokingShards[0].State != group.RevokeRevoked {
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
	var inflight sync.Map
	inflight.Store(0, 3)
	f := newFake(t, func(n int, req group.HeartbeatRequest) (group.HeartbeatResponse, int) {
		if n == 1 {
			return ok(2, 0), 200
		}
		return group.HeartbeatResponse{Status: StatusRetry}, 200
	})
	revoked := make(chan time.Time, 1)
	m, _ := NewMember(MemberConfig{
		Coordinator: NewCoordinator(f.httpSrv.URL), StreamPrefix: "p", Group: "g", MemberID: "m", LeaseTTL: 300 * time.Millisecond,
		Hooks: Hooks{
			OnRevoked: func(int) { revoked <- time.Now() },
			InFlight:  func(s int) int { v, _ := inflight.Load(s); return v.(int) },
		},
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	start := time.Now()
	go func() { _ = m.Run(ctx) }()
	select {
	case at := <-revoked:
		if d := at.Sub(start); d < 300*time.Millisecond || d > 600*time.Millisecond {
			t.Errorf("revoked %v after the answered heartbeat, want about 300ms", d)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("RETRY answers renewed the lease")
	}
	eventually.True(t, "a DRAINING report with 3 in flight", func() bool {
		r := f.requests()
		rs := r[len(r)-1].RevokingShards
		return len(rs) == 1 && rs[0].State == group.RevokeDraining && rs[0].InFlight == 3
	})
	inflight.Store(0, 0)
	eventually.True(t, "REVOKED report", func() bool {
		r := f.requests()
		rs := r[len(r)-1].RevokingShards
		return len(rs) == 1 && rs[0].State == group.RevokeRevoked && rs[0].InFlight == 0
	})
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

// Against a group that does not exist, Run returns ErrGroupNotFound at
// once, after a handful of heartbeats; with CreateGroup it creates the
// group and reads its shards.
func TestMemberMissingGroup(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a coordinator process")
	}
	srv := startCoordinator(t, "memory", "127.0.0.1:6379", "unused", 3*time.Second)
	proxy, heartbeats := countingProxy(t, srv.Base)
	base := proxy.URL + strings.TrimPrefix(srv.Base, "http://"+strings.Split(strings.TrimPrefix(srv.Base, "http://"), "/")[0])
	coord := NewCoordinator(base, WithBasicAuth("admin", "password"))
	m, _ := NewMember(MemberConfig{Coordinator: coord, StreamPrefix: "missing", Group: "g", MemberID: "a"})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	err := m.Run(ctx)
	t.Logf("Run returned %v after %v and %d heartbeats", err, time.Since(start).Round(time.Millisecond), heartbeats.Load())
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
// check) are retried with capped exponential backoff, not in a loop.
func TestMemberBacksOffWhenRefused(t *testing.T) {
	f := newFake(t, func(int, group.HeartbeatRequest) (group.HeartbeatResponse, int) {
		return group.HeartbeatResponse{Status: StatusUnknownMemberID}, 200
	})
	m, _ := NewMember(MemberConfig{Coordinator: NewCoordinator(f.httpSrv.URL), StreamPrefix: "p", Group: "g", MemberID: "m"})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := m.Run(ctx); err != nil {
		t.Fatal(err)
	}
	n := len(f.requests())
	t.Logf("%d heartbeats in 3 s of UNKNOWN_MEMBER_ID answers", n)
	if n >= 20 {
		t.Errorf("%d heartbeats in 3 s: no backoff", n)
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
			var req group.HeartbeatRequest
			_ = json.NewDecoder(r.Body).Decode(&req)
			mu.Lock()
			hits[name]++
			mu.Unlock()
			resp := ok(1, 0)
			if retry() {
				resp = group.HeartbeatResponse{Status: StatusRetry}
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
	f := newFake(t, func(n int, req group.HeartbeatRequest) (group.HeartbeatResponse, int) {
		if down.Load() {
			return group.HeartbeatResponse{}, 503
		}
		return ok(1, 0), 200
	})
	m, _ := NewMember(MemberConfig{Coordinator: NewCoordinator(f.httpSrv.URL), StreamPrefix: "p", Group: "g", MemberID: "m", LeaveTimeout: 500 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	eventually.True(t, "the member reads shard 0", func() bool { return len(m.Owned()) == 1 })
	down.Store(true)
	cancel()
	if err := <-done; !errors.Is(err, ErrLeaveNotAnswered) {
		t.Fatalf("Run: %v, want ErrLeaveNotAnswered", err)
	}
}
