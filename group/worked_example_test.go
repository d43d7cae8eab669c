package group_test

import (
	"testing"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/grouptest"
)

func shards(s ...int) contract.ShardSet { return contract.NewShardSet(s...) }

func expect(t *testing.T, resp contract.HeartbeatResponse, status contract.HeartbeatStatus, epoch int64, assigned, pending contract.ShardSet) {
	t.Helper()
	if resp.Status != status || resp.MemberEpoch != epoch ||
		!resp.Assignment.AssignedShards.Equal(assigned) || !resp.Assignment.PendingShards.Equal(pending) {
		t.Fatalf("got %s epoch %d assigned %v pending %v; want %s epoch %d assigned %v pending %v",
			resp.Status, resp.MemberEpoch, resp.Assignment.AssignedShards, resp.Assignment.PendingShards,
			status, epoch, assigned, pending)
	}
}

// TestWorkedExample replays docs/protocol.md §4.7 step by step.
func TestWorkedExample(t *testing.T) {
	c := grouptest.New(t, 4)
	g := c.Group
	if g.GroupEpoch != 1 || g.AssignmentEpoch != 1 || g.MetadataVersion != 1 || g.State != group.GroupEmpty {
		t.Fatalf("after create: %+v", g.Meta)
	}
	// A joins.
	r := c.Heartbeat(c.Member("A", 0))
	expect(t, r, contract.StatusOK, 2, shards(0, 1, 2, 3), nil)
	if r.GroupEpoch != 2 || r.MetadataVersion != 2 {
		t.Fatalf("versions after A joins: %+v", r)
	}
	// A acks.
	r = c.Heartbeat(c.Member("A", 2, 0, 1, 2, 3))
	expect(t, r, contract.StatusOK, 2, shards(0, 1, 2, 3), nil)
	if g.State != group.GroupStable {
		t.Fatalf("state %s, want STABLE", g.State)
	}
	// B joins: A{0,1} B{2,3}; B pending.
	c.Advance(1000)
	r = c.Heartbeat(c.Member("B", 0))
	expect(t, r, contract.StatusOK, 3, nil, shards(2, 3))
	if g.MetadataVersion != 3 || !g.Targets["A"].Equal(shards(0, 1)) || !g.Targets["B"].Equal(shards(2, 3)) {
		t.Fatalf("targets %v", g.Targets)
	}
	// A at epoch 2 still owning everything → epoch 3 assigned {0,1}. A's
	// 60 s deadline starts now that it is told (docs/protocol.md §4.7 starts it at B's
	// join; see docs/protocol.md, Deviations from the protocol).
	r = c.Heartbeat(c.Member("A", 2, 0, 1, 2, 3))
	expect(t, r, contract.StatusOK, 3, shards(0, 1), nil)
	if g.Members["A"].RebalanceDeadlineAt != c.Now.Add(60_000_000_000) {
		t.Fatalf("A deadline %v", g.Members["A"].RebalanceDeadlineAt)
	}
	// A revokes 2,3 → deadline cleared.
	hb := c.Member("A", 3, 0, 1)
	hb.RevokingShards = grouptest.Revoked(2, 3)
	r = c.Heartbeat(hb)
	expect(t, r, contract.StatusOK, 3, shards(0, 1), nil)
	if g.Members["A"].RebalanceDeadlineAt != 0 {
		t.Fatalf("A deadline not cleared")
	}
	// B gets 2,3.
	r = c.Heartbeat(c.Member("B", 3))
	expect(t, r, contract.StatusOK, 3, shards(2, 3), nil)
	r = c.Heartbeat(c.Member("B", 3, 2, 3))
	expect(t, r, contract.StatusOK, 3, shards(2, 3), nil)
	if g.State != group.GroupStable {
		t.Fatalf("state %s", g.State)
	}
	if v := g.Violations(); len(v) != 0 {
		t.Fatalf("violations %v", v)
	}
	replayed := c.Replay()
	if replayed.View().GroupEpoch != g.GroupEpoch || len(replayed.Members) != 2 {
		t.Fatalf("replay differs")
	}
}
