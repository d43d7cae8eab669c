package bench

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/redis-stream-coordinator/coordinator/client"
	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/membersim"
)

// scripted is a fake coordinator: it answers every heartbeat OK with the
// assignment set for the member.
type scripted struct {
	mu       sync.Mutex
	assigned map[string]contract.ShardSet
	pending  map[string]contract.ShardSet
	// owner, when set, is the X-Coordinator-Owner header of every answer;
	// retry answers RETRY instead of OK; hits counts the heartbeats.
	owner string
	retry bool
	hits  int
}

func (s *scripted) set(member string, assigned, pending contract.ShardSet) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.assigned[member], s.pending[member] = assigned, pending
}

func (s *scripted) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req contract.HeartbeatRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	resp := contract.HeartbeatResponse{ResponseTo: req.RequestID, Status: contract.StatusOK, MemberID: req.MemberID, MemberEpoch: 2,
		MetadataVersion: 1, Assignment: contract.AssignmentPayload{AssignedShards: s.assigned[req.MemberID], PendingShards: s.pending[req.MemberID]}}
	if s.retry {
		resp = contract.HeartbeatResponse{ResponseTo: req.RequestID, Status: contract.StatusRetry, MemberID: req.MemberID, MemberEpoch: req.MemberEpoch}
	}
	s.hits++
	if s.owner != "" {
		w.Header().Set(client.OwnerHeader, s.owner)
	}
	s.mu.Unlock()
	_ = json.NewEncoder(w).Encode(resp)
}

// newTestFleet returns a fleet of members m-00000… over a scripted coordinator.
func newTestFleet(t *testing.T, members, shards int, ttl time.Duration) (*Fleet, *scripted) {
	t.Helper()
	coord, api := scriptedAPI(t)
	key := group.Key{StreamPrefix: "bench", ConsumerGroup: "g0"}
	return NewFleet(api, key, members, shards, ttl, membersim.NewLeaseOracle(), time.Now()), coord
}

func beat(f *Fleet, i int) {
	f.sims[i].Beat(context.Background(), time.Now(), NewRecorder())
}

func TestFleetTracksOwnersAndSettles(t *testing.T) {
	f, coord := newTestFleet(t, 2, 4, time.Minute)
	coord.set("m-00000", contract.Range(0, 4), nil)
	beat(f, 0)
	coord.set("m-00001", nil, contract.NewShardSet(2, 3))
	beat(f, 1)
	if f.Settled(f.sims, 0) {
		t.Fatal("settled while m-00001 waits for shards")
	}
	coord.set("m-00000", contract.NewShardSet(0, 1), nil)
	beat(f, 0) // releases 2 and 3
	coord.set("m-00001", contract.NewShardSet(2, 3), nil)
	beat(f, 1)
	want := Owners{0: "m-00000", 1: "m-00000", 2: "m-00001", 3: "m-00001"}
	if got := f.Owners(); len(got) != 4 || Moved(4, got, want) != 0 {
		t.Fatalf("owners %v", got)
	}
	if !f.Settled(f.sims, 0) || f.Settled(f.sims, f.now()) {
		t.Error("settled must hold for answers since 0 only")
	}
	f.Close()
	if v := f.oracle.Violations(); len(v) != 0 {
		t.Errorf("hand-over reported: %v", v)
	}
}

func TestFleetMeasuresCrashAndRejoin(t *testing.T) {
	f, coord := newTestFleet(t, 2, 4, time.Minute)
	coord.set("m-00000", contract.NewShardSet(0, 1), nil)
	coord.set("m-00001", contract.NewShardSet(2, 3), nil)
	beat(f, 0)
	beat(f, 1)
	f.sims[0].Crash()
	if _, open := f.CrashMoves(); open != 1 {
		t.Fatalf("%d open crash watches, want 1", open)
	}
	coord.set("m-00001", contract.Range(0, 4), nil)
	beat(f, 1)
	took, open := f.CrashMoves()
	if len(took) != 1 || open != 0 || took[0] <= 0 {
		t.Fatalf("crash moves %v, %d open", took, open)
	}

	f.sims[0].Rejoin(true)
	coord.set("m-00000", nil, contract.NewShardSet(0))
	beat(f, 0)
	if j := f.Joins(); len(j) != 0 {
		t.Fatalf("join measured while shard 0 is pending: %v", j)
	}
	coord.set("m-00001", contract.NewShardSet(1, 2, 3), nil)
	beat(f, 1)
	coord.set("m-00000", contract.NewShardSet(0), nil)
	beat(f, 0)
	if j := f.Joins(); len(j) != 1 || j[0].Took <= 0 || j[0].Rounds != 1 {
		t.Fatalf("joins %v, want one taking 1 round after the join's", j)
	}
	f.Close()
	if v := f.oracle.Violations(); len(v) != 0 {
		t.Errorf("violations after crash and rejoin: %v", v)
	}
}

func TestFleetFeedsTheOracleLiveWindows(t *testing.T) {
	for _, c := range []struct {
		ttl        time.Duration
		violations int
	}{{time.Minute, 1}, {time.Nanosecond, 0}} {
		f, coord := newTestFleet(t, 2, 1, c.ttl)
		coord.set("m-00000", contract.NewShardSet(0), nil)
		coord.set("m-00001", contract.NewShardSet(0), nil) // a broken coordinator
		var at time.Duration
		f.now = func() time.Duration { return at }
		beat(f, 0)
		at += time.Millisecond
		beat(f, 1)
		at += time.Millisecond
		f.Close()
		// With a lease of 1ns, m-00000 expired before m-00001 started:
		// no violation.
		if v := f.oracle.Violations(); len(v) != c.violations {
			t.Errorf("ttl %v: violations %v, want %d", c.ttl, v, c.violations)
		}
	}
}

func TestStatusLabel(t *testing.T) {
	ok := contract.HeartbeatResponse{Status: contract.StatusFencedMemberEpoch}
	for _, c := range []struct {
		err  error
		want string
	}{
		{nil, "FENCED_MEMBER_EPOCH"},
		{&client.APIError{StatusCode: 503}, "HTTP 503"},
		{errors.New("connection refused"), "transport"},
	} {
		if got := statusLabel(ok, c.err); got != c.want {
			t.Errorf("%v: %q, want %q", c.err, got, c.want)
		}
	}
}

// TestOracleKeepsGroupsApart: two groups on one oracle, each with its own
// members and shards; shard 0 of g0 and shard 0 of g1 are read at the
// same time by members of different groups, which is no double ownership.
func TestOracleKeepsGroupsApart(t *testing.T) {
	oracle, epoch := membersim.NewLeaseOracle(), time.Now()
	var fleets []*Fleet
	for g := range 2 {
		coord, api := scriptedAPI(t)
		f := NewFleet(api, groupKey(g), 2, 2, time.Minute, oracle, epoch)
		// g0: m-00000 reads 0, m-00001 reads 1; g1 the other way round.
		coord.set(memberID(g), contract.NewShardSet(0), nil)
		coord.set(memberID(1-g), contract.NewShardSet(1), nil)
		beat(f, 0)
		beat(f, 1)
		fleets = append(fleets, f)
	}
	for _, f := range fleets {
		if !f.Settled(f.sims, 0) {
			t.Fatalf("%s not settled: %v", f.group, f.Owners())
		}
		f.Close()
	}
	if v := oracle.Violations(); len(v) != 0 {
		t.Fatalf("violations across groups: %v", v)
	}
}

// TestRejoinEndsTheOldLiveWindow: a member live under a 1 h setup lease
// that restarts after the lease became 1 min is live for 1 min from its
// new process's first accepted heartbeat, not for the rest of the hour.
func TestRejoinEndsTheOldLiveWindow(t *testing.T) {
	f, coord := newTestFleet(t, 1, 1, time.Hour)
	coord.set("m-00000", contract.NewShardSet(0), nil)
	beat(f, 0)
	sim := f.sims[0]
	if sim.liveTo < time.Hour {
		t.Fatalf("live until %v after a heartbeat under a 1 h lease", sim.liveTo)
	}
	f.ttl = time.Minute // as session.start does after a restart
	sim.Rejoin(false)
	sent := f.now()
	beat(f, 0)
	if after := f.now(); sim.liveTo > after+time.Minute { // the beat was sent before after
		t.Fatalf("live until %v, beyond the 1 min lease of a heartbeat sent by %v", sim.liveTo, after)
	}
	if sim.liveFrom < sent {
		t.Fatalf("new window starts at %v, before the new process's heartbeat at %v", sim.liveFrom, sent)
	}
}

// TestSettledCoversTheWavesSoFar: session.settled checks the members of
// the waves so far, group after group, and nothing beyond them.
func TestSettledCoversTheWavesSoFar(t *testing.T) {
	oracle, epoch := membersim.NewLeaseOracle(), time.Now()
	s := &session{groups: 2, members: 2}
	var coords []*scripted
	for g := range 2 {
		coord, api := scriptedAPI(t)
		s.fleets = append(s.fleets, NewFleet(api, groupKey(g), 2, 2, time.Minute, oracle, epoch))
		coords = append(coords, coord)
	}
	coords[0].set("m-00000", contract.Range(0, 2), nil)
	s.fireGroupMajor(context.Background(), 0, time.Now(), NewRecorder())
	if !s.settled(1, 0) {
		t.Fatal("the first member of g0 reads both shards: settled")
	}
	if s.settled(2, 0) {
		t.Fatal("m-00001 of g0 has not heartbeated: not settled")
	}
	coords[0].set("m-00001", nil, nil)
	s.fireGroupMajor(context.Background(), 1, time.Now(), NewRecorder())
	if !s.settled(2, 0) || s.settled(3, 0) {
		t.Fatal("g0 settled, g1 not yet")
	}
	coords[1].set("m-00000", contract.NewShardSet(0), nil)
	coords[1].set("m-00001", contract.NewShardSet(1), nil)
	s.fireGroupMajor(context.Background(), 2, time.Now(), NewRecorder())
	s.fireGroupMajor(context.Background(), 3, time.Now(), NewRecorder())
	if !s.settled(4, 0) {
		t.Fatal("every member settled")
	}
}

func TestSetupScalesWithTheMemberCount(t *testing.T) {
	r := &Runner{opts: Options{SetupLeaseTTL: time.Minute, SettleTimeout: 90 * time.Second, PassBudget: 1500 * time.Microsecond}}
	if got := r.setupTTL(10_000); got != time.Minute {
		t.Errorf("setup lease of 10,000 members %v, want the 1m floor", got)
	}
	if got := r.setupTTL(100_000); got != 300*time.Second {
		t.Errorf("setup lease of 100,000 members %v, want 2 passes of 150s", got)
	}
	if got := r.settleTimeout(100_000); got != 1500*time.Second {
		t.Errorf("settle timeout of 100,000 members %v, want 10 passes", got)
	}
	if rebalanceTimeout(time.Minute) != 0 || rebalanceTimeout(5*time.Minute) != 5*time.Minute {
		t.Error("the rebalance timeout follows setup leases over the 1m default only")
	}
}

// scriptedAPI serves a scripted coordinator with no assignments yet and
// returns it with an API client for it.
func scriptedAPI(t *testing.T) (*scripted, *API) {
	t.Helper()
	coord := &scripted{assigned: map[string]contract.ShardSet{}, pending: map[string]contract.ShardSet{}}
	srv := httptest.NewServer(coord)
	t.Cleanup(srv.Close)
	api, err := NewAPI(srv.URL+"/coord/v1", 4)
	if err != nil {
		t.Fatal(err)
	}
	return coord, api
}
