package actors

import (
	"testing"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/eventually"
)

// skewedMeasure is a measure of shards shards where shard 0 produces 100
// entries/s and the others 1.
func skewedMeasure(shards int) group.Measure {
	m := group.Measure{}
	for s := range shards {
		rate := 1.0
		if s == 0 {
			rate = 100
		}
		m.Shards = append(m.Shards, group.ShardMeasure{Shard: s, Rate: &rate})
	}
	return m
}

// TestRebalanceReachesWorkGroups: a measure sent to a group assigned by
// work is stored in its memory (the assignments view shows the weights),
// and after the hysteresis its targets follow the work; a group assigned by
// count ignores measures.
func TestRebalanceReachesWorkGroups(t *testing.T) {
	c := start(t, Options{Store: newTestStore(), GroupCommit: true})
	work := group.AssignorWork
	if _, err := c.CreateGroup(testCtx(t), billing, contract.CreateRequest{RequestedBy: "test", Assignor: &work}, false); err != nil {
		t.Fatalf("create: %v", err)
	}
	createGroup(t, c, orders)
	for _, key := range []group.Key{billing, orders} {
		for _, id := range []string{"m-a", "m-b"} {
			resp := heartbeat(t, c, key, join(id))
			heartbeat(t, c, key, next(id, resp))
		}
	}
	for range 3 { // the third imbalanced interval moves shards
		for _, key := range []group.Key{billing, orders} {
			if err := c.Rebalance(key, skewedMeasure(4)); err != nil {
				t.Fatalf("rebalance: %v", err)
			}
		}
	}
	eventually.True(t, "the work group's targets follow the work", func() bool {
		v, err := c.Assignments(testCtx(t), billing)
		if err != nil || len(v.ShardWeights) != 4 {
			return false
		}
		// Shard 0 weighs as much as the three others together: it ends
		// alone on one member.
		for _, set := range v.TargetAssignment {
			if set.Contains(0) {
				return len(set) == 1
			}
		}
		return false
	})
	v, err := c.Assignments(testCtx(t), orders)
	if err != nil {
		t.Fatal(err)
	}
	if v.Assignor != group.AssignorCount || v.ShardWeights != nil || len(v.TargetAssignment["m-a"]) != 2 {
		t.Fatalf("count group: %+v", v)
	}
}
