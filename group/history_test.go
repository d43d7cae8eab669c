package group_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/grouptest"
)

// historyText renders history entries as "shard from>to cause@epoch".
func historyText(cs []group.Change) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = fmt.Sprintf("%d %s>%s %s@%d", c.Shard, c.From, c.To, c.Cause.Name(), c.Epoch)
	}
	return out
}

// expectHistory fails unless the entries after the first n are want.
func expectHistory(t *testing.T, c *grouptest.Context, n int, want ...string) {
	t.Helper()
	if got := historyText(c.Group.History[n:]); !slices.Equal(got, want) {
		t.Fatalf("history after entry %d: %q, want %q", n, got, want)
	}
}

// explainsTargets returns an error unless the history explains the
// targets: every entry names a cause, epochs never go back, and the last
// entry of each shard names its target owner (a shard without entries
// has none, unless the history is at its bound).
func explainsTargets(g *group.Group) error {
	last := map[int]string{}
	var epoch int64
	for _, c := range g.History {
		if c.GroupLevel() {
			continue
		}
		if c.Cause.Name() == "" {
			return fmt.Errorf("entry without a cause: %+v", c)
		}
		if c.Epoch < epoch {
			return fmt.Errorf("epoch back from %d: %+v", epoch, c)
		}
		epoch = c.Epoch
		last[int(c.Shard)] = c.To
	}
	owners := map[int]string{}
	for id, set := range g.Targets {
		for _, s := range set {
			owners[s] = id
		}
	}
	// A history at its bound may have dropped a shard's only entries: a
	// shard without one then says nothing.
	full := len(g.History) >= group.DefaultHistoryMaxEntries
	for s := range g.ShardCount {
		if _, seen := last[s]; !seen && full {
			continue
		}
		if last[s] != owners[s] {
			return fmt.Errorf("shard %d: history ends with %q, target owner %q (history %q)", s, last[s], owners[s], historyText(g.History))
		}
	}
	for s, to := range last {
		if to != owners[s] {
			return fmt.Errorf("shard %d: history ends with %q, target owner %q", s, to, owners[s])
		}
	}
	return nil
}

// A join assigns shards (from nobody, then from the members that had
// them), a leave hands them back; each entry is stamped with the
// handler's time and the group epoch of the reassignment.
func TestHistoryJoinAndLeave(t *testing.T) {
	c := stableAB(t) // A joined (epoch 2), then B (epoch 3)
	expectHistory(t, c, 0, "0 >A join@2", "1 >A join@2", "2 >A join@2", "3 >A join@2", "2 A>B join@3", "3 A>B join@3")
	n := len(c.Group.History)
	c.Advance(time.Second)
	c.Leave("B", grouptest.Revoked(2, 3)...)
	expectHistory(t, c, n, "2 B>A leave@4", "3 B>A leave@4")
	if h := c.Group.History; h[0].At != grouptest.Start || h[n].At != grouptest.Start.Add(time.Second) || h[n].Work != nil {
		t.Fatalf("entries %+v", h)
	}
	if err := explainsTargets(c.Group); err != nil {
		t.Fatal(err)
	}
	c.Check()
}

// A member whose lease runs out loses its shards: lease-expired.
func TestHistoryLeaseExpired(t *testing.T) {
	c := stableAB(t)
	n := len(c.Group.History)
	c.Advance(c.Settings.MemberLeaseTTL / 2)
	c.Heartbeat(c.Member("A", 3, 0, 1))
	c.Advance(c.Settings.MemberLeaseTTL/2 + time.Second)
	c.Tick()
	expectState(t, c, "B", group.MemberExpired, 4)
	expectHistory(t, c, n, "2 B>A lease-expired@4", "3 B>A lease-expired@4")
	c.Check()
}

// A member fenced for an invalid report, or for not releasing a shard
// within the rebalance timeout, loses its shards: fenced.
func TestHistoryFenced(t *testing.T) {
	t.Run("invalid report", func(t *testing.T) {
		c := stableAB(t)
		n := len(c.Group.History)
		expectFenced(t, c, "A", c.Heartbeat(c.Member("A", 3, 0, 1, 2)))
		expectHistory(t, c, n, "0 A>B fenced@4", "1 A>B fenced@4")
		c.Check()
	})
	t.Run("rebalance timeout", func(t *testing.T) {
		c := grouptest.New(t, 4)
		c.Settings.MemberLeaseTTL = 5 * time.Minute
		c.Join("A")
		c.Heartbeat(c.Member("A", 2, 0, 1, 2, 3))
		c.Join("B") // A must release 2 and 3
		c.Heartbeat(c.Member("A", 2, 0, 1, 2, 3))
		c.Heartbeat(c.Member("B", 3))
		n := len(c.Group.History)
		c.Advance(c.Settings.RebalanceTimeout + time.Second)
		c.Tick()
		expectState(t, c, "A", group.MemberFenced, 4)
		expectHistory(t, c, n, "0 A>B fenced@4", "1 A>B fenced@4")
		c.Check()
	})
}

// Pausing a shard takes it from its owner to nobody, resuming gives it
// back: pause and resume.
func TestHistoryPauseAndResume(t *testing.T) {
	c := stableAB(t)
	n := len(c.Group.History)
	keep(t, c, c.Group.Pause(c.Now, c.Settings, pauseReq(1)))
	expectHistory(t, c, n, "1 A> pause@4")
	keep(t, c, c.Group.Pause(c.Now, c.Settings, pauseReq(1))) // already paused: no change, no entry
	keep(t, c, c.Group.Resume(c.Now, c.Settings, pauseReq(1)))
	expectHistory(t, c, n, "1 A> pause@4", "1 >A resume@5")
	c.Check()
}

// A live reset pauses its shards and grants them again when it ends:
// live-reset, both ways.
func TestHistoryLiveReset(t *testing.T) {
	c := stableAB(t)
	n := len(c.Group.History)
	req := group.ResetRequest{Target: group.ResetTarget{To: "EARLIEST"}, Shards: []int{2}, RequestedBy: "ops"}
	keep(t, c, c.Group.StartReset(c.Now, c.Settings, req, "reset-1"))
	expectHistory(t, c, n, "2 B> live-reset@4")
	keep(t, c, c.Group.FailReset(c.Now, c.Settings, "reset-1", "redis says no"))
	expectHistory(t, c, n, "2 B> live-reset@4", "2 >B live-reset@5")
	c.Check()
}

// A scale-out places the new shards, its rollback takes them away again:
// scale.
func TestHistoryScale(t *testing.T) {
	c := stableAB(t)
	n := len(c.Group.History)
	m := c.Scale(6)
	expectHistory(t, c, n, "4 >A scale@4", "5 >B scale@4")
	if _, err := c.Rollback(m.ReshardingID); err != nil {
		t.Fatal(err)
	}
	expectHistory(t, c, n, "4 >A scale@4", "5 >B scale@4", "4 A> scale@5", "5 B> scale@5")
	if err := explainsTargets(c.Group); err != nil {
		t.Fatal(err)
	}
	c.Check()
}

// The work balancer's moves are work-rebalance entries carrying the
// moved shard's weight and the loads of the members it left and joined:
// it unloads a busier member.
func TestHistoryWorkRebalance(t *testing.T) {
	c := newWorkContext(t, 8)
	cls := []*client{newClient("m0"), newClient("m1")}
	capacity := []int{1, 1}
	for range 3 {
		workRound(t, c, cls, capacity)
		c.Advance(time.Second)
	}
	n := len(c.Group.History)
	for k := 0; k < 30 && len(c.Group.History) == n; k++ {
		rebalance(c, rates(8, 100, 0, 1))
		for range 5 {
			workRound(t, c, cls, capacity)
			c.Advance(time.Second)
		}
	}
	moves := c.Group.History[n:]
	if len(moves) == 0 {
		t.Fatal("the balancer never moved a shard")
	}
	unloads := false
	for _, m := range moves {
		if m.Cause != group.CauseWorkRebalance || m.From == "" || m.To == "" || m.Work == nil || m.Work.Weight <= 0 {
			t.Fatalf("move %+v (work %+v)", m, m.Work)
		}
		unloads = unloads || m.Work.FromLoad > m.Work.ToLoad
	}
	if !unloads {
		t.Fatalf("no move left a busier member: %q", historyText(moves))
	}
	v := c.Group.HistoryView(group.HistoryQuery{})
	if w := v.Entries[n].Weights; w == nil || float32(w.ShardWeight) != moves[0].Work.Weight {
		t.Fatalf("view of %+v: %+v", moves[0], v.Entries[n])
	}
	if err := explainsTargets(c.Group); err != nil {
		t.Fatal(err)
	}
	c.Check()
}

// The history keeps at most HistoryMaxEntries entries, drops those older
// than HistoryMaxAge when the next change is recorded, and keeps none
// when the bound is 0.
func TestHistoryRetention(t *testing.T) {
	c := grouptest.New(t, 4)
	c.Settings.HistoryMaxEntries, c.Settings.HistoryMaxAge = 3, time.Minute
	c.Settings.MemberLeaseTTL = 5 * time.Minute
	c.Join("A")
	expectHistory(t, c, 0, "1 >A join@2", "2 >A join@2", "3 >A join@2")
	c.Advance(2 * time.Minute)
	c.Join("B")
	expectHistory(t, c, 0, "2 A>B join@3", "3 A>B join@3")

	c.Settings.HistoryMaxEntries = 0
	c.Advance(time.Second)
	c.Join("C")
	if len(c.Group.History) != 0 {
		t.Fatalf("history kept with a bound of 0: %q", historyText(c.Group.History))
	}
	c.Check()
}

// HistoryOf selects by shard and time; the view says the same.
func TestHistoryQuery(t *testing.T) {
	c := stableAB(t)
	c.Advance(time.Second)
	c.Leave("B", grouptest.Revoked(2, 3)...)
	two, left := 2, grouptest.Start.Add(time.Second)
	got := c.Group.HistoryOf(group.HistoryQuery{Shard: &two})
	if want := []string{"2 >A join@2", "2 A>B join@3", "2 B>A leave@4"}; !slices.Equal(historyText(got), want) {
		t.Fatalf("shard 2: %q, want %q", historyText(got), want)
	}
	got = c.Group.HistoryOf(group.HistoryQuery{Since: left})
	if want := []string{"2 B>A leave@4", "3 B>A leave@4"}; !slices.Equal(historyText(got), want) {
		t.Fatalf("since: %q, want %q", historyText(got), want)
	}
	v := c.Group.HistoryView(group.HistoryQuery{Shard: &two, Since: left})
	want := contract.HistoryView{StreamPrefix: "orders", ConsumerGroup: "orders-consumer", Entries: []contract.HistoryEntry{
		{At: left, GroupEpoch: 4, Shard: 2, FromMember: "B", ToMember: "A", Cause: contract.MoveLeave},
	}}
	if !slices.EqualFunc(v.Entries, want.Entries, func(a, b contract.HistoryEntry) bool { return a == b }) ||
		v.StreamPrefix != want.StreamPrefix || v.ConsumerGroup != want.ConsumerGroup {
		t.Fatalf("view %+v, want %+v", v, want)
	}
	if v := c.Group.HistoryView(group.HistoryQuery{Since: c.Now + 1}); v.Entries == nil || len(v.Entries) != 0 {
		t.Fatalf("empty view %+v: want entries []", v)
	}
}

// Appending never changes the history another copy of the group holds.
func TestHistoryIsSharedNotModified(t *testing.T) {
	c := stableAB(t)
	before := c.Group.Clone()
	kept := historyText(before.History)
	c.Join("C")
	if got := historyText(before.History); !slices.Equal(got, kept) {
		t.Fatalf("the copy's history changed: %q, was %q", got, kept)
	}
}

// Taking the group records the coordinator as its holder: from another
// coordinator, with one group-level handover entry at the current group
// epoch (answered by the view with the coordinators, and by no shard's
// query); from no holder (a group stored before holders were recorded),
// or by the holder itself (a restart), or without a coordinator id,
// with none.
func TestHistoryTakeOver(t *testing.T) {
	c := stableAB(t)
	n := len(c.Group.History)
	expectHolder := func(want string, entries int) {
		t.Helper()
		if c.Group.Coordinator != want || len(c.Group.History) != n+entries {
			t.Fatalf("holder %q with %d new entries, want %q with %d", c.Group.Coordinator, len(c.Group.History)-n, want, entries)
		}
	}
	if handedOver := keep(t, c, c.Group.TakeOver(c.Now, c.Settings, "coord-a")); handedOver {
		t.Fatal("a group without a holder answers a handover")
	}
	expectHolder("coord-a", 0)
	if res := c.Group.TakeOver(c.Now, c.Settings, "coord-a"); len(res.Records) != 0 || res.Answer {
		t.Fatalf("the holder taking the group again: %+v, want nothing", res)
	}
	if res := c.Group.TakeOver(c.Now, c.Settings, ""); len(res.Records) != 0 {
		t.Fatalf("no coordinator id: %+v, want nothing", res)
	}
	expectHolder("coord-a", 0)

	c.Advance(time.Second)
	if handedOver := keep(t, c, c.Group.TakeOver(c.Now, c.Settings, "coord-b")); !handedOver {
		t.Fatal("a handover answers none")
	}
	expectHolder("coord-b", 1)
	expectHistory(t, c, n, "-1 coord-a>coord-b handover@3")
	if h := c.Group.History[n]; h.At != c.Now || !h.GroupLevel() {
		t.Fatalf("handover entry %+v at %v", h, c.Now)
	}
	v := c.Group.HistoryView(group.HistoryQuery{Since: c.Now})
	want := contract.HistoryEntry{At: c.Now, GroupEpoch: 3, Shard: contract.GroupLevelShard, Cause: contract.MoveHandover,
		FromCoordinator: "coord-a", ToCoordinator: "coord-b"}
	if len(v.Entries) != 1 || v.Entries[0] != want {
		t.Fatalf("view %+v, want [%+v]", v.Entries, want)
	}
	for s := range c.Group.ShardCount {
		for _, e := range c.Group.HistoryOf(group.HistoryQuery{Shard: &s}) {
			if e.GroupLevel() {
				t.Fatalf("shard %d's query answers %+v", s, e)
			}
		}
	}
	if err := explainsTargets(c.Group); err != nil {
		t.Fatal(err)
	}
	c.Check()
}

// A group that does not exist is taken by nobody.
func TestTakeOverWithoutGroup(t *testing.T) {
	if res := group.New().TakeOver(grouptest.Start, group.DefaultSettings(), "coord-a"); len(res.Records) != 0 {
		t.Fatalf("records %+v, want none", res.Records)
	}
}
