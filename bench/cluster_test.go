package bench

import (
	"testing"
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/membersim"
)

// hits returns how many heartbeats each scripted coordinator answered.
func hits(coords ...*scripted) []int {
	out := make([]int, len(coords))
	for i, c := range coords {
		c.mu.Lock()
		out[i] = c.hits
		c.mu.Unlock()
	}
	return out
}

// TestMembersFollowTheOwner: a member sends to a live coordinator until
// an answer names the owner, then to the owner; a RETRY sends it back to
// the live ones, and an owner nobody started is not followed.
func TestMembersFollowTheOwner(t *testing.T) {
	lb, lbAPI := scriptedAPI(t)
	owner, ownerAPI := scriptedAPI(t)
	lb.owner, owner.owner = ownerAPI.Root, ownerAPI.Root
	f := NewFleet(lbAPI, group.Key{StreamPrefix: "bench-s0", ConsumerGroup: "g0"}, 1, 1, time.Minute, membersim.NewLeaseOracle(), time.Now())
	f.coords = NewCoordinators(membersim.Follow)
	f.coords.SetLive(lbAPI, true)
	f.coords.SetLive(ownerAPI, false) // known, but no load balancer routes to it
	beat(f, 0)
	beat(f, 0)
	beat(f, 0)
	if got := hits(lb, owner); got[0] != 1 || got[1] != 2 {
		t.Fatalf("hits load balancer, owner = %v, want [1 2]", got)
	}
	owner.retry = true
	beat(f, 0) // RETRY: back to the load balancer
	beat(f, 0)
	if got := hits(lb, owner); got[0] != 2 || got[1] != 3 {
		t.Fatalf("after a RETRY: hits %v, want [2 3]", got)
	}
	owner.retry = false
	// Both name an owner that is not a coordinator of the set: the member
	// sends once more to the owner, then to the load balancer only.
	lb.owner, owner.owner = "http://127.0.0.1:1", "http://127.0.0.1:1"
	beat(f, 0)
	beat(f, 0)
	beat(f, 0)
	if got := hits(lb, owner); got[0] != 4 || got[1] != 4 {
		t.Fatalf("an unknown owner was followed: hits %v, want [4 4]", got)
	}
}

// TestSpreadIgnoresTheOwner: spread sends to the live coordinators only,
// whatever the answers name; switched to follow, the members go to the
// owner the last answer named.
func TestSpreadIgnoresTheOwner(t *testing.T) {
	a, aAPI := scriptedAPI(t)
	b, bAPI := scriptedAPI(t)
	a.owner, b.owner = bAPI.Root, bAPI.Root
	f := NewFleet(aAPI, groupKey(0), 1, 1, time.Minute, membersim.NewLeaseOracle(), time.Now())
	f.coords = NewCoordinators(membersim.Spread)
	f.coords.SetLive(aAPI, true)
	f.coords.SetLive(bAPI, true)
	f.coords.SetLive(bAPI, false) // b stops: out of the load balancer
	for range 5 {
		beat(f, 0)
	}
	if got := hits(a, b); got[0] != 5 || got[1] != 0 {
		t.Fatalf("hits %v, want [5 0]", got)
	}
	f.coords.SetRouting(membersim.Follow)
	beat(f, 0)
	beat(f, 0)
	if got := hits(a, b); got[0] != 5 || got[1] != 2 {
		t.Fatalf("following: hits %v, want [5 2]", got)
	}
}

// TestWaitForOK: a member's wait runs from its first heartbeat after an OK
// answer to the next OK; the fleet keeps the longest, counts members still
// waiting, and records the first OK of a heartbeat sent after a watch.
func TestWaitForOK(t *testing.T) {
	f, _ := newTestFleet(t, 2, 2, time.Minute)
	s := f.sims[0]
	f.WatchOK(1500 * time.Millisecond)
	s.wait(1*time.Second, 1100*time.Millisecond, true) // OK at once: waited its latency
	s.wait(2*time.Second, 2100*time.Millisecond, false)
	s.wait(3*time.Second, 3200*time.Millisecond, true) // waited since 2 s
	if at, ok := f.FirstOK(); !ok || at != 3200*time.Millisecond {
		t.Fatalf("first OK after the watch: %v %v, want 3.2s", at, ok)
	}
	s.wait(4*time.Second, 4100*time.Millisecond, true)
	if got := f.Waits(); got != 1200*time.Millisecond {
		t.Fatalf("longest wait %v, want 1.2s", got)
	}
	if got := f.Waits(); got != 0 {
		t.Fatalf("Waits did not start over: %v", got)
	}
	f.sims[1].wait(0, time.Millisecond, false) // waiting since 0, still
	if got := f.Waits(); got < f.now()-time.Millisecond || got > f.now() {
		t.Fatalf("a member still waiting since 0 counts as waiting until now: %v", got)
	}
}

func TestFleetCountsMoves(t *testing.T) {
	f, coord := newTestFleet(t, 2, 4, time.Minute)
	coord.set("m-00000", contract.Range(0, 4), nil)
	beat(f, 0)
	beat(f, 0) // nothing changes
	coord.set("m-00000", contract.NewShardSet(0, 1), nil)
	beat(f, 0)
	if got := f.Moves(); got != 6 {
		t.Fatalf("moves %d, want 4 starts + 2 stops", got)
	}
}

func TestOwnedSpread(t *testing.T) {
	for _, c := range []struct {
		owned  map[string]int
		coords int
		want   float64
		detail string
	}{
		{map[string]int{"c1": 10, "c2": 9, "c3": 11}, 3, 1, "c1 10, c2 9, c3 11"},
		{map[string]int{"c1": 14, "c2": 8, "c3": 8}, 3, 4, "c1 14, c2 8, c3 8"},
		{map[string]int{"c1": 15, "c2": 15}, 3, 10, "c1 15, c2 15, 1 owning none"},
	} {
		got, detail := ownedSpread(c.owned, c.coords, 30)
		if got != c.want || detail != c.detail {
			t.Errorf("%v: %v %q, want %v %q", c.owned, got, detail, c.want, c.detail)
		}
	}
}

func TestRetryBackoff(t *testing.T) {
	for n, upper := range map[int]time.Duration{1: 100 * time.Millisecond, 2: 200 * time.Millisecond, 4: 800 * time.Millisecond, 5: time.Second, 30: time.Second} {
		if d := retryBackoff(n, time.Second); d < upper/2 || d > upper {
			t.Errorf("retry %d: %v, want within [%v, %v]", n, d, upper/2, upper)
		}
	}
}
