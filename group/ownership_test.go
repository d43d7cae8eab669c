package group_test

import (
	"testing"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/grouptest"
)

// Tests of docs/protocol.md §4.4 ownership validation and of the fence it triggers (§4.2 step 9).

// expectFencedByReport checks the outcome of an invalid report: FENCED with
// epoch max(groupEpoch+1, epoch+1), what it held kept (blocked until its
// lease runs out), deadline cleared, one G bump, the target recomputed
// without the member.
func expectFencedByReport(t *testing.T, c *grouptest.Context, id string, hb contract.HeartbeatRequest) {
	t.Helper()
	v := versionsOf(c.Group)
	before := member(t, c, id)
	resp := c.Heartbeat(hb)
	expectFenced(t, c, id, resp)
	m := member(t, c, id)
	if m.State != group.MemberFenced || m.MemberEpoch != max(v.G+1, before.MemberEpoch+1) {
		t.Fatalf("%s after invalid report: %s epoch %d (group epoch was %d)", id, m.State, m.MemberEpoch, v.G)
	}
	if !m.Holding().Equal(before.Holding()) || m.RebalanceDeadlineAt != 0 {
		t.Fatalf("fenced record %+v, want it to hold %v without a deadline", m, before.Holding())
	}
	expectVersions(t, c.Group, versions{v.G + 1, v.G + 1, v.V + 1})
	if _, ok := c.Group.Targets[id]; ok {
		t.Fatalf("fenced member keeps a target: %v", c.Group.Targets)
	}
	c.Check()
}

func TestOwnership_ClaimingPendingShardEarlyFences(t *testing.T) {
	c := stableA(t)
	expect(t, c.Join("B"), contract.StatusOK, 3, nil, shards(2, 3))
	expectFencedByReport(t, c, "B", c.Member("B", 3, 2))
	// A, no longer blocked by B, keeps everything.
	expect(t, c.Heartbeat(c.Member("A", 2, 0, 1, 2, 3)), contract.StatusOK, 4, shards(0, 1, 2, 3), nil)
}

func TestOwnership_ForeignShardFences(t *testing.T) {
	c := stableAB(t)
	expectFencedByReport(t, c, "A", c.Member("A", 3, 0, 1, 2))
}

func TestOwnership_ShardBeyondCountFences(t *testing.T) {
	c := stableAB(t)
	expectFencedByReport(t, c, "A", c.Member("A", 3, 0, 1, 4))
}

func TestOwnership_ProgressForNeverGrantedShardFences(t *testing.T) {
	for name, shard := range map[string]int{"foreign": 2, "beyond count": 9} {
		t.Run(name, func(t *testing.T) {
			c := stableAB(t)
			hb := c.Member("A", 3, 0, 1)
			hb.ShardProgress = []contract.ShardProgress{{Shard: contract.Shard{ShardIndex: 0}}, {Shard: contract.Shard{ShardIndex: shard}}}
			expectFencedByReport(t, c, "A", hb)
		})
	}
}

func TestOwnership_ActiveRevokeForForeignShardFences(t *testing.T) {
	for name, rr := range map[string]contract.RevokeReport{
		"DRAINING":          {Shard: contract.Shard{ShardIndex: 3}, State: contract.RevokeDraining, InFlight: 1},
		"REVOKING":          {Shard: contract.Shard{ShardIndex: 3}, State: contract.RevokeRevoking},
		"REVOKED in flight": {Shard: contract.Shard{ShardIndex: 3}, State: contract.RevokeRevoked, InFlight: 2},
	} {
		t.Run(name, func(t *testing.T) {
			c := stableAB(t)
			hb := c.Member("A", 3, 0, 1)
			hb.RevokingShards = []contract.RevokeReport{rr}
			expectFencedByReport(t, c, "A", hb)
		})
	}
}

// Terminal reports (REVOKED, inFlight 0) for shards outside the authority
// are dropped silently; duplicate terminal reports never fence (docs/protocol.md §13.3).
func TestOwnership_TerminalForeignReportsDropped(t *testing.T) {
	c := stableAB(t)
	v := versionsOf(c.Group)
	for i := 0; i < 3; i++ {
		expect(t, c.Heartbeat(revokeAck(c, "A", 3, shards(0, 1), 2, 3, 17)), contract.StatusOK, 3, shards(0, 1), nil)
	}
	m := member(t, c, "A")
	if m.State != group.MemberActive || len(m.Revoking) != 0 {
		t.Fatalf("record %+v", m)
	}
	expectVersions(t, c.Group, v)
	c.Check()
}

// What a member may report: its current set, its revoking set, what it was
// granted, and its unblocked target.
func TestOwnership_AuthoritySources(t *testing.T) {
	c := stableA(t)
	c.Join("B") // targets A{0,1} B{2,3}
	// A's current still holds 2,3: it may report them as owned and as draining.
	hb := c.Member("A", 2, 0, 1)
	hb.RevokingShards = grouptest.Draining(2, 3)
	hb.ShardProgress = []contract.ShardProgress{{Shard: contract.Shard{ShardIndex: 2}}}
	expect(t, c.Heartbeat(hb), contract.StatusOK, 3, shards(0, 1), nil)
	// Revoking set: draining again is fine, progress too.
	hb = c.Member("A", 3, 0, 1)
	hb.RevokingShards = grouptest.Draining(2, 3)
	hb.ShardProgress = []contract.ShardProgress{{Shard: contract.Shard{ShardIndex: 3}}}
	expect(t, c.Heartbeat(hb), contract.StatusOK, 3, shards(0, 1), nil)
	// B is blocked: nothing granted; owning 2 would fence it (see above).
	expect(t, c.Heartbeat(c.Member("B", 3)), contract.StatusOK, 3, nil, shards(2, 3))
	expect(t, c.Heartbeat(revokeAck(c, "A", 3, shards(0, 1), 2, 3)), contract.StatusOK, 3, shards(0, 1), nil)
	// Target minus blocked: B may report 2,3 before it heard it was granted them.
	expect(t, c.Heartbeat(c.Member("B", 3, 2, 3)), contract.StatusOK, 3, shards(2, 3), nil)
	if c.Group.State != group.GroupStable {
		t.Fatalf("state %s", c.Group.State)
	}
	c.Check()
}

// A LEAVING member's owned list is ignored (treated as empty).
func TestOwnership_LeavingOwnedIgnored(t *testing.T) {
	c := stableAB(t)
	hb := c.Member("A", -1, 0, 1, 2, 3)
	resp := c.Heartbeat(hb)
	if resp.Status != contract.StatusOK || resp.MemberEpoch != -1 {
		t.Fatalf("leave with foreign owned: %+v", resp)
	}
	expectState(t, c, "A", group.MemberLeaving, -1)
	if m := member(t, c, "A"); len(m.CurrentAssignment) != 0 {
		t.Fatalf("leaving current %v", m.CurrentAssignment)
	}
	// But an active report for a foreign shard still fences.
	hb = c.Member("A", -1)
	hb.RevokingShards = grouptest.Draining(2)
	resp = c.Heartbeat(hb)
	expectFenced(t, c, "A", resp)
	c.Check()
}

// Epoch 0 skips validation: the report is treated as empty.
func TestOwnership_EpochZeroSkipsValidation(t *testing.T) {
	c := stableAB(t)
	c.Leave("B", grouptest.Revoked(2, 3)...)
	hb := c.Member("B", 0)
	hb.ShardProgress = []contract.ShardProgress{{Shard: contract.Shard{ShardIndex: 0}}}
	resp := c.Heartbeat(hb)
	if resp.Status != contract.StatusOK {
		t.Fatalf("rejoin with foreign progress: %+v", resp)
	}
	if m := member(t, c, "B"); len(m.ShardProgress) != 0 {
		t.Fatalf("progress kept: %+v", m.ShardProgress)
	}
	c.Check()
}
