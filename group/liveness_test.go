package group_test

import (
	"testing"
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/grouptest"
)

// Tests of docs/protocol.md §4.6 liveness: lease expiry, rebalance timeout, pruning, and the
// docs/protocol.md §13.4/§13.5 scenarios.

func TestLiveness_ExpiryStrictlyAfterLeaseViaTick(t *testing.T) {
	c := grouptest.New(t, 4)
	c.Join("A")
	lease := member(t, c, "A").MemberLeaseExpiresAt
	c.Now = lease
	c.Tick()
	expectState(t, c, "A", group.MemberActive, 2)
	expectVersions(t, c.Group, versions{2, 2, 2})
	c.Now = lease + 1
	c.Tick()
	expectState(t, c, "A", group.MemberExpired, 3)
	expectVersions(t, c.Group, versions{3, 3, 3})
	if c.Group.State != group.GroupEmpty || len(c.Group.Targets) != 0 {
		t.Fatalf("after expiry %+v targets %v", c.Group.Meta, c.Group.Targets)
	}
	c.Check()
}

func TestLiveness_ExpiryViaPeerHeartbeat(t *testing.T) {
	c := stableAB(t)
	lease := member(t, c, "B").MemberLeaseExpiresAt
	c.Advance(5 * time.Second)
	expect(t, c.Heartbeat(c.Member("A", 3, 0, 1)), contract.StatusOK, 3, shards(0, 1), nil)
	c.Now = lease
	expect(t, c.Heartbeat(c.Member("A", 3, 0, 1)), contract.StatusOK, 3, shards(0, 1), nil)
	expectState(t, c, "B", group.MemberActive, 3)
	c.Now = lease + 1
	// B's stale current {2,3} does not block A.
	expect(t, c.Heartbeat(c.Member("A", 3, 0, 1)), contract.StatusOK, 4, shards(0, 1, 2, 3), nil)
	expectState(t, c, "B", group.MemberExpired, 4)
	c.Check()
}

// The expired member's own late heartbeat expires it first and is fenced,
// a leave too; epoch 0 rejoins and ignores the stale ownership.
func TestLiveness_ExpiredMemberFencedThenRejoins(t *testing.T) {
	for _, name := range []string{"heartbeat", "leave"} {
		t.Run(name, func(t *testing.T) {
			c := stableAB(t)
			c.Advance(5 * time.Second)
			c.Heartbeat(c.Member("A", 3, 0, 1))
			c.Advance(5*time.Second + time.Millisecond)
			var resp contract.HeartbeatResponse
			if name == "leave" {
				resp = c.Leave("B", grouptest.Revoked(2, 3)...)
			} else {
				resp = c.Heartbeat(c.Member("B", 3, 2, 3))
			}
			expectFenced(t, c, "B", resp)
			expectState(t, c, "B", group.MemberExpired, 4)
			if m := member(t, c, "B"); !m.CurrentAssignment.Equal(shards(2, 3)) {
				t.Fatalf("expired record does not keep its stale set: %+v", m)
			}
			// A takes everything.
			expect(t, c.Heartbeat(c.Member("A", 3, 0, 1)), contract.StatusOK, 4, shards(0, 1, 2, 3), nil)
			expect(t, c.Heartbeat(c.Member("A", 4, 0, 1, 2, 3)), contract.StatusOK, 4, shards(0, 1, 2, 3), nil)
			// B rejoins: its stale {2,3} is forgotten, it waits for A.
			expect(t, c.Join("B"), contract.StatusOK, 5, nil, shards(2, 3))
			if m := member(t, c, "B"); len(m.CurrentAssignment) != 0 {
				t.Fatalf("rejoined record keeps stale ownership %+v", m)
			}
			expect(t, c.Heartbeat(revokeAck(c, "A", 4, shards(0, 1, 2, 3))), contract.StatusOK, 5, shards(0, 1), nil)
			expect(t, c.Heartbeat(revokeAck(c, "A", 5, shards(0, 1), 2, 3)), contract.StatusOK, 5, shards(0, 1), nil)
			expect(t, c.Heartbeat(c.Member("B", 5)), contract.StatusOK, 5, shards(2, 3), nil)
			c.Check()
		})
	}
}

// The rebalance timeout fences an owner that still holds a shard outside
// its target at now ≥ deadline, and nobody else.
func TestLiveness_RebalanceTimeoutFencesOnlyStuckOwners(t *testing.T) {
	c, t0 := stuckPair(t)
	deadline := t0.Add(c.Settings.RebalanceTimeout)
	// A releases at the last moment and is not fenced; B stays stuck.
	c.Now = deadline - 1
	expect(t, c.Heartbeat(revokeAck(c, "A", member(t, c, "A").MemberEpoch, shards(0), 1)), contract.StatusOK,
		c.Group.AssignmentEpoch, shards(0), nil)
	if m := member(t, c, "A"); m.RebalanceDeadlineAt != 0 {
		t.Fatalf("A's deadline not cleared: %v", m.RebalanceDeadlineAt)
	}
	c.Tick()
	expectState(t, c, "B", group.MemberActive, member(t, c, "B").MemberEpoch)
	v := versionsOf(c.Group)
	c.Now = deadline
	c.Tick()
	expectState(t, c, "B", group.MemberFenced, v.G+1)
	expectState(t, c, "A", group.MemberActive, member(t, c, "A").MemberEpoch)
	expectVersions(t, c.Group, versions{v.G + 1, v.G + 1, v.V + 1})
	// B's next heartbeat is fenced; D receives its shard.
	expectFenced(t, c, "B", c.Heartbeat(c.Member("B", v.G, 2, 3)))
	resp := c.Heartbeat(c.Member("D", member(t, c, "D").MemberEpoch))
	if resp.Status != contract.StatusOK || len(resp.Assignment.PendingShards) != 0 {
		t.Fatalf("D after B fenced: %+v", resp)
	}
	c.Check()
}

// The timeout also fires through the stuck member's own heartbeat (step 12).
func TestLiveness_RebalanceTimeoutViaOwnHeartbeat(t *testing.T) {
	c, t0 := stuckPair(t)
	c.Now = t0.Add(c.Settings.RebalanceTimeout)
	resp := c.Heartbeat(c.Member("A", member(t, c, "A").MemberEpoch, 0, 1))
	expectFenced(t, c, "A", resp)
	expectState(t, c, "A", group.MemberFenced, resp.MemberEpoch)
	expectState(t, c, "B", group.MemberFenced, resp.MemberEpoch)
	c.Check()
}

// A LEAVING member reporting active revokes blocks the new owner until it
// reports REVOKED; it never lease-expires.
func TestLiveness_LeavingWithActiveRevokeBlocksUntilRevoked(t *testing.T) {
	c := stableAB(t)
	c.Leave("A", grouptest.Draining(0, 1)...)
	expectTargets(t, c.Group, map[string]contract.ShardSet{"B": shards(0, 1, 2, 3)})
	expect(t, c.Heartbeat(c.Member("B", 3, 2, 3)), contract.StatusOK, 4, shards(2, 3), shards(0, 1))
	for i := 0; i < 6; i++ {
		c.Advance(5 * time.Second)
		expect(t, c.Heartbeat(c.Member("B", 4, 2, 3)), contract.StatusOK, 4, shards(2, 3), shards(0, 1))
		c.Leave("A", grouptest.Draining(0, 1)...)
	}
	expectState(t, c, "A", group.MemberLeaving, -1)
	c.Leave("A", grouptest.Revoked(0, 1)...)
	expect(t, c.Heartbeat(c.Member("B", 4, 2, 3)), contract.StatusOK, 4, shards(0, 1, 2, 3), nil)
	expect(t, c.Heartbeat(c.Member("B", 4, 0, 1, 2, 3)), contract.StatusOK, 4, shards(0, 1, 2, 3), nil)
	if c.Group.State != group.GroupStable {
		t.Fatalf("state %s", c.Group.State)
	}
	c.Check()
}

// A LEAVING member that vanishes with active revoke reports is fenced at
// its rebalance deadline, releasing its shards.
func TestLiveness_VanishedLeavingMemberFencedAtDeadline(t *testing.T) {
	c := stableAB(t)
	c.Leave("A", grouptest.Draining(0, 1)...)
	deadline := member(t, c, "A").RebalanceDeadlineAt
	if deadline != c.Now.Add(c.Settings.RebalanceTimeout) {
		t.Fatalf("leaving deadline %v, want %v", deadline, c.Now.Add(c.Settings.RebalanceTimeout))
	}
	expect(t, c.Heartbeat(c.Member("B", 3, 2, 3)), contract.StatusOK, 4, shards(2, 3), shards(0, 1))
	for c.Now.Add(5*time.Second) < deadline {
		c.Advance(5 * time.Second)
		expect(t, c.Heartbeat(c.Member("B", 4, 2, 3)), contract.StatusOK, 4, shards(2, 3), shards(0, 1))
		c.Tick()
	}
	expectState(t, c, "A", group.MemberLeaving, -1)
	c.Now = deadline
	c.Tick()
	if m := member(t, c, "A"); m.State != group.MemberFenced {
		t.Fatalf("leaving member not fenced at its deadline: %+v", m)
	}
	expect(t, c.Heartbeat(c.Member("B", 4, 2, 3)), contract.StatusOK, 5, shards(0, 1, 2, 3), nil)
	c.Check()
}

// keepAlive heartbeats the ACTIVE members every 5 s until the clock reaches
// until, reporting what they were last assigned.
func keepAlive(t *testing.T, c *grouptest.Context, until contract.Instant, ids ...string) {
	t.Helper()
	for c.Now < until {
		c.Advance(min(5*time.Second, time.Duration(until-c.Now)*time.Millisecond))
		for _, id := range ids {
			m := member(t, c, id)
			resp := c.Heartbeat(c.Member(id, m.MemberEpoch, m.GrantedAssignment...))
			if resp.Status != contract.StatusOK {
				t.Fatalf("keepAlive %s: %+v", id, resp)
			}
		}
	}
}

func TestLiveness_PruneAfterRetention(t *testing.T) {
	c := grouptest.New(t, 4)
	c.Join("A")
	c.Join("B")
	c.Join("C")
	c.Leave("C")                               // LEAVING, empty
	lastB := member(t, c, "B").LastHeartbeatAt // B will expire
	lastC := member(t, c, "C").LastHeartbeatAt
	keepAlive(t, c, lastB.Add(c.Settings.StaleMemberRetention)-1, "A")
	expectState(t, c, "B", group.MemberExpired, member(t, c, "B").MemberEpoch)
	expectState(t, c, "C", group.MemberLeaving, -1)
	c.Tick()
	if len(c.Group.Members) != 3 {
		t.Fatalf("pruned too early: %v", c.Group.MemberList())
	}
	v := versionsOf(c.Group)
	c.Now = lastB.Add(c.Settings.StaleMemberRetention)
	if lastC != lastB {
		t.Fatalf("test setup: C left at %v, B last heard at %v", lastC, lastB)
	}
	c.Tick()
	if c.Group.Members["B"] != nil || c.Group.Members["C"] != nil {
		t.Fatalf("not pruned: %v", c.Group.MemberList())
	}
	if _, ok := c.Group.Targets["B"]; ok {
		t.Fatalf("pruned member keeps a target")
	}
	expectVersions(t, c.Group, versions{v.G, v.A, v.V + 1}) // one V for the pass
	c.Check()
}

func TestLiveness_PruningDisabled(t *testing.T) {
	c := grouptest.New(t, 4)
	c.Settings.StaleMemberRetention = 0
	c.Join("A")
	c.Join("B")
	c.Advance(time.Hour)
	c.Tick()
	c.Advance(24 * time.Hour)
	c.Tick()
	if len(c.Group.Members) != 2 || member(t, c, "A").State != group.MemberExpired {
		t.Fatalf("members %v", c.Group.MemberList())
	}
	c.Check()
}

// A LEAVING member that still revokes is not pruned.
func TestLiveness_LeavingWithRevokingNotPruned(t *testing.T) {
	c := stableAB(t)
	c.Settings.RebalanceTimeout = 24 * time.Hour
	c.Leave("A", grouptest.Draining(0, 1)...)
	keepAlive(t, c, c.Now.Add(c.Settings.StaleMemberRetention+time.Minute), "B")
	expectState(t, c, "A", group.MemberLeaving, -1)
	c.Check()
}

// NextDue: unknown right after a load, the earliest lease end once a tick
// has scanned, never for a group without members, a poll while a
// migration is active.
func TestLiveness_NextDue(t *testing.T) {
	c := grouptest.New(t, 4)
	c.Tick()
	if due, poll := c.Group.NextDue(); due != group.Never || poll {
		t.Fatalf("empty group: due %v poll %v", due, poll)
	}
	c.Join("A")
	if due, _ := c.Group.NextDue(); due != member(t, c, "A").MemberLeaseExpiresAt {
		t.Fatalf("due %v, want A's lease end %v", due, member(t, c, "A").MemberLeaseExpiresAt)
	}
	if due, _ := c.Replay().NextDue(); due != 0 {
		t.Fatalf("a replayed group's bound is unknown, got %v", due)
	}
	c.Scale(8)
	if _, poll := c.Group.NextDue(); !poll {
		t.Fatal("no poll while a migration is active")
	}
}
