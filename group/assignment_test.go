package group_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/grouptest"
)

// Tests of docs/protocol.md §5 sticky assignment as seen through the heartbeat, and §13.2.

// checkTargets fails unless the targets of the live members are disjoint,
// cover 0..shardCount-1 and are balanced within one shard.
func checkTargets(t *testing.T, g *group.Group) {
	t.Helper()
	if err := targetsProblem(g); err != nil {
		t.Fatal(err)
	}
}

func targetsProblem(g *group.Group) error {
	live := g.LiveMemberIDs()
	if len(live) == 0 {
		if len(g.Targets) != 0 {
			return fmt.Errorf("targets without live members: %v", g.Targets)
		}
		return nil
	}
	if len(g.Targets) != len(live) {
		return fmt.Errorf("targets %v for live %v", g.Targets, live)
	}
	seen := map[int]string{}
	lo, hi := g.ShardCount, 0
	for _, id := range live {
		set, ok := g.Targets[id]
		if !ok {
			return fmt.Errorf("live %s has no target entry: %v", id, g.Targets)
		}
		lo, hi = min(lo, len(set)), max(hi, len(set))
		for _, s := range set {
			if s < 0 || s >= g.ShardCount {
				return fmt.Errorf("%s targets shard %d of %d", id, s, g.ShardCount)
			}
			if o, dup := seen[s]; dup {
				return fmt.Errorf("shard %d targeted by %s and %s", s, o, id)
			}
			seen[s] = id
		}
	}
	if len(seen) != g.ShardCount {
		return fmt.Errorf("targets %v do not cover %d shards", g.Targets, g.ShardCount)
	}
	if hi-lo > 1 {
		return fmt.Errorf("targets unbalanced: %v", g.Targets)
	}
	return nil
}

func TestAssign_FirstMemberGetsEverything(t *testing.T) {
	for _, n := range []int{1, 4, 24} {
		c := grouptest.New(t, n)
		expect(t, c.Join("A"), contract.StatusOK, 2, contract.Range(0, n), nil)
		checkTargets(t, c.Group)
	}
}

// The docs/protocol.md §5 example: 6 shards, joins a, b, c, then b expires.
func TestAssign_SixShardExample(t *testing.T) {
	c := grouptest.New(t, 6)
	cls := map[string]*client{}
	settle := func() {
		for i := 0; i < 4; i++ {
			for _, id := range []string{"a", "b", "c"} {
				if cl := cls[id]; cl != nil {
					cl.beat(c)
				}
			}
		}
	}
	cls["a"] = newClient("a")
	settle()
	expectTargets(t, c.Group, map[string]contract.ShardSet{"a": contract.Range(0, 6)})
	cls["b"] = newClient("b")
	settle()
	expectTargets(t, c.Group, map[string]contract.ShardSet{"a": shards(0, 1, 2), "b": shards(3, 4, 5)})
	cls["c"] = newClient("c")
	settle()
	expectTargets(t, c.Group, map[string]contract.ShardSet{"a": shards(0, 1), "b": shards(3, 4), "c": shards(2, 5)})
	if c.Group.State != group.GroupStable {
		t.Fatalf("state %s", c.Group.State)
	}
	delete(cls, "b")
	c.Advance(6 * time.Second)
	settle()
	c.Advance(6 * time.Second)
	settle()
	expectState(t, c, "b", group.MemberExpired, member(t, c, "b").MemberEpoch)
	expectTargets(t, c.Group, map[string]contract.ShardSet{"a": shards(0, 1, 3), "c": shards(2, 4, 5)})
	if c.Group.State != group.GroupStable || !cls["a"].owned().Equal(shards(0, 1, 3)) || !cls["c"].owned().Equal(shards(2, 4, 5)) {
		t.Fatalf("state %s, a reads %v, c reads %v", c.Group.State, cls["a"].owned(), cls["c"].owned())
	}
	c.Check()
}

// docs/protocol.md §13.2: joiners wait in pending until the previous owner released; targets
// stay balanced and duplicate-free for every shard/member count.
func TestAssign_JoinersPendingBalancedDuplicateFree(t *testing.T) {
	for n := 1; n <= 12; n++ {
		for k := 1; k <= 5; k++ {
			t.Run(fmt.Sprintf("%d shards %d members", n, k), func(t *testing.T) {
				c := grouptest.New(t, n)
				var cls []*client
				for i := 0; i < k; i++ {
					cl := newClient(fmt.Sprintf("m%d", i))
					cls = append(cls, cl)
					resp := cl.beat(c)
					// A joiner gets only shards nobody else holds.
					for _, s := range resp.Assignment.AssignedShards {
						for _, o := range cls[:i] {
							if o.owned().Contains(s) {
								t.Fatalf("%s assigned %d read by %s", cl.id, s, o.id)
							}
						}
					}
					checkTargets(t, c.Group)
					c.Check()
					for r := 0; r < 3; r++ {
						for _, o := range cls {
							o.beat(c)
						}
					}
				}
				if c.Group.State != group.GroupStable {
					t.Fatalf("state %s", c.Group.State)
				}
				for _, cl := range cls {
					if !cl.owned().Equal(c.Group.Targets[cl.id]) {
						t.Fatalf("%s reads %v, target %v", cl.id, cl.owned(), c.Group.Targets[cl.id])
					}
				}
			})
		}
	}
}

// Improvement 4: the Kotlin stall (12→6 shards over a{0,1,2} b{3,4,5}
// c{6,7,8} d{9,10,11} ending at a{0,1,2} b{3,4,5} c{} d{}) must not happen.
func TestAssign_NoBalancingStallOnScaleIn(t *testing.T) {
	c := grouptest.New(t, 12)
	var cls []*client
	for _, id := range []string{"a", "b", "c", "d"} {
		cls = append(cls, newClient(id))
	}
	for r := 0; r < 4; r++ {
		for _, cl := range cls {
			cl.beat(c)
		}
	}
	checkTargets(t, c.Group) // 3 shards each (the exact sets differ from Kotlin's)
	c.Scale(6)
	checkTargets(t, c.Group)
	if len(c.Group.Targets["c"]) == 0 || len(c.Group.Targets["d"]) == 0 {
		t.Fatalf("stall reproduced: %v", c.Group.Targets)
	}
	c.Check()
}
