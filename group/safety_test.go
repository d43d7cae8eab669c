package group_test

import (
	"testing"
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/grouptest"
)

// Tests of the one-owner promise against a member that keeps reading until
// its own lease runs out (docs/safety.md): a fenced member, a delayed
// duplicate heartbeat, a lease granted by another coordinator process.

// slowPair is the scenario: heartbeats every 60 s, lease 90 s,
// rebalance timeout 60 s; A owns {0,1} alone, B joins at t=0 and takes
// shard 1 in the target.
func slowPair(t *testing.T) *grouptest.Context {
	t.Helper()
	c := grouptest.New(t, 2)
	c.Settings.HeartbeatInterval = time.Minute
	c.Settings.MemberLeaseTTL = 90 * time.Second
	c.Settings.RebalanceTimeout = time.Minute
	expect(t, c.Join("A"), contract.StatusOK, 2, shards(0, 1), nil)
	expect(t, c.Heartbeat(c.Member("A", 2, 0, 1)), contract.StatusOK, 2, shards(0, 1), nil)
	expect(t, c.Join("B"), contract.StatusOK, 3, nil, shards(1))
	return c
}

// A member fenced by the rebalance timeout may not have heard of it: its
// shards stay blocked until the lease it was promised has run out.
func TestSafety_TimeoutFencedMemberBlocksUntilItsLeaseEnds(t *testing.T) {
	c := slowPair(t)
	// t=60 s: A (stuck) still reads 0,1; it is told its target is {0}.
	c.Advance(time.Minute)
	expect(t, c.Heartbeat(c.Member("A", 2, 0, 1)), contract.StatusOK, 3, shards(0), nil)
	expect(t, c.Heartbeat(c.Member("B", 3)), contract.StatusOK, 3, nil, shards(1))
	lease := member(t, c, "A").MemberLeaseExpiresAt // t=150 s
	if d := member(t, c, "A").RebalanceDeadlineAt; d != c.Now.Add(time.Minute) {
		t.Fatalf("A's deadline %v, want when it was told + 60 s (%v)", d, c.Now.Add(time.Minute))
	}
	// t=120 s: B's heartbeat fences A, but shards 0 and 1 stay blocked.
	c.Advance(time.Minute)
	expect(t, c.Heartbeat(c.Member("B", 3)), contract.StatusOK, 4, nil, shards(0, 1))
	if m := member(t, c, "A"); m.State != group.MemberFenced || !m.Holding().Equal(shards(0, 1)) {
		t.Fatalf("A after the timeout: %+v", m)
	}
	expect(t, c.Heartbeat(c.Member("B", member(t, c, "B").MemberEpoch)), contract.StatusOK, c.Group.AssignmentEpoch, nil, shards(0, 1))
	// Up to A's lease end nothing moves; right after it B gets both.
	c.Now = lease
	c.Tick()
	expectState(t, c, "B", group.MemberActive, 4)
	expect(t, c.Heartbeat(c.Member("B", member(t, c, "B").MemberEpoch)), contract.StatusOK, c.Group.AssignmentEpoch, nil, shards(0, 1))
	c.Now = lease + 1
	c.Tick()
	if m := member(t, c, "A"); m.Holds() {
		t.Fatalf("A still holds after its lease: %+v", m)
	}
	expect(t, c.Heartbeat(c.Member("B", member(t, c, "B").MemberEpoch)), contract.StatusOK, c.Group.AssignmentEpoch, shards(0, 1), nil)
	c.Check()
}

// A delayed duplicate of an older heartbeat (same member) never shrinks
// what the record holds.
func TestSafety_DelayedDuplicateDoesNotFreeShards(t *testing.T) {
	c := grouptest.New(t, 2)
	expect(t, c.Join("A"), contract.StatusOK, 2, shards(0, 1), nil)
	early := c.Member("A", 2, 0) // sent before A read shard 1
	expect(t, c.Heartbeat(c.Member("A", 2, 0, 1)), contract.StatusOK, 2, shards(0, 1), nil)
	expect(t, c.Join("B"), contract.StatusOK, 3, nil, shards(1))
	// A hears of the new target, keeps reading 1 while it drains.
	drain := c.Member("A", 2, 0)
	drain.RevokingShards = grouptest.Draining(1)
	expect(t, c.Heartbeat(drain), contract.StatusOK, 3, shards(0), nil)
	// The early request arrives now; A still reads 1.
	c.Heartbeat(early)
	if m := member(t, c, "A"); !m.Holding().Contains(1) {
		t.Fatalf("a delayed duplicate freed shard 1: %+v", m)
	}
	expect(t, c.Heartbeat(c.Member("B", 3)), contract.StatusOK, 3, nil, shards(1))
	// A's own release at the current epoch frees it.
	done := c.Member("A", 3, 0)
	done.RevokingShards = grouptest.Revoked(1)
	expect(t, c.Heartbeat(done), contract.StatusOK, 3, shards(0), nil)
	expect(t, c.Heartbeat(c.Member("B", 3)), contract.StatusOK, 3, shards(1), nil)
	c.Check()
}

// A delayed duplicate of a member's join, arriving while the member reads,
// keeps what the record held until the member's next heartbeat.
func TestSafety_DuplicateJoinKeepsHoldings(t *testing.T) {
	c := grouptest.New(t, 2)
	join := c.Member("A", 0)
	expect(t, c.Heartbeat(join), contract.StatusOK, 2, shards(0, 1), nil)
	expect(t, c.Heartbeat(c.Member("A", 2, 0, 1)), contract.StatusOK, 2, shards(0, 1), nil)
	expect(t, c.Join("B"), contract.StatusOK, 3, nil, shards(1))
	c.Heartbeat(join)
	expect(t, c.Heartbeat(c.Member("B", 3)), contract.StatusOK, 3, nil, shards(1))
	c.Check()
}

// A renewal that changes nothing else is a liveness-only record: the
// owner keeps it in memory and writes nothing.
func TestSafety_RenewalIsLivenessOnly(t *testing.T) {
	c := grouptest.New(t, 2)
	expect(t, c.Join("A"), contract.StatusOK, 2, shards(0, 1), nil)
	expect(t, c.Heartbeat(c.Member("A", 2, 0, 1)), contract.StatusOK, 2, shards(0, 1), nil)
	renewal := func() group.MemberRecord {
		t.Helper()
		n := len(c.Records)
		c.Heartbeat(c.Member("A", 2, 0, 1))
		for _, r := range c.Records[n:] {
			if mr, ok := r.(group.MemberRecord); ok {
				return mr
			}
		}
		t.Fatal("no member record")
		return group.MemberRecord{}
	}
	if r := renewal(); !r.LivenessOnly {
		t.Fatalf("renewal: %+v, want liveness-only", r)
	}
	c.Check()
}

// A coordinator taking a group over starts every lease afresh: nobody is
// expired before takeover + TTL, whatever the stored lease says, and
// leases never move back. The restart is liveness-only records, so a
// replay of every record restarts the same leases.
func TestSafety_RestartLeasesAtTakeover(t *testing.T) {
	c := grouptest.New(t, 2)
	expect(t, c.Join("A"), contract.StatusOK, 2, shards(0, 1), nil)
	stored := member(t, c, "A").MemberLeaseExpiresAt
	c.Group = c.Replay()
	takeover := stored.Add(-c.Settings.MemberLeaseTTL / 2)
	res := c.Group.RestartLeases(takeover, c.Settings)
	if len(res.Records) != 1 {
		t.Fatalf("restart: %d records, want 1", len(res.Records))
	}
	if r, ok := res.Records[0].(group.MemberRecord); !ok || !r.LivenessOnly {
		t.Fatalf("restart record %+v, want a liveness-only member record", res.Records[0])
	}
	c.Records = append(c.Records, res.Records...)
	if got := c.Replay().Members["A"].LeaseEnd(); got != takeover.Add(c.Settings.MemberLeaseTTL) {
		t.Fatalf("replayed lease end %v", got)
	}
	restarted := takeover.Add(c.Settings.MemberLeaseTTL)
	if m := member(t, c, "A"); m.LeaseEnd() != restarted || m.MemberLeaseExpiresAt != stored {
		t.Fatalf("restarted lease %+v, want end %v", m, restarted)
	}
	c.Now = restarted
	c.Tick()
	expectState(t, c, "A", group.MemberActive, 2)
	c.Now++
	c.Tick()
	expectState(t, c, "A", group.MemberExpired, 3)
	c.Check()
}

// A takeover restarts a running rebalance deadline: the member could not
// report its revocation while no coordinator owned the group, so it is
// not fenced for the gap; it still is once a full timeout passes after
// the takeover without the revocation.
func TestSafety_TakeoverRestartsRebalanceDeadline(t *testing.T) {
	c := slowPair(t)
	c.Advance(time.Minute)
	expect(t, c.Heartbeat(c.Member("A", 2, 0, 1)), contract.StatusOK, 3, shards(0), nil)
	told := c.Now
	// The owner dies; another coordinator takes over after the deadline.
	c.Group = c.Replay()
	takeover := told.Add(c.Settings.RebalanceTimeout + time.Second)
	c.Now = takeover
	res := c.Group.RestartLeases(takeover, c.Settings)
	c.Records = append(c.Records, res.Records...)
	if d := member(t, c, "A").RebalanceDeadlineAt; d != takeover.Add(c.Settings.RebalanceTimeout) {
		t.Fatalf("A's deadline after the takeover %v, want takeover + timeout %v", d, takeover.Add(c.Settings.RebalanceTimeout))
	}
	c.Tick()
	expectState(t, c, "A", group.MemberActive, 3)
	// A reports the revocation in time: released, never fenced.
	expect(t, c.Heartbeat(c.Member("A", 3, 0)), contract.StatusOK, 3, shards(0), nil)
	if m := member(t, c, "A"); m.RebalanceDeadlineAt != 0 || m.State != group.MemberActive {
		t.Fatalf("A after revoking: %+v", m)
	}
	c.Check()
}
