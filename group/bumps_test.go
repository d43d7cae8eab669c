package group_test

import (
	"testing"
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/grouptest"
)

// Tests of the docs/protocol.md §4.3 epoch and version rules, event by event.

func TestBumps_Create(t *testing.T) {
	c := grouptest.New(t, 4)
	expectVersions(t, c.Group, versions{1, 1, 1})
	if c.Group.State != group.GroupEmpty || len(c.Group.Targets) != 0 {
		t.Fatalf("created group %+v targets %v", c.Group.Meta, c.Group.Targets)
	}
	c.Check()
}

func TestBumps_JoinRejoinAndFirstLeave(t *testing.T) {
	c := stableAB(t) // two joins: 1 → 3
	c.Leave("B", grouptest.Revoked(2, 3)...)
	expectVersions(t, c.Group, versions{4, 4, 4})
	c.Leave("B")
	expectVersions(t, c.Group, versions{4, 4, 4})
	c.Join("B") // rejoin from LEAVING
	expectVersions(t, c.Group, versions{5, 5, 5})
	c.Check()
}

func TestBumps_FenceOnInvalidReport(t *testing.T) {
	c := stableAB(t)
	resp := c.Heartbeat(c.Member("B", 3, 1, 2, 3))
	// epoch := max(groupEpoch+1, epoch+1) with the group epoch before the bump.
	expectState(t, c, "B", group.MemberFenced, 4)
	expectVersions(t, c.Group, versions{4, 4, 4})
	expectFenced(t, c, "B", resp)
	// B may not have heard of the fence: what it held stays blocked.
	if m := member(t, c, "B"); !m.Holding().Equal(shards(2, 3)) || m.RebalanceDeadlineAt != 0 {
		t.Fatalf("fenced record %+v, want it to hold 2,3 without a deadline", m)
	}
	expectTargets(t, c.Group, map[string]contract.ShardSet{"A": shards(0, 1, 2, 3)})
	c.Check()
}

// Several leases expiring in one pass bump the group epoch once; each
// expired member's epoch grows by one.
func TestBumps_LeaseExpiryOncePerPass(t *testing.T) {
	c := grouptest.New(t, 6)
	for _, id := range []string{"a", "b", "c"} {
		c.Join(id)
	}
	v := versionsOf(c.Group)
	eb, ec := member(t, c, "b").MemberEpoch, member(t, c, "c").MemberEpoch
	c.Advance(5 * time.Second)
	c.Heartbeat(c.Member("a", member(t, c, "a").MemberEpoch))
	c.Advance(5*time.Second + time.Millisecond)
	c.Tick()
	expectState(t, c, "b", group.MemberExpired, eb+1)
	expectState(t, c, "c", group.MemberExpired, ec+1)
	expectState(t, c, "a", group.MemberActive, member(t, c, "a").MemberEpoch)
	expectVersions(t, c.Group, versions{v.G + 1, v.G + 1, v.V + 1})
	expectTargets(t, c.Group, map[string]contract.ShardSet{"a": contract.Range(0, 6)})
	c.Check()
}

// stuckPair builds a 4-shard group where A and B must each release one shard
// since t0 (C and D joined at t0) and never do; C and D read what they get.
// It keeps everybody alive until t0+55s and returns t0.
func stuckPair(t *testing.T) (*grouptest.Context, contract.Instant) {
	t.Helper()
	c := stableAB(t)
	c.Advance(time.Second)
	t0 := c.Now
	c.Join("C")
	c.Join("D")
	expectTargets(t, c.Group, map[string]contract.ShardSet{"A": shards(0), "B": shards(2), "C": shards(3), "D": shards(1)})
	owned := map[string]contract.ShardSet{"A": shards(0, 1), "B": shards(2, 3)}
	for _, id := range []string{"A", "B"} { // told of their reduced targets at t0
		c.Heartbeat(c.Member(id, member(t, c, id).MemberEpoch, owned[id]...))
	}
	for c.Now < t0.Add(55*time.Second) {
		c.Advance(5 * time.Second)
		for _, id := range []string{"A", "B", "C", "D"} {
			resp := c.Heartbeat(c.Member(id, member(t, c, id).MemberEpoch, owned[id]...))
			if resp.Status != contract.StatusOK {
				t.Fatalf("%s at %v: %+v", id, c.Now, resp)
			}
			if id == "C" || id == "D" {
				owned[id] = resp.Assignment.AssignedShards
			}
		}
	}
	if len(owned["C"]) != 0 || len(owned["D"]) != 0 {
		t.Fatalf("C/D got blocked shards: %v", owned)
	}
	for _, id := range []string{"A", "B"} {
		if m := member(t, c, id); m.RebalanceDeadlineAt != t0.Add(c.Settings.RebalanceTimeout) {
			t.Fatalf("%s deadline %v, want %v", id, m.RebalanceDeadlineAt, t0.Add(c.Settings.RebalanceTimeout))
		}
	}
	c.Check()
	return c, t0
}

// Rebalance-timeout fencing of several owners in one pass bumps the group
// epoch once; each fenced epoch is max(groupEpoch+1, epoch+1).
func TestBumps_TimeoutFencingOncePerPass(t *testing.T) {
	c, t0 := stuckPair(t)
	c.Now = t0.Add(c.Settings.RebalanceTimeout)
	v := versionsOf(c.Group)
	ea, eb := member(t, c, "A").MemberEpoch, member(t, c, "B").MemberEpoch
	c.Tick()
	expectState(t, c, "A", group.MemberFenced, max(v.G+1, ea+1))
	expectState(t, c, "B", group.MemberFenced, max(v.G+1, eb+1))
	expectVersions(t, c.Group, versions{v.G + 1, v.G + 1, v.V + 1})
	expectState(t, c, "C", group.MemberActive, member(t, c, "C").MemberEpoch)
	expectState(t, c, "D", group.MemberActive, member(t, c, "D").MemberEpoch)
	expectTargets(t, c.Group, map[string]contract.ShardSet{"C": shards(0, 3), "D": shards(1, 2)})
	c.Check()
}

func TestBumps_SteadyHeartbeatAndRevokeAckBumpNothing(t *testing.T) {
	c := stableA(t)
	c.Join("B")
	v := versionsOf(c.Group)
	c.Heartbeat(c.Member("A", 2, 0, 1, 2, 3))
	c.Heartbeat(revokeAck(c, "A", 3, shards(0, 1), 2, 3))
	c.Heartbeat(revokeAck(c, "A", 3, shards(0, 1), 2, 3)) // duplicate ack
	c.Heartbeat(c.Member("B", 3))
	c.Heartbeat(c.Member("B", 3, 2, 3))
	for i := 0; i < 5; i++ {
		c.Advance(time.Second)
		c.Heartbeat(c.Member("A", 3, 0, 1))
		c.Heartbeat(c.Member("B", 3, 2, 3))
		c.Tick()
	}
	expectVersions(t, c.Group, v)
	c.Check()
}

func TestBumps_CorrectionRoundBumpsNothing(t *testing.T) {
	c := stableAB(t)
	v := versionsOf(c.Group)
	hb := c.Member("A", 3, 0, 1)
	hb.MetadataVersion = 9
	if r := c.Heartbeat(hb); r.Status != contract.StatusSyncMetadata {
		t.Fatalf("%+v", r)
	}
	if r := c.Heartbeat(c.Member("B", 3, 2, 3)); r.Status != contract.StatusRevokePending {
		t.Fatalf("%+v", r)
	}
	if r := c.Heartbeat(c.Member("A", 3, 0, 1)); r.Status != contract.StatusOK || c.Group.MetadataCorrection != nil {
		t.Fatalf("%+v round %+v", r, c.Group.MetadataCorrection)
	}
	expectVersions(t, c.Group, v)
	c.Check()
}

func TestBumps_ScaleRollbackAndMigrationSteps(t *testing.T) {
	c := stableAB(t)
	v := versionsOf(c.Group)
	m, err := c.StartScale(8)
	if err != nil || m.State != group.MigrationPreparing {
		t.Fatalf("start: %+v %v", m, err)
	}
	expectVersions(t, c.Group, v) // preparing bumps nothing
	if _, err := c.ActivateScale(m.ReshardingID); err != nil {
		t.Fatal(err)
	}
	expectVersions(t, c.Group, versions{v.G + 1, v.G + 1, v.V + 1}) // activation: G
	rb, err := c.Rollback(m.ReshardingID)
	if err != nil || rb.State != group.MigrationRolledBack {
		t.Fatalf("rollback: %+v %v", rb, err)
	}
	expectVersions(t, c.Group, versions{v.G + 2, v.G + 2, v.V + 2}) // rollback: G
	c.Check()
}
