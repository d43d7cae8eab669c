package group_test

import (
	"fmt"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/group/assignor"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/grouptest"
)

// newWorkContext creates a group of shards shards assigned by work.
func newWorkContext(t grouptest.TB, shards int) *grouptest.Context {
	t.Helper()
	c := &grouptest.Context{T: t, Now: grouptest.Start, Settings: group.DefaultSettings(), Group: group.New()}
	work := group.AssignorWork
	res := c.Group.Create(c.Now, c.Settings, group.Key{StreamPrefix: "orders", ConsumerGroup: "orders-consumer"},
		contract.CreateRequest{InitialShardCount: &shards, RequestedBy: "test", Assignor: &work})
	if res.Err != nil {
		t.Fatalf("create: %v", res.Err)
	}
	c.Records = append(c.Records, res.Records...)
	return c
}

// rebalance runs one measuring interval on c.
func rebalance(c *grouptest.Context, m group.Measure) contract.WorkView {
	res := c.Group.Rebalance(c.Now, c.Settings, m)
	c.Records = append(c.Records, res.Records...)
	return res.Answer
}

// rates returns a measure where every shard produces rate entries/s,
// the hot ones 10 times as much, without backlog.
func rates(shards int, rate float64, hot ...int) group.Measure {
	m := group.Measure{Shards: make([]group.ShardMeasure, shards)}
	for s := range m.Shards {
		r, zero := rate, int64(0)
		for _, h := range hot {
			if h == s {
				r = 10 * rate
			}
		}
		m.Shards[s] = group.ShardMeasure{Shard: s, Rate: &r, Lag: &zero, Pending: &zero}
	}
	return m
}

func TestCreateAssignor(t *testing.T) {
	c := newWorkContext(t, 8)
	if g := c.Group; g.Assignor != group.AssignorWork || g.View().Assignor != "work" || g.Assignments().Assignor != "work" {
		t.Fatalf("assignor %q, view %q", g.Assignor, g.View().Assignor)
	}
	count := grouptest.New(t, 8)
	if v := c.Group.View(); v.Work == nil || v.Work.Assignor != "work" || len(v.Work.MemberLoads) != 0 {
		t.Fatalf("work group view %+v", v.Work)
	}
	if g := count.Group; g.Assignor != "" || g.View().Assignor != "count" || g.View().Work != nil {
		t.Fatalf("default assignor %q, view %q", g.Assignor, g.View().Assignor)
	}
	s := group.DefaultSettings()
	s.DefaultAssignor = group.AssignorWork
	g := group.New()
	if res := g.Create(grouptest.Start, s, group.Key{StreamPrefix: "p", ConsumerGroup: "g"}, contract.CreateRequest{RequestedBy: "test"}); res.Err != nil || g.Assignor != group.AssignorWork {
		t.Fatalf("settings default: %v, assignor %q", res.Err, g.Assignor)
	}
	for _, bad := range []string{"", "weighted", "COUNT"} {
		req := contract.CreateRequest{RequestedBy: "test", Assignor: &bad}
		if err := group.ValidateCreate(&req, s); err == nil {
			t.Fatalf("assignor %q accepted", bad)
		}
	}
}

// TestRebalanceCountGroupChangesNothing: a count group ignores measures.
func TestRebalanceCountGroupChangesNothing(t *testing.T) {
	c := stableAB(t)
	res := c.Group.Rebalance(c.Now, c.Settings, rates(4, 100, 0))
	if len(res.Records) != 0 || res.Answer.Assignor != "count" || res.Answer.ShardWeights != nil {
		t.Fatalf("records %v, answer %+v", res.Records, res.Answer)
	}
}

// workRound lets every client heartbeat once with its capacity and checks
// that no shard is read by two of them.
func workRound(t *testing.T, c *grouptest.Context, cls []*client, capacity []int) {
	t.Helper()
	for i, cl := range cls {
		req := cl.request()
		req.RuntimeConsumerCapacity = &contract.Capacity{RuntimeMaxConcurrency: capacity[i], AvailableConcurrency: capacity[i]}
		cl.handle(req, c.Heartbeat(req), c.Now)
	}
	readers := map[int]string{}
	for _, cl := range cls {
		for _, s := range cl.reading() {
			if other, dup := readers[s]; dup {
				t.Fatalf("shard %d read by %s and %s", s, other, cl.id)
			}
			readers[s] = cl.id
		}
	}
}

// targetOwners maps each shard to its target owner.
func targetOwners(g *group.Group) map[int]string {
	out := map[int]string{}
	for id, set := range g.Targets {
		for _, s := range set {
			out[s] = id
		}
	}
	return out
}

// TestWorkAssignorScenario drives the shape on the fake clock: 64
// shards, 8 members of capacity 1, shards 0, 1, 8 and 9 at ten times the
// rate of the others, measured every 5 s. The members join first (a count-
// like spread: no measure yet); shards move only from the third imbalanced
// interval on, within the move budget, through revoke-before-assign (no
// shard is read twice at any time); the busiest member ends within 10 %
// of the mean, and noisy measures afterwards move nothing.
func TestWorkAssignorScenario(t *testing.T) {
	const shards = 64
	c := newWorkContext(t, shards)
	var cls []*client
	capacity := make([]int, 8)
	for i := range 8 {
		cls = append(cls, newClient(fmt.Sprintf("m%d", i)))
		capacity[i] = 1
	}
	for range 5 {
		workRound(t, c, cls, capacity)
		c.Advance(time.Second)
	}
	c.Check()
	if got := c.Group.WorkView().Imbalance; got > 1.05 {
		t.Fatalf("uniform start imbalance %.2f", got)
	}
	var moves []contract.Instant
	owners := targetOwners(c.Group)
	balancedAt := contract.Instant(0)
	for k := range 120 { // 10 minutes, a measure every 5 s
		m := rates(shards, 100, 0, 1, 8, 9)
		if balancedAt != 0 { // ±3 % noise once balanced
			for s := range m.Shards {
				r := *m.Shards[s].Rate * (1 + 0.03*float64((s*7+k)%3-1))
				m.Shards[s].Rate = &r
			}
		}
		view := rebalance(c, m)
		now := targetOwners(c.Group)
		for s, id := range now {
			if owners[s] != id {
				moves = append(moves, c.Now)
			}
		}
		owners = now
		if k < 2 && len(moves) > 0 {
			t.Fatalf("interval %d moved shards before the hysteresis", k)
		}
		if balancedAt == 0 && view.Imbalance <= 1.10 && k > 2 {
			balancedAt = c.Now
		}
		for range 5 {
			workRound(t, c, cls, capacity)
			c.Advance(time.Second)
		}
	}
	c.Check()
	view := c.Group.WorkView()
	t.Logf("%d moves, balanced %v after the first measure, imbalance %.3f", len(moves), time.Duration(balancedAt-grouptest.Start)*time.Millisecond-5*time.Second, view.Imbalance)
	if balancedAt == 0 || view.Imbalance > 1.10 {
		t.Fatalf("imbalance %.3f at the end (loads %+v)", view.Imbalance, view.MemberLoads)
	}
	if c.Group.State != group.GroupStable {
		t.Fatalf("state %s", c.Group.State)
	}
	for i := range moves {
		n := 0
		for _, at := range moves[i:] {
			if at < moves[i].Add(time.Minute) {
				n++
			}
		}
		if n > assignor.DefaultWorkParams(shards).MovesPerMinute {
			t.Fatalf("%d moves in the minute from %v", n, moves[i])
		}
	}
	for _, at := range moves {
		if at > balancedAt {
			t.Fatalf("a shard moved at %v, after the group was balanced at %v", at, balancedAt)
		}
	}
	for id, l := range view.MemberLoads {
		if l.Capacity != 1 || l.RelativeLoad > 1.10 {
			t.Fatalf("member %s load %+v", id, l)
		}
	}
	if len(view.ShardWeights) != shards || view.ShardWeights[0] < 5*view.ShardWeights[2] {
		t.Fatalf("weights %v", view.ShardWeights)
	}
}

// TestWorkAssignorCapacity: members of capacity 1, 2 and 4 get work in
// proportion once measured.
func TestWorkAssignorCapacity(t *testing.T) {
	c := newWorkContext(t, 64)
	cls := []*client{newClient("a"), newClient("b"), newClient("c")}
	capacity := []int{1, 2, 4}
	for range 3 {
		workRound(t, c, cls, capacity)
		c.Advance(time.Second)
	}
	// The join settles with uniform weights, by capacity.
	if got := c.Group.WorkView().Imbalance; got > 1.10 {
		t.Fatalf("imbalance after joins %.2f (%+v)", got, c.Group.WorkView().MemberLoads)
	}
	for range 60 {
		rebalance(c, rates(64, 50, 5, 6, 7, 30))
		for range 5 {
			workRound(t, c, cls, capacity)
			c.Advance(time.Second)
		}
	}
	c.Check()
	if v := c.Group.WorkView(); v.Imbalance > 1.10 {
		t.Fatalf("imbalance %.2f (%+v)", v.Imbalance, v.MemberLoads)
	}
}

// TestProperty_WorkAssignor runs the protocol property world (random
// joins, leaves, crashes, pauses, restarts, lost and stale requests,
// scales; half the runs also on a rebuilt clone, which must answer and
// change alike) on a group assigned by work, with random measures in between:
// after every step no shard is read by two processes, versions never go
// back, assignmentEpoch equals groupEpoch, there is no invariant violation
// and a replay of the records gives the same group. Then the running
// processes converge: STABLE, each reading its target, the targets a
// partition of the shards.
func TestProperty_WorkAssignor(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		members := rapid.IntRange(2, 8).Draw(t, "members")
		shardCount := rapid.IntRange(1, 24).Draw(t, "shards")
		w := newWorld(t, members, shardCount, rapid.Bool().Draw(t, "diff"), rapid.Bool().Draw(t, "scale"))
		w.c = newWorkContext(t, shardCount)
		w.c.Settings = settingsLike(w.c.Settings, w)
		w.last = versionsOf(w.c.Group)
		for range rapid.IntRange(1, 200).Draw(t, "steps") {
			if rapid.IntRange(0, 5).Draw(t, "measure") == 0 {
				w.measure()
			} else {
				w.step()
			}
		}
		w.converge()
	})
	logStats(t)
}

// settingsLike returns s with the timing settings newWorld drew.
func settingsLike(s group.Settings, w *world) group.Settings {
	s.MemberLeaseTTL, s.RebalanceTimeout = w.c.Settings.MemberLeaseTTL, w.c.Settings.RebalanceTimeout
	return s
}

// measure runs a rebalance with random rates and backlogs (on the clone
// too in the differential mode).
func (w *world) measure() {
	g := w.c.Group
	m := group.Measure{}
	for s := range g.ShardCount {
		rate := float64(rapid.IntRange(0, 1000).Draw(w.t, "rate"))
		lag := int64(rapid.IntRange(0, 10000).Draw(w.t, "lag"))
		m.Shards = append(m.Shards, group.ShardMeasure{Shard: s, Rate: &rate, Lag: &lag})
	}
	cl := w.clone()
	res := w.c.Group.Rebalance(w.c.Now, w.c.Settings, m)
	w.c.Records = append(w.c.Records, res.Records...)
	if cl != nil {
		res2 := cl.Rebalance(w.c.Now, w.c.Settings, m)
		w.compare(cl, "measure", res.Answer, res2.Answer, res.Records, res2.Records)
	}
	v := res.Answer
	stats["measure"]++
	w.logf("measure → imbalance %.2f (G=%d)", v.Imbalance, w.c.Group.GroupEpoch)
	w.check()
}

// converge lets every process heartbeat once a second until nothing but
// liveness changes for three rounds, then checks the group is STABLE, each
// running process reads its target and the targets partition the shards.
func (w *world) converge() {
	for _, id := range w.ids {
		if w.procs[id] == procPaused {
			w.procs[id] = procRunning
		}
	}
	quiet := 0
	for round := 0; round < 300 && quiet < 3; round++ {
		w.c.Now += 1000
		w.lapse()
		v := versionsOf(w.c.Group)
		w.beatAll()
		for _, id := range w.ids {
			if w.procs[id] == procRunning {
				w.cls[id].finishDrain()
			}
		}
		w.tick()
		w.confirmDrain()
		w.check()
		if versionsOf(w.c.Group) == v && w.c.Group.State != group.GroupReconciling && len(w.c.Group.LiveMemberIDs()) == w.running() {
			quiet++
		} else {
			quiet = 0
		}
	}
	g := w.c.Group
	if len(g.LiveMemberIDs()) > 0 && g.State != group.GroupStable {
		w.fail("after converging: state %s, targets %v", g.State, g.Targets)
	}
	owners := map[int]string{}
	for _, id := range g.LiveMemberIDs() {
		for _, s := range g.Targets[id] {
			if o, dup := owners[s]; dup {
				w.fail("shard %d targeted by %s and %s", s, o, id)
			}
			owners[s] = id
		}
		if !w.cls[id].reading().Equal(g.Targets[id]) {
			w.fail("%s reads %v, target %v", id, w.cls[id].reading(), g.Targets[id])
		}
	}
	if len(g.LiveMemberIDs()) > 0 && len(owners) != g.ShardCount-len(g.Paused().Below(g.ShardCount)) {
		w.fail("targets %v do not cover %d shards", g.Targets, g.ShardCount)
	}
}

// running counts the running processes.
func (w *world) running() int {
	n := 0
	for _, id := range w.ids {
		if w.procs[id] == procRunning {
			n++
		}
	}
	return n
}
