package group_test

import (
	"testing"
	"time"

	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/group/grouptest"
)

// TestBug_… tests document bugs found against PROTOCOL.md. They fail until
// the domain code is fixed; each comment names the rule, the input, the
// expected and the actual outcome.

// TestBug_StaleRebalanceDeadlineSurvivesJoinReplay:
//
// §4.6 rebalance timeout: "for each live owner release = (current ∪ revoking)
// − target; non-empty without deadline → deadline = now + timeout; empty →
// clear". It runs in step 11 of every accepted heartbeat and on every tick
// (§4.2, §7), for every owner.
//
// Input: b owns 0–3 alone; a joins at t0 (targets a{2,3} b{0,1}) and b is
// stuck draining 2,3, so b's deadline is t0+60s. At t0+58s b's process
// restarts and sends epoch 0 with nothing (improvement 8b): the record is
// cleared, b holds only its target. At t0+58.5s a heartbeats and a tick
// runs: b's release is empty, so its deadline must be cleared. At t0+59s c
// joins and b must give up shard 1: a fresh deadline t0+119s.
//
// Expected: b's deadline cleared at t0+58.5s; b still ACTIVE at t0+60s.
// Actual: the join replay keeps rebalanceDeadlineAt, and the incremental
// deadline bound (index.nextDeadlineAt = t0+60s) makes enforceTimeouts skip
// b on the other member's heartbeat and on Tick, so the stale deadline stays;
// c's join then sees b's new release with the old deadline and b is FENCED
// at t0+60s, one second after it was asked to release shard 1. A clone of
// the group (index rebuilt) clears the deadline on the same Tick, so the two
// copies diverge.
func TestBug_StaleRebalanceDeadlineSurvivesJoinReplay(t *testing.T) {
	c := grouptest.New(t, 4)
	b, a := newClient("b"), newClient("a")
	b.beat(c)
	b.beat(c)
	c.Advance(time.Second)
	t0 := c.Now
	a.beat(c)
	expectTargets(t, c.Group, map[string]group.ShardSet{"a": shards(2, 3), "b": shards(0, 1)})
	// b is stuck: it keeps reading 2,3 and reports them draining.
	for c.Now < t0.Add(55*time.Second) {
		c.Advance(5 * time.Second)
		hb := c.Member("b", member(t, c, "b").MemberEpoch, 0, 1)
		hb.RevokingShards = grouptest.Draining(2, 3)
		expect(t, c.Heartbeat(hb), group.StatusOK, c.Group.AssignmentEpoch, shards(0, 1), nil)
		a.beat(c)
	}
	if d := member(t, c, "b").RebalanceDeadlineAt; d != t0.Add(c.Settings.RebalanceTimeout) {
		t.Fatalf("b's deadline %v, want t0+60s", d)
	}
	// b restarts at t0+58s.
	c.Now = t0.Add(58 * time.Second)
	b.restart()
	expect(t, b.beat(c), group.StatusOK, member(t, c, "b").MemberEpoch, shards(0, 1), nil)
	// t0+58.5s: a heartbeats (and reads 2,3), a tick runs.
	c.Now = t0.Add(58500 * time.Millisecond)
	a.beat(c)
	clone := c.Group.Clone()
	c.Tick()
	clone.Tick(c.Now, c.Settings)
	if err := grouptest.SameGroup(c.Group, clone); err != nil {
		t.Errorf("a clone behaves differently on Tick: %v", err)
	}
	if d := member(t, c, "b").RebalanceDeadlineAt; d != 0 {
		t.Errorf("b released everything outside its target but keeps the deadline %v (t0+%v)", d, time.Duration(d-t0)*time.Millisecond)
	}
	// t0+59s: c joins; b must release shard 1.
	c.Now = t0.Add(59 * time.Second)
	cc := newClient("c")
	cc.beat(c)
	expectTargets(t, c.Group, map[string]group.ShardSet{"a": shards(2, 3), "b": shards(0), "c": shards(1)})
	// t0+60s: b had one second; it must not be fenced yet.
	c.Now = t0.Add(60 * time.Second)
	c.Tick()
	if m := member(t, c, "b"); m.State != group.MemberActive {
		t.Errorf("b is %s at t0+60s: fenced by the deadline of a release it finished at t0+58s", m.State)
	}
	c.Check()
}
