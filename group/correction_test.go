package group_test

import (
	"errors"
	"testing"
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/grouptest"
)

// Tests of the docs/protocol.md §4.8 metadata-correction round and the §4.5 payload (§13.6).

func expectStatus(t *testing.T, resp contract.HeartbeatResponse, status contract.HeartbeatStatus, assigned, pending contract.ShardSet) {
	t.Helper()
	if resp.Status != status || !resp.Assignment.AssignedShards.Equal(assigned) || !resp.Assignment.PendingShards.Equal(pending) {
		t.Fatalf("got %s assigned %v pending %v; want %s assigned %v pending %v", resp.Status,
			resp.Assignment.AssignedShards, resp.Assignment.PendingShards, status, assigned, pending)
	}
}

func expectCode(t *testing.T, err error, code contract.Code) {
	t.Helper()
	var de *group.Error
	if !errors.As(err, &de) || de.Code != code {
		t.Fatalf("error %v, want %s", err, code)
	}
}

func TestCorrection_FutureVersionSyncMetadata(t *testing.T) {
	c := stableAB(t)
	c.Advance(time.Second)
	opened := c.Now
	hb := c.Member("A", 77, 0) // the epoch is not checked
	hb.MetadataVersion = 9
	resp := c.Heartbeat(hb)
	// docs/protocol.md §4.5: assigned = owned ∩ (target − blocked), pending = target − assigned.
	expectStatus(t, resp, contract.StatusSyncMetadata, shards(0), shards(1))
	if resp.MemberEpoch != 3 || resp.GroupEpoch != 3 || resp.AssignmentEpoch != 3 || resp.MetadataVersion != 3 ||
		resp.Assignment.MetadataVersion != 3 {
		t.Fatalf("sync response %+v", resp)
	}
	round := c.Group.MetadataCorrection
	if round == nil || round.TargetMetadataVersion != 3 || round.ObservedMetadataVersion != 9 ||
		round.RequestedAt != opened || len(round.AcknowledgedMembers) != 0 {
		t.Fatalf("round %+v", round)
	}
	m := member(t, c, "A")
	// Deliberate deviation from docs/protocol.md §4.5: current becomes what the member reports
	// reading (within its authority), so it keeps blocking others if this
	// answer is lost.
	if m.MetadataVersion != 9 || !m.CurrentAssignment.Equal(shards(0)) || m.LastHeartbeatAt != c.Now ||
		m.MemberEpoch != 3 || !m.GrantedAssignment.Equal(shards(0)) {
		t.Fatalf("record after sync %+v", m)
	}
	// Repeats raise the observed version, never lower it.
	c.Advance(time.Second)
	hb.MetadataVersion = 12
	c.Heartbeat(hb)
	hb.MetadataVersion = 10
	c.Heartbeat(hb)
	if r := c.Group.MetadataCorrection; r.ObservedMetadataVersion != 12 || r.RequestedAt != opened || r.TargetMetadataVersion != 3 {
		t.Fatalf("round after repeats %+v", r)
	}
	expectVersions(t, c.Group, versions{3, 3, 3})
	c.Check()
}

func TestCorrection_OtherVersionsSyncCurrentRevokePendingUntilAcked(t *testing.T) {
	c := stableAB(t)
	hb := c.Member("A", 3, 0, 1)
	hb.MetadataVersion = 9
	expectStatus(t, c.Heartbeat(hb), contract.StatusSyncMetadata, shards(0, 1), nil)
	// B on an older version: SYNC_METADATA, the round untouched.
	round := *c.Group.MetadataCorrection
	hb = c.Member("B", 3, 2, 3)
	hb.MetadataVersion = 2
	expectStatus(t, c.Heartbeat(hb), contract.StatusSyncMetadata, shards(2, 3), nil)
	if r := c.Group.MetadataCorrection; r.ObservedMetadataVersion != round.ObservedMetadataVersion || len(r.AcknowledgedMembers) != 0 {
		t.Fatalf("round touched %+v", r)
	}
	if m := member(t, c, "B"); m.MetadataVersion != 2 {
		t.Fatalf("B's version %d", m.MetadataVersion)
	}
	// B on the current version: normal path, acknowledged, REVOKE_PENDING.
	expectStatus(t, c.Heartbeat(c.Member("B", 3, 2, 3)), contract.StatusRevokePending, shards(2, 3), nil)
	if r := c.Group.MetadataCorrection; r == nil || len(r.AcknowledgedMembers) != 1 || r.AcknowledgedMembers[0] != "B" {
		t.Fatalf("round %+v", r)
	}
	expectStatus(t, c.Heartbeat(c.Member("B", 3, 2, 3)), contract.StatusRevokePending, shards(2, 3), nil)
	// A acknowledges: everybody acked, nothing revoking or blocked: closing OK.
	expectStatus(t, c.Heartbeat(c.Member("A", 3, 0, 1)), contract.StatusOK, shards(0, 1), nil)
	if c.Group.MetadataCorrection != nil {
		t.Fatalf("round still open: %+v", c.Group.MetadataCorrection)
	}
	expectStatus(t, c.Heartbeat(c.Member("B", 3, 2, 3)), contract.StatusOK, shards(2, 3), nil)
	expectVersions(t, c.Group, versions{3, 3, 3})
	c.Check()
}

// REVOKE_PENDING lasts while an owner is revoking or a target is blocked;
// a pending shard is not handed out during the round.
func TestCorrection_RevokePendingWhileRevokingOrBlocked(t *testing.T) {
	c := stableA(t)
	c.Join("B") // A{0,1} B{2,3}, A still holds 2,3
	hb := c.Member("A", 2, 0, 1, 2, 3)
	hb.MetadataVersion = 9
	expectStatus(t, c.Heartbeat(hb), contract.StatusSyncMetadata, shards(0, 1), nil)
	expectStatus(t, c.Heartbeat(c.Member("B", 3)), contract.StatusRevokePending, nil, shards(2, 3))
	hb = c.Member("A", 2, 0, 1)
	hb.RevokingShards = grouptest.Draining(2, 3)
	expectStatus(t, c.Heartbeat(hb), contract.StatusRevokePending, shards(0, 1), nil)
	expectStatus(t, c.Heartbeat(c.Member("B", 3)), contract.StatusRevokePending, nil, shards(2, 3))
	if c.Group.MetadataCorrection == nil {
		t.Fatalf("round closed while A revokes")
	}
	expectStatus(t, c.Heartbeat(revokeAck(c, "A", 3, shards(0, 1), 2, 3)), contract.StatusOK, shards(0, 1), nil)
	if c.Group.MetadataCorrection != nil {
		t.Fatalf("round still open")
	}
	expectStatus(t, c.Heartbeat(c.Member("B", 3)), contract.StatusOK, shards(2, 3), nil)
	expectVersions(t, c.Group, versions{3, 3, 3})
	c.Check()
}

// A LEAVING member still revoking is a participant.
func TestCorrection_LeavingRevokerParticipates(t *testing.T) {
	c := stableAB(t)
	c.Leave("A", grouptest.Draining(0, 1)...)
	expectStatus(t, c.Heartbeat(c.Member("B", 3, 2, 3)), contract.StatusOK, shards(2, 3), shards(0, 1))
	hb := c.Member("B", 4, 2, 3)
	hb.MetadataVersion = 9
	expectStatus(t, c.Heartbeat(hb), contract.StatusSyncMetadata, shards(2, 3), shards(0, 1))
	expectStatus(t, c.Heartbeat(c.Member("B", 4, 2, 3)), contract.StatusRevokePending, shards(2, 3), shards(0, 1))
	resp := c.Leave("A", grouptest.Revoked(0, 1)...)
	if resp.Status != contract.StatusOK || c.Group.MetadataCorrection != nil {
		t.Fatalf("closing leave %+v round %+v", resp, c.Group.MetadataCorrection)
	}
	expectStatus(t, c.Heartbeat(c.Member("B", 4, 2, 3)), contract.StatusOK, shards(0, 1, 2, 3), nil)
	c.Check()
}

// In a round, a member on the round's version may report progress and
// revokes outside current ∪ revoking ∪ target: they are discarded.
func TestCorrection_OutsideEntriesDiscardedInRound(t *testing.T) {
	c := stableAB(t)
	hb := c.Member("A", 3, 0, 1)
	hb.MetadataVersion = 9
	c.Heartbeat(hb)
	hb = c.Member("A", 3, 0, 1)
	hb.ShardProgress = []contract.ShardProgress{{Shard: contract.Shard{ShardIndex: 3}}, {Shard: contract.Shard{ShardIndex: 0}}}
	hb.RevokingShards = grouptest.Draining(2)
	resp := c.Heartbeat(hb)
	if resp.Status == contract.StatusFencedMemberEpoch {
		t.Fatalf("fenced for entries discarded in a round")
	}
	m := member(t, c, "A")
	if len(m.Revoking) != 0 || len(m.ShardProgress) != 1 || m.ShardProgress[0].Shard.ShardIndex != 0 {
		t.Fatalf("record %+v", m)
	}
	c.Check()
}

func TestCorrection_ScaleAndRollbackBlockedDeleteAllowed(t *testing.T) {
	c := stableAB(t)
	m := c.Scale(8)
	hb := c.Member("A", 3, 0, 1)
	hb.MetadataVersion = 99
	c.Heartbeat(hb)
	if c.Group.MetadataCorrection == nil {
		t.Fatalf("no round")
	}
	_, err := c.StartScale(2)
	expectCode(t, err, contract.CodeMetadataSyncInProgress)
	_, err = c.Rollback(m.ReshardingID)
	expectCode(t, err, contract.CodeMetadataSyncInProgress)
	_, err = c.Rollback("reshard-unknown") // the round is checked before the id
	expectCode(t, err, contract.CodeMetadataSyncInProgress)
	if c.Group.ShardCount != 8 {
		t.Fatalf("shard count %d", c.Group.ShardCount)
	}
	if err := c.Delete(true); err != nil {
		t.Fatalf("delete during a round: %v", err)
	}
	c.Check()
}

func TestCorrection_GroupEpochBumpDropsRound(t *testing.T) {
	c := stableAB(t)
	hb := c.Member("A", 3, 0, 1)
	hb.MetadataVersion = 9
	c.Heartbeat(hb)
	c.Join("C")
	if c.Group.MetadataCorrection != nil {
		t.Fatalf("join did not drop the round")
	}
	c.Check()
}

func TestCorrection_MetadataVersionBumpDropsRound(t *testing.T) {
	c := stableAB(t)
	c.Leave("B", grouptest.Revoked(2, 3)...)
	pruneAt := member(t, c, "B").LastHeartbeatAt.Add(c.Settings.StaleMemberRetention)
	cl := holding(c, "A", 3, 4, shards(0, 1))
	for c.Now.Add(5*time.Second) < pruneAt {
		c.Advance(5 * time.Second)
		req := cl.request()
		req.MetadataVersion = 50 // keeps the round open and A alive
		cl.handle(req, c.Heartbeat(req), c.Now)
	}
	if c.Group.MetadataCorrection == nil {
		t.Fatalf("no round")
	}
	v := versionsOf(c.Group)
	c.Now = pruneAt
	c.Tick()
	if c.Group.Members["B"] != nil || c.Group.MetadataCorrection != nil {
		t.Fatalf("prune: members %v round %+v", c.Group.MemberList(), c.Group.MetadataCorrection)
	}
	expectVersions(t, c.Group, versions{v.G, v.A, v.V + 1})
	c.Check()
}

// FENCED and EXPIRED members get no bypass through a future version; an
// unknown member neither opens a round.
func TestCorrection_FencedMemberNoBypass(t *testing.T) {
	for _, name := range []string{"FENCED", "EXPIRED"} {
		t.Run(name, func(t *testing.T) {
			c := stableAB(t)
			rejoinCases[name](t, c)
			before := member(t, c, "B")
			hb := c.Member("B", before.MemberEpoch, 2, 3)
			hb.MetadataVersion = 99
			expectFenced(t, c, "B", c.Heartbeat(hb))
			expectUnchanged(t, c, "B", before)
			if c.Group.MetadataCorrection != nil {
				t.Fatalf("fenced member opened a round")
			}
			hb = c.Member("Z", 5)
			hb.MetadataVersion = 99
			expectRejected(t, c, hb, c.Heartbeat(hb), contract.StatusUnknownMemberID)
			if c.Group.MetadataCorrection != nil {
				t.Fatalf("unknown member opened a round")
			}
			c.Check()
		})
	}
}
