package group_test

import (
	"reflect"
	"testing"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/grouptest"
)

// stableA returns a 4-shard group where A joined (epoch 2) and acknowledged
// all shards: STABLE, epochs and version 2.
func stableA(t *testing.T) *grouptest.Context {
	t.Helper()
	c := grouptest.New(t, 4)
	expect(t, c.Join("A"), contract.StatusOK, 2, shards(0, 1, 2, 3), nil)
	expect(t, c.Heartbeat(c.Member("A", 2, 0, 1, 2, 3)), contract.StatusOK, 2, shards(0, 1, 2, 3), nil)
	c.Check()
	return c
}

// stableAB returns a 4-shard group with A{0,1} B{2,3}, both acknowledged at
// epoch 3: STABLE, epochs and version 3.
func stableAB(t *testing.T) *grouptest.Context {
	t.Helper()
	c := stableA(t)
	c.Advance(1000)
	expect(t, c.Join("B"), contract.StatusOK, 3, nil, shards(2, 3))
	expect(t, c.Heartbeat(c.Member("A", 2, 0, 1, 2, 3)), contract.StatusOK, 3, shards(0, 1), nil)
	hb := c.Member("A", 3, 0, 1)
	hb.RevokingShards = grouptest.Revoked(2, 3)
	expect(t, c.Heartbeat(hb), contract.StatusOK, 3, shards(0, 1), nil)
	expect(t, c.Heartbeat(c.Member("B", 3)), contract.StatusOK, 3, shards(2, 3), nil)
	expect(t, c.Heartbeat(c.Member("B", 3, 2, 3)), contract.StatusOK, 3, shards(2, 3), nil)
	g := c.Group
	if g.State != group.GroupStable || g.GroupEpoch != 3 || g.MetadataVersion != 3 {
		t.Fatalf("stableAB: %+v", g.Meta)
	}
	c.Check()
	return c
}

// versions is the (groupEpoch, assignmentEpoch, metadataVersion) triple.
type versions struct{ G, A, V int64 }

func versionsOf(g *group.Group) versions {
	return versions{g.GroupEpoch, g.AssignmentEpoch, g.MetadataVersion}
}

// expectVersions fails unless the group's epochs and version are as given.
func expectVersions(t *testing.T, g *group.Group, want versions) {
	t.Helper()
	if got := versionsOf(g); got != want {
		t.Fatalf("versions (G, A, V) = %v, want %v", got, want)
	}
}

// expectRejected checks the docs/protocol.md §4.1 shape of UNSUPPORTED_PROTOCOL,
// INVALID_REQUEST and UNKNOWN_MEMBER_ID: the request epoch echoed, zero
// epochs and version, an empty assignment of version 0.
func expectRejected(t *testing.T, c *grouptest.Context, req contract.HeartbeatRequest, resp contract.HeartbeatResponse, status contract.HeartbeatStatus) {
	t.Helper()
	want := contract.HeartbeatResponse{
		ResponseTo:          resp.ResponseTo,
		Status:              status,
		MemberID:            req.MemberID,
		MemberEpoch:         req.MemberEpoch,
		HeartbeatIntervalMs: c.Settings.HeartbeatInterval.Milliseconds(),
		RebalanceTimeoutMs:  c.Settings.RebalanceTimeout.Milliseconds(),
		MemberLeaseTtlMs:    c.Settings.MemberLeaseTTL.Milliseconds(),
	}
	if resp.ResponseTo == "" {
		t.Fatalf("responseTo empty")
	}
	if len(resp.Assignment.AssignedShards) != 0 || len(resp.Assignment.PendingShards) != 0 {
		t.Fatalf("rejected response carries an assignment: %+v", resp.Assignment)
	}
	resp.Assignment = contract.AssignmentPayload{}
	if !reflect.DeepEqual(resp, want) {
		t.Fatalf("rejected response\n got %+v\nwant %+v", resp, want)
	}
}

// expectFenced checks the docs/protocol.md §4.1 shape of FENCED_MEMBER_EPOCH: the stored
// member epoch, the group's real epochs and version, an empty assignment.
func expectFenced(t *testing.T, c *grouptest.Context, id string, resp contract.HeartbeatResponse) {
	t.Helper()
	g := c.Group
	m := g.Members[id]
	if m == nil {
		t.Fatalf("no record for %s", id)
	}
	if resp.Status != contract.StatusFencedMemberEpoch || resp.MemberID != id || resp.MemberEpoch != m.MemberEpoch ||
		resp.GroupEpoch != g.GroupEpoch || resp.AssignmentEpoch != g.AssignmentEpoch || resp.MetadataVersion != g.MetadataVersion ||
		len(resp.Assignment.AssignedShards) != 0 || len(resp.Assignment.PendingShards) != 0 ||
		resp.HeartbeatIntervalMs != c.Settings.HeartbeatInterval.Milliseconds() ||
		resp.RebalanceTimeoutMs != c.Settings.RebalanceTimeout.Milliseconds() {
		t.Fatalf("fenced response %+v; stored epoch %d, group %+v", resp, m.MemberEpoch, versionsOf(g))
	}
}

// member returns a copy of the stored record of id (fails when missing).
func member(t *testing.T, c *grouptest.Context, id string) group.Member {
	t.Helper()
	m := c.Group.Members[id]
	if m == nil {
		t.Fatalf("no record for %s", id)
	}
	return *m
}

// expectUnchanged fails when the record of id differs from before.
func expectUnchanged(t *testing.T, c *grouptest.Context, id string, before group.Member) {
	t.Helper()
	if after := member(t, c, id); !reflect.DeepEqual(before, after) {
		t.Fatalf("record of %s changed:\nbefore %+v\n after %+v", id, before, after)
	}
}

// expectState fails unless member id is in state st with epoch.
func expectState(t *testing.T, c *grouptest.Context, id string, st group.MemberState, epoch int64) {
	t.Helper()
	m := member(t, c, id)
	if m.State != st || m.MemberEpoch != epoch {
		t.Fatalf("%s is %s epoch %d, want %s epoch %d", id, m.State, m.MemberEpoch, st, epoch)
	}
}

// expectTargets fails unless the targets are exactly want.
func expectTargets(t *testing.T, g *group.Group, want map[string]contract.ShardSet) {
	t.Helper()
	if len(g.Targets) != len(want) {
		t.Fatalf("targets %v, want %v", g.Targets, want)
	}
	for id, set := range want {
		if got, ok := g.Targets[id]; !ok || !got.Equal(set) {
			t.Fatalf("targets %v, want %v", g.Targets, want)
		}
	}
}

// revokeAck builds a heartbeat of id at epoch owning owned and reporting
// revoked as REVOKED/0.
func revokeAck(c *grouptest.Context, id string, epoch int64, owned contract.ShardSet, revoked ...int) contract.HeartbeatRequest {
	hb := c.Member(id, epoch, owned...)
	hb.RevokingShards = grouptest.Revoked(revoked...)
	return hb
}

func ptr[T any](v T) *T { return &v }
