package group_test

import (
	"testing"
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/grouptest"
)

// Tests of docs/protocol.md §4.2 steps 1–3 and of each row of the step-8 epoch table, plus
// the response shapes of docs/protocol.md §4.1 and improvements 8a/8b.

func TestStep1_UnsupportedProtocol(t *testing.T) {
	c := stableA(t)
	before, n, v := member(t, c, "A"), len(c.Records), versionsOf(c.Group)
	for _, pv := range []int{2, 3} {
		hb := c.Member("A", 2, 0, 1, 2, 3)
		hb.ProtocolVersion = pv
		expectRejected(t, c, hb, c.Heartbeat(hb), contract.StatusUnsupportedProtocol)
	}
	// Step 1 comes before steps 2 and 3.
	hb := c.Member("A", 2)
	hb.ProtocolVersion, hb.PathMemberID = 2, "other"
	expectRejected(t, c, hb, c.Heartbeat(hb), contract.StatusUnsupportedProtocol)
	res := group.New().Heartbeat(c.Now, c.Settings, &contract.HeartbeatRequest{ProtocolVersion: 2, RequestID: "r", MemberID: "A"})
	resp, recs := res.Answer, res.Records
	if resp.Status != contract.StatusUnsupportedProtocol || len(recs) != 0 {
		t.Fatalf("missing group, protocol 2: %s %d records", resp.Status, len(recs))
	}
	expectUnchanged(t, c, "A", before)
	expectVersions(t, c.Group, v)
	if len(c.Records) != n {
		t.Fatalf("unsupported protocol produced records")
	}
	c.Check()
}

func TestStep2_PathMemberMismatch(t *testing.T) {
	c := stableA(t)
	before, n := member(t, c, "A"), len(c.Records)
	hb := c.Member("A", 2, 0, 1, 2, 3)
	hb.PathMemberID = "B"
	expectRejected(t, c, hb, c.Heartbeat(hb), contract.StatusInvalidRequest)
	// A new member id with a mismatching path creates nothing.
	hb = c.Member("C", 0)
	hb.PathMemberID = "D"
	expectRejected(t, c, hb, c.Heartbeat(hb), contract.StatusInvalidRequest)
	expectUnchanged(t, c, "A", before)
	if len(c.Records) != n || len(c.Group.Members) != 1 {
		t.Fatalf("path mismatch changed the group")
	}
	// A matching path is fine.
	hb = c.Member("A", 2, 0, 1, 2, 3)
	hb.PathMemberID = "A"
	expect(t, c.Heartbeat(hb), contract.StatusOK, 2, shards(0, 1, 2, 3), nil)
}

func TestStep3_MissingGroup(t *testing.T) {
	s := group.DefaultSettings()
	for _, epoch := range []int64{0, -1, 5} {
		req := contract.HeartbeatRequest{ProtocolVersion: 1, RequestID: "r", MemberID: "A", MemberEpoch: epoch, MetadataVersion: 7,
			OwnedShards: shards(1)}
		g := group.New()
		res := g.Heartbeat(grouptest.Start, s, &req)
		resp, recs := res.Answer, res.Records
		if len(recs) != 0 || g.Exists() {
			t.Fatalf("missing group: records %v", recs)
		}
		want := contract.HeartbeatResponse{ResponseTo: "r", Status: contract.StatusUnknownMemberID, MemberID: "A", MemberEpoch: epoch,
			HeartbeatIntervalMs: s.HeartbeatInterval.Milliseconds(), RebalanceTimeoutMs: s.RebalanceTimeout.Milliseconds(), MemberLeaseTtlMs: s.MemberLeaseTTL.Milliseconds()}
		if resp.Status != want.Status || resp.MemberEpoch != epoch || resp.GroupEpoch != 0 || resp.MetadataVersion != 0 ||
			len(resp.Assignment.AssignedShards) != 0 || resp.Assignment.MetadataVersion != 0 {
			t.Fatalf("missing group: %+v", resp)
		}
	}
	// A deleted group is missing too.
	c := stableA(t)
	if err := c.Delete(true); err != nil {
		t.Fatal(err)
	}
	hb := c.Member("A", 2, 0, 1, 2, 3)
	expectRejected(t, c, hb, c.Heartbeat(hb), contract.StatusUnknownMemberID)
	if c.Group.Exists() || len(c.Group.Members) != 0 {
		t.Fatalf("heartbeat recreated a deleted group")
	}
}

func TestEpochTable_BelowMinusOne(t *testing.T) {
	c := stableA(t)
	n, v := len(c.Records), versionsOf(c.Group)
	// No record: nothing is created.
	hb := c.Member("B", -2)
	expectRejected(t, c, hb, c.Heartbeat(hb), contract.StatusInvalidRequest)
	if c.Group.Members["B"] != nil {
		t.Fatalf("epoch -2 created a record")
	}
	// With a record: it is left alone.
	before := member(t, c, "A")
	hb = c.Member("A", -7, 0, 1, 2, 3)
	expectRejected(t, c, hb, c.Heartbeat(hb), contract.StatusInvalidRequest)
	expectUnchanged(t, c, "A", before)
	expectVersions(t, c.Group, v)
	if len(c.Records) != n {
		t.Fatalf("epoch < -1 produced records")
	}
	c.Check()
}

func TestEpochTable_NoRecordEpochZeroJoins(t *testing.T) {
	c := stableA(t)
	resp := c.Join("B")
	// B joins: G bump to 3, B's epoch is the new group epoch.
	expect(t, resp, contract.StatusOK, 3, nil, shards(2, 3))
	if resp.GroupEpoch != 3 || resp.AssignmentEpoch != 3 || resp.MetadataVersion != 3 || resp.Assignment.MetadataVersion != 3 {
		t.Fatalf("join response versions %+v", resp)
	}
	expectVersions(t, c.Group, versions{3, 3, 3})
	m := member(t, c, "B")
	if m.State != group.MemberActive || m.MemberEpoch != 3 || m.MemberName != "B" ||
		m.LastHeartbeatAt != c.Now || m.MemberLeaseExpiresAt != c.Now.Add(c.Settings.MemberLeaseTTL) ||
		m.RebalanceTimeoutMs != c.Settings.RebalanceTimeout.Milliseconds() {
		t.Fatalf("joined record %+v", m)
	}
	// memberName given.
	hb := c.Member("C", 0)
	hb.MemberName = ptr("orders-consumer")
	hb.RuntimeConsumerCapacity = &contract.Capacity{RuntimeMaxConcurrency: 4, AvailableConcurrency: 1}
	c.Heartbeat(hb)
	m = member(t, c, "C")
	if m.MemberName != "orders-consumer" || m.RuntimeMaxConcurrency != 4 || m.ActiveConsumerWorkers != 3 {
		t.Fatalf("joined record %+v", m)
	}
	c.Check()
}

func TestEpochTable_NoRecordOtherEpochUnknown(t *testing.T) {
	c := stableA(t)
	n, v := len(c.Records), versionsOf(c.Group)
	for _, epoch := range []int64{-1, 1, 2, 3, 100} {
		hb := c.Member("B", epoch)
		expectRejected(t, c, hb, c.Heartbeat(hb), contract.StatusUnknownMemberID)
		if c.Group.Members["B"] != nil {
			t.Fatalf("epoch %d created a record", epoch)
		}
	}
	expectVersions(t, c.Group, v)
	if len(c.Records) != n {
		t.Fatalf("unknown member produced records")
	}
}

// rejoinCases builds a group where B (A{0,1} B{2,3}) is LEAVING, EXPIRED or
// FENCED.
var rejoinCases = map[string]func(t *testing.T, c *grouptest.Context){
	"LEAVING": func(t *testing.T, c *grouptest.Context) {
		c.Leave("B", grouptest.Revoked(2, 3)...)
		expectState(t, c, "B", group.MemberLeaving, -1)
	},
	"EXPIRED": func(t *testing.T, c *grouptest.Context) {
		c.Advance(c.Settings.MemberLeaseTTL / 2)
		c.Heartbeat(c.Member("A", 3, 0, 1))
		c.Advance(c.Settings.MemberLeaseTTL/2 + time.Millisecond)
		c.Heartbeat(c.Member("A", 3, 0, 1))
		expectState(t, c, "B", group.MemberExpired, 4)
	},
	"FENCED": func(t *testing.T, c *grouptest.Context) {
		c.Heartbeat(c.Member("B", 3, 0)) // a foreign shard
		expectState(t, c, "B", group.MemberFenced, 4)
	},
}

func TestEpochTable_EpochZeroRejoins(t *testing.T) {
	for name, setup := range rejoinCases {
		t.Run(name, func(t *testing.T) {
			c := stableAB(t)
			setup(t, c)
			ge := c.Group.GroupEpoch
			hb := c.Member("B", 0)
			hb.MemberName = ptr("b-name")
			resp := c.Heartbeat(hb)
			if resp.Status != contract.StatusOK || resp.MemberEpoch != ge+1 || resp.GroupEpoch != ge+1 {
				t.Fatalf("rejoin: %+v (group epoch was %d)", resp, ge)
			}
			m := member(t, c, "B")
			if m.State != group.MemberActive || m.MemberEpoch != ge+1 || m.MemberName != "b-name" ||
				len(m.CurrentAssignment) != 0 || len(m.Revoking) != 0 || len(m.ShardProgress) != 0 || m.RebalanceDeadlineAt != 0 {
				t.Fatalf("rejoined record %+v", m)
			}
			expectVersions(t, c.Group, versions{ge + 1, ge + 1, c.Group.MetadataVersion})
			if !c.Group.Targets["B"].Equal(shards(2, 3)) && !c.Group.Targets["B"].Equal(shards(0, 1)) {
				t.Fatalf("targets %v", c.Group.Targets)
			}
			c.Check()
		})
	}
}

func TestEpochTable_JoinReplay(t *testing.T) {
	c := grouptest.New(t, 4)
	c.Join("A") // the response is lost
	n, v := len(c.Records), versionsOf(c.Group)
	c.Advance(500)
	resp := c.Join("A")
	expect(t, resp, contract.StatusOK, 2, shards(0, 1, 2, 3), nil)
	if resp.GroupEpoch != 2 || resp.MetadataVersion != 2 {
		t.Fatalf("join replay response %+v", resp)
	}
	expectVersions(t, c.Group, v)
	m := member(t, c, "A")
	if m.LastHeartbeatAt != c.Now || m.MemberLeaseExpiresAt != c.Now.Add(c.Settings.MemberLeaseTTL) {
		t.Fatalf("join replay did not refresh liveness: %+v", m)
	}
	for _, r := range c.Records[n:] {
		if _, ok := r.(group.MetaRecord); ok {
			t.Fatalf("join replay changed the group's metadata: %+v", r)
		}
	}
	// A second member's join replay while pending.
	c.Heartbeat(c.Member("A", 2, 0, 1, 2, 3))
	c.Join("B")
	v = versionsOf(c.Group)
	expect(t, c.Join("B"), contract.StatusOK, 3, nil, shards(2, 3))
	expectVersions(t, c.Group, v)
	c.Check()
}

func TestEpochTable_EpochZeroOtherwiseInvalid(t *testing.T) {
	c := stableAB(t)
	before, v := member(t, c, "A"), versionsOf(c.Group)
	// Owned shards with epoch 0 from a live member holding shards.
	hb := c.Member("A", 0, 0, 1)
	expectRejected(t, c, hb, c.Heartbeat(hb), contract.StatusInvalidRequest)
	// Active revoke reports with epoch 0.
	hb = c.Member("A", 0)
	hb.RevokingShards = grouptest.Draining(0)
	expectRejected(t, c, hb, c.Heartbeat(hb), contract.StatusInvalidRequest)
	expectUnchanged(t, c, "A", before)
	expectVersions(t, c.Group, v)
	c.Check()
}

func TestEpochTable_FencedOrExpiredRecord(t *testing.T) {
	for _, name := range []string{"EXPIRED", "FENCED"} {
		t.Run(name, func(t *testing.T) {
			c := stableAB(t)
			rejoinCases[name](t, c)
			before, v := member(t, c, "B"), versionsOf(c.Group)
			for _, epoch := range []int64{-1, 1, 3, 4, 5, 99} {
				hb := c.Member("B", epoch, 2, 3)
				expectFenced(t, c, "B", c.Heartbeat(hb))
				expectUnchanged(t, c, "B", before)
			}
			expectVersions(t, c.Group, v)
			c.Check()
		})
	}
}

func TestEpochTable_Leave(t *testing.T) {
	c := stableAB(t)
	resp := c.Leave("B", grouptest.Revoked(2, 3)...)
	if resp.Status != contract.StatusOK || resp.MemberEpoch != -1 || len(resp.Assignment.AssignedShards) != 0 ||
		len(resp.Assignment.PendingShards) != 0 {
		t.Fatalf("leave response %+v", resp)
	}
	expectState(t, c, "B", group.MemberLeaving, -1)
	expectVersions(t, c.Group, versions{4, 4, 4})
	if _, ok := c.Group.Targets["B"]; ok {
		t.Fatalf("leaving member keeps a target: %v", c.Group.Targets)
	}
	if m := member(t, c, "B"); len(m.CurrentAssignment) != 0 || len(m.GrantedAssignment) != 0 {
		t.Fatalf("leaving record holds shards: %+v", m)
	}
	// Second leave: nothing bumped.
	resp = c.Leave("B")
	if resp.Status != contract.StatusOK || resp.MemberEpoch != -1 {
		t.Fatalf("second leave response %+v", resp)
	}
	expectVersions(t, c.Group, versions{4, 4, 4})
	// A gets everything.
	expect(t, c.Heartbeat(c.Member("A", 3, 0, 1)), contract.StatusOK, 4, shards(0, 1, 2, 3), nil)
	c.Check()
}

func TestEpochTable_AboveStoredInvalid(t *testing.T) {
	c := stableAB(t)
	before, v := member(t, c, "A"), versionsOf(c.Group)
	for _, epoch := range []int64{4, 5, 1000} {
		hb := c.Member("A", epoch, 0, 1)
		expectRejected(t, c, hb, c.Heartbeat(hb), contract.StatusInvalidRequest)
	}
	expectUnchanged(t, c, "A", before)
	expectVersions(t, c.Group, v)
	// A LEAVING member (stored −1) sending a positive epoch.
	c.Leave("B", grouptest.Revoked(2, 3)...)
	hb := c.Member("B", 3)
	expectRejected(t, c, hb, c.Heartbeat(hb), contract.StatusInvalidRequest)
	expectState(t, c, "B", group.MemberLeaving, -1)
	c.Check()
}

func TestEpochTable_BelowStoredFencedNotMarked(t *testing.T) {
	c := stableAB(t)
	// A's previous epoch is 2 (improvement 8a); 1 is older still.
	before, v := member(t, c, "A"), versionsOf(c.Group)
	resp := c.Heartbeat(c.Member("A", 1, 0, 1))
	expectFenced(t, c, "A", resp)
	if resp.MemberEpoch != 3 {
		t.Fatalf("fenced response epoch %d, want stored 3", resp.MemberEpoch)
	}
	expectUnchanged(t, c, "A", before)
	expectVersions(t, c.Group, v)
	// B joined at epoch 3 and never held another: 2 is stale for it.
	resp = c.Heartbeat(c.Member("B", 2, 2, 3))
	expectFenced(t, c, "B", resp)
	expectState(t, c, "B", group.MemberActive, 3)
	c.Check()
}

func TestEpochTable_EqualContinues(t *testing.T) {
	c := stableAB(t)
	n, v := len(c.Records), versionsOf(c.Group)
	c.Advance(1000)
	expect(t, c.Heartbeat(c.Member("A", 3, 0, 1)), contract.StatusOK, 3, shards(0, 1), nil)
	expect(t, c.Heartbeat(c.Member("B", 3, 2, 3)), contract.StatusOK, 3, shards(2, 3), nil)
	expectVersions(t, c.Group, v)
	for _, r := range c.Records[n:] {
		mr, ok := r.(group.MemberRecord)
		if !ok || !mr.LivenessOnly {
			t.Fatalf("steady heartbeat produced %T %+v", r, r)
		}
	}
	if m := member(t, c, "A"); m.MemberLeaseExpiresAt != c.Now.Add(c.Settings.MemberLeaseTTL) {
		t.Fatalf("lease not renewed: %+v", m)
	}
	c.Check()
}

// Improvement 8a: a retry with the previous epoch, owning a subset of what
// was granted at that epoch, is answered as for the current epoch.
func TestImprovement8a_PreviousEpochAccepted(t *testing.T) {
	c := stableA(t)
	c.Join("B")
	c.Heartbeat(c.Member("A", 2, 0, 1, 2, 3)) // answered epoch 3, assigned {0,1}: lost
	v := versionsOf(c.Group)
	c.Advance(1000)
	resp := c.Heartbeat(c.Member("A", 2, 0, 1, 2, 3))
	expect(t, resp, contract.StatusOK, 3, shards(0, 1), nil)
	expectState(t, c, "A", group.MemberActive, 3)
	// A smaller subset is accepted too.
	expect(t, c.Heartbeat(c.Member("A", 2, 0, 1)), contract.StatusOK, 3, shards(0, 1), nil)
	expectVersions(t, c.Group, v)
	c.Check()
}

// Improvement 8a does not accept the previous epoch with shards that were
// not granted at that epoch.
func TestImprovement8a_PreviousEpochOwningMoreFenced(t *testing.T) {
	c := stableAB(t)
	c.Leave("B", grouptest.Revoked(2, 3)...)
	// A moves from 3 (granted {0,1}) to 4 and receives {0,1,2,3}.
	expect(t, c.Heartbeat(c.Member("A", 3, 0, 1)), contract.StatusOK, 4, shards(0, 1, 2, 3), nil)
	before := member(t, c, "A")
	resp := c.Heartbeat(c.Member("A", 3, 0, 1, 2, 3))
	expectFenced(t, c, "A", resp)
	expectUnchanged(t, c, "A", before)
	expectState(t, c, "A", group.MemberActive, 4)
	c.Check()
}

// A lost response does not cost the lease (improvement 8): the retry keeps
// the member working with its shards, no epoch moves, no shard idles.
func TestImprovement8_LostResponseKeepsLease(t *testing.T) {
	c := stableA(t)
	c.Advance(1000)
	c.Join("B")
	// A's response moving it to epoch 3 is lost.
	c.Heartbeat(c.Member("A", 2, 0, 1, 2, 3))
	c.Advance(1000)
	resp := c.Heartbeat(c.Member("A", 2, 0, 1, 2, 3))
	expect(t, resp, contract.StatusOK, 3, shards(0, 1), nil)
	if m := member(t, c, "A"); m.MemberLeaseExpiresAt != c.Now.Add(c.Settings.MemberLeaseTTL) || m.State != group.MemberActive {
		t.Fatalf("lease not kept: %+v", m)
	}
	expect(t, c.Heartbeat(revokeAck(c, "A", 3, shards(0, 1), 2, 3)), contract.StatusOK, 3, shards(0, 1), nil)
	expect(t, c.Heartbeat(c.Member("B", 3)), contract.StatusOK, 3, shards(2, 3), nil)
	expectVersions(t, c.Group, versions{3, 3, 3})
	c.Check()
}

// Improvement 8b: after a fenced-but-not-marked answer the client drops its
// state and sends epoch 0 with nothing: it gets its target back at once,
// the record is cleared, nothing is bumped.
func TestImprovement8b_EpochZeroFromLiveMemberRejoinsInPlace(t *testing.T) {
	c := stableAB(t)
	v := versionsOf(c.Group)
	expectFenced(t, c, "A", c.Heartbeat(c.Member("A", 1, 0, 1)))
	resp := c.Join("A")
	expect(t, resp, contract.StatusOK, 3, shards(0, 1), nil)
	m := member(t, c, "A")
	if m.State != group.MemberActive || len(m.CurrentAssignment) != 0 || len(m.Revoking) != 0 ||
		!m.GrantedAssignment.Equal(shards(0, 1)) {
		t.Fatalf("record after 8b rejoin %+v", m)
	}
	expectVersions(t, c.Group, v)
	expect(t, c.Heartbeat(c.Member("A", 3, 0, 1)), contract.StatusOK, 3, shards(0, 1), nil)
	if c.Group.State != group.GroupStable {
		t.Fatalf("state %s", c.Group.State)
	}
	c.Check()
}

// Improvement 8b applies also when the record holds revoking shards; its
// progress is dropped with the rest. What it held outside its target stays
// held (as revoking) until the member's next heartbeat says what it reads:
// the epoch-0 request may be a delayed duplicate of its join.
func TestImprovement8b_ClearsRevokingAndProgress(t *testing.T) {
	c := stableA(t)
	c.Join("B")
	hb := c.Member("A", 2, 0, 1)
	hb.RevokingShards = grouptest.Draining(2, 3)
	hb.ShardProgress = []contract.ShardProgress{{Shard: contract.Shard{ShardIndex: 0}}}
	expect(t, c.Heartbeat(hb), contract.StatusOK, 3, shards(0, 1), nil)
	expect(t, c.Heartbeat(c.Member("B", 3)), contract.StatusOK, 3, nil, shards(2, 3))
	// A restarts.
	expect(t, c.Join("A"), contract.StatusOK, 3, shards(0, 1), nil)
	m := member(t, c, "A")
	if !m.Revoking.Equal(shards(2, 3)) || len(m.CurrentAssignment) != 0 || len(m.ShardProgress) != 0 {
		t.Fatalf("record after 8b %+v", m)
	}
	expect(t, c.Heartbeat(c.Member("B", 3)), contract.StatusOK, 3, nil, shards(2, 3))
	expect(t, c.Heartbeat(c.Member("A", 3, 0, 1)), contract.StatusOK, 3, shards(0, 1), nil)
	expect(t, c.Heartbeat(c.Member("B", 3)), contract.StatusOK, 3, shards(2, 3), nil)
	c.Check()
}
