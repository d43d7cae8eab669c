package group_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/grouptest"
)

// keep records a handler's result in the context and returns its answer.
func keep[A any](t *testing.T, c *grouptest.Context, res group.Result[A]) A {
	t.Helper()
	if res.Err != nil {
		t.Fatalf("handler: %v", res.Err)
	}
	c.Records = append(c.Records, res.Records...)
	return res.Answer
}

func pauseReq(shards ...int) contract.PauseRequest {
	return contract.PauseRequest{Shards: shards, RequestedBy: "ops", Reason: "poison"}
}

// targetOf returns the member whose target holds shard s, "" for none.
func targetOf(g *group.Group, s int) string {
	for id, t := range g.Targets {
		if t.Contains(s) {
			return id
		}
	}
	return ""
}

// TestPauseRevokesAndResumeGrants: a paused shard leaves its reader's
// target, is revoked through the heartbeat and granted to nobody; resuming
// grants it again. The pause is in the stored aggregate (Meta) and the
// views, and breaks no invariant.
func TestPauseRevokesAndResumeGrants(t *testing.T) {
	c := stableAB(t) // A{0,1} B{2,3}, epoch 3
	v := keep(t, c, c.Group.Pause(c.Now, c.Settings, pauseReq(1)))
	if !v.PausedShards.Equal(shards(1)) || !v.Pausing["A"].Equal(shards(1)) {
		t.Fatalf("pause view %+v", v)
	}
	if owner := targetOf(c.Group, 1); owner != "" {
		t.Fatalf("paused shard 1 is in %s's target", owner)
	}
	c.Check()
	expect(t, c.Heartbeat(c.Member("A", 3, 0, 1)), contract.StatusOK, 4, shards(0), nil)
	hb := c.Member("A", 4, 0)
	hb.RevokingShards = grouptest.Revoked(1)
	c.Heartbeat(hb)
	expect(t, c.Heartbeat(c.Member("B", 3, 2, 3)), contract.StatusOK, 4, shards(2, 3), nil)
	if len(c.Group.PausedView().Pausing) != 0 {
		t.Fatalf("still pausing: %+v", c.Group.PausedView())
	}
	if !c.Group.View().PausedShards.Equal(shards(1)) || !c.Group.Assignments().PausedShards.Equal(shards(1)) {
		t.Fatal("views do not show the paused shard")
	}
	if st := c.Group.Stats(); st.Paused != 1 || st.Violations != 0 {
		t.Fatalf("stats %+v", st)
	}
	c.Check()

	// A new member gets no paused shard either.
	c.Join("C")
	if owner := targetOf(c.Group, 1); owner != "" {
		t.Fatalf("paused shard 1 went to %s", owner)
	}
	c.Leave("C")

	keep(t, c, c.Group.Resume(c.Now, c.Settings, pauseReq(1)))
	if owner := targetOf(c.Group, 1); owner == "" {
		t.Fatal("resumed shard 1 has no target owner")
	}
	c.Check()
	if len(c.Group.PausedShards) != 0 || c.Group.Stats().Paused != 0 {
		t.Fatalf("paused after resume: %v", c.Group.PausedShards)
	}
}

// TestPauseRefusals: who and why are required, shards must exist, and
// pausing twice changes nothing.
func TestPauseRefusals(t *testing.T) {
	c := stableAB(t)
	for _, req := range []contract.PauseRequest{
		{Shards: []int{1}},
		{Shards: nil, RequestedBy: "ops"},
		{Shards: []int{4}, RequestedBy: "ops"},
		{Shards: []int{-1}, RequestedBy: "ops"},
	} {
		var e *group.Error
		if res := c.Group.Pause(c.Now, c.Settings, req); !errors.As(res.Err, &e) || e.Code != contract.CodeInvalidRequest {
			t.Errorf("%+v: %v", req, res.Err)
		}
	}
	keep(t, c, c.Group.Pause(c.Now, c.Settings, pauseReq(2)))
	if res := c.Group.Pause(c.Now, c.Settings, pauseReq(2)); len(res.Records) != 0 {
		t.Fatalf("pausing a paused shard wrote %d records", len(res.Records))
	}
}

// TestLiveResetStates drives a live reset through every state: PAUSING
// while a member holds a shard, APPLYING once it released it, DONE with the
// positions after, the shards granted again; a second reset while one is
// active is refused; FAILED also grants the shards again and keeps the
// operator's own pause.
func TestLiveResetStates(t *testing.T) {
	c := stableAB(t) // A{0,1} B{2,3}
	req := group.ResetRequest{Target: group.ResetTarget{To: "EARLIEST"}, Shards: []int{2}, RequestedBy: "ops"}
	r := keep(t, c, c.Group.StartReset(c.Now, c.Settings, req, "reset-1"))
	if r.State != contract.ResetPausing || len(r.Shards) != 1 || !slices.Equal(r.Shards[0].PausedFrom, []string{"B"}) {
		t.Fatalf("started %+v", r)
	}
	if _, step := c.Group.ResetStep(); step != group.ResetWait {
		t.Fatalf("step %v while B holds shard 2", step)
	}
	if res := c.Group.StartReset(c.Now, c.Settings, req, "reset-2"); !isCode(res.Err, contract.CodeResetInProgress) {
		t.Fatalf("second reset: %v", res.Err)
	}
	if res := c.Group.BeginApply(c.Now, c.Settings, "reset-1", nil); res.Err == nil {
		t.Fatal("APPLYING with the wrong number of plans")
	}
	c.Check()
	c.Advance(500)
	expect(t, c.Heartbeat(c.Member("B", 3, 2, 3)), contract.StatusOK, 4, shards(3), nil)
	hb := c.Member("B", 4, 3)
	hb.RevokingShards = grouptest.Revoked(2)
	c.Heartbeat(hb)
	if _, step := c.Group.ResetStep(); step != group.ResetPlan {
		t.Fatalf("step %v once shard 2 is released", step)
	}
	id, before := "0", "5-1"
	r = keep(t, c, c.Group.BeginApply(c.Now, c.Settings, "reset-1",
		[]group.ShardReset{{SetID: id, Before: &contract.GroupPosition{LastDeliveredID: &before}}}))
	if r.State != contract.ResetApplying || r.ApplyingAt != c.Now || r.Shards[0].SetID != "0" {
		t.Fatalf("applying %+v", r)
	}
	if _, step := c.Group.ResetStep(); step != group.ResetApply {
		t.Fatalf("step %v in APPLYING", step)
	}
	if owner := targetOf(c.Group, 2); owner != "" {
		t.Fatalf("shard 2 granted to %s while APPLYING", owner)
	}
	c.Check()
	c.Advance(100)
	r = keep(t, c, c.Group.FinishReset(c.Now, c.Settings, "reset-1", []*contract.GroupPosition{{LastDeliveredID: &id}}))
	if r.State != contract.ResetDone || *r.Shards[0].After.LastDeliveredID != "0" || c.Group.ActiveReset() != nil {
		t.Fatalf("done %+v", r)
	}
	if targetOf(c.Group, 2) == "" {
		t.Fatal("shard 2 not granted again after DONE")
	}
	c.Check()

	// FAILED keeps the operator's pause of the same shard.
	keep(t, c, c.Group.Pause(c.Now, c.Settings, pauseReq(0)))
	keep(t, c, c.Group.StartReset(c.Now, c.Settings, group.ResetRequest{Target: group.ResetTarget{To: "LATEST"}, Shards: []int{0, 3}, RequestedBy: "ops"}, "reset-2"))
	if !c.Group.Paused().Equal(shards(0, 3)) {
		t.Fatalf("paused %v", c.Group.Paused())
	}
	r = keep(t, c, c.Group.FailReset(c.Now, c.Settings, "reset-2", "redis says no"))
	if r.State != contract.ResetFailed || r.Error != "redis says no" || !c.Group.Paused().Equal(shards(0)) {
		t.Fatalf("failed %+v, paused %v", r, c.Group.Paused())
	}
	if got, ok := c.Group.Reset("reset-1"); !ok || got.State != contract.ResetDone {
		t.Fatalf("reset-1 forgotten: %+v", got)
	}
	c.Check()
}

// TestLiveResetKeepsTheLastTen: finished resets beyond MaxKeptResets are
// dropped oldest first.
func TestLiveResetKeepsTheLastTen(t *testing.T) {
	c := stableAB(t)
	for i := range group.MaxKeptResets + 3 {
		id := fmt.Sprintf("reset-%d", i)
		keep(t, c, c.Group.StartReset(c.Now, c.Settings, group.ResetRequest{Target: group.ResetTarget{To: "LATEST"}, Shards: []int{0}, RequestedBy: "ops"}, id))
		keep(t, c, c.Group.FailReset(c.Now, c.Settings, id, "stop"))
	}
	if n := len(c.Group.LiveResets); n != group.MaxKeptResets {
		t.Fatalf("%d resets kept", n)
	}
	if _, ok := c.Group.Reset("reset-2"); ok {
		t.Fatal("reset-2 kept")
	}
	if _, ok := c.Group.Reset("reset-3"); !ok {
		t.Fatal("reset-3 dropped")
	}
}

// TestLiveResetRefusedDuringMigration: shard indexes may change under an
// active migration.
func TestLiveResetRefusedDuringMigration(t *testing.T) {
	c := stableAB(t)
	if _, err := c.StartScale(6); err != nil {
		t.Fatal(err)
	}
	res := c.Group.StartReset(c.Now, c.Settings, group.ResetRequest{Target: group.ResetTarget{To: "LATEST"}, RequestedBy: "ops"}, "r")
	if !isCode(res.Err, contract.CodeActiveMigrationExists) {
		t.Fatalf("reset during a migration: %v", res.Err)
	}
}

func isCode(err error, code contract.Code) bool {
	var e *group.Error
	return errors.As(err, &e) && e.Code == code
}

// TestPausedShardsNeverTargeted: whatever members join and leave and
// whatever is paused, the targets are disjoint, cover exactly the shards
// that are not paused, and stay balanced (the invariants hold).
func TestPausedShardsNeverTargeted(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(1, 16).Draw(rt, "shards")
		c := grouptest.New(rt, n)
		for step := range rapid.IntRange(1, 30).Draw(rt, "steps") {
			c.Advance(100)
			switch rapid.IntRange(0, 3).Draw(rt, "op") {
			case 0:
				c.Join(fmt.Sprintf("m%d", rapid.IntRange(0, 4).Draw(rt, "member")))
			case 1:
				if ids := c.Group.LiveMemberIDs(); len(ids) > 0 {
					c.Leave(ids[rapid.IntRange(0, len(ids)-1).Draw(rt, "leaver")])
				}
			case 2:
				s := rapid.IntRange(0, n-1).Draw(rt, "pause")
				res := c.Group.Pause(c.Now, c.Settings, pauseReq(s))
				c.Records = append(c.Records, res.Records...)
			case 3:
				s := rapid.IntRange(0, n-1).Draw(rt, "resume")
				res := c.Group.Resume(c.Now, c.Settings, pauseReq(s))
				c.Records = append(c.Records, res.Records...)
			}
			paused := c.Group.Paused()
			var all contract.ShardSet
			sizes := []int{}
			for _, id := range c.Group.LiveMemberIDs() {
				tg := c.Group.Targets[id]
				if len(all.Intersect(tg)) > 0 {
					rt.Fatalf("step %d: overlapping targets %v", step, c.Group.Targets)
				}
				all = all.Union(tg)
				sizes = append(sizes, len(tg))
			}
			if len(sizes) > 0 {
				if !all.Equal(contract.Range(0, n).Minus(paused)) {
					rt.Fatalf("step %d: targets cover %v, paused %v", step, all, paused)
				}
				if slices.Max(sizes)-slices.Min(sizes) > 1 {
					rt.Fatalf("step %d: unbalanced %v", step, sizes)
				}
			}
			if err := grouptest.CheckGroup(c.Group, c.Records); err != nil {
				rt.Fatalf("step %d: %v", step, err)
			}
		}
	})
}
