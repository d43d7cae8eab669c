package httpapi_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/coordtest"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/eventually"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/fakeclock"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/membersim"
)

// End-to-end tests: the real HTTP API over the real actor system and the
// memory store, with a fake clock (no ticker; time moves only when a test
// advances it).

// cluster is one coordinator (internal/testkit/coordtest) on a memory store
// with a fake clock, whose every answer is checked against the OpenAPI
// document (conformant).
type cluster struct {
	*coordtest.Server
	t *testing.T
}

func newCluster(t *testing.T) *cluster {
	t.Helper()
	return newClusterWith(t, coordtest.Options{})
}

// newClusterWith starts the cluster with o, whose ID and Handler it sets,
// and Clock when nil.
func newClusterWith(t *testing.T, o coordtest.Options) *cluster {
	t.Helper()
	o.ID = "e2e"
	if o.Clock == nil {
		o.Clock = newE2EClock()
	}
	o.Handler = func(h http.Handler) http.Handler { return conformant(t, h) }
	return &cluster{Server: coordtest.Start(t, o), t: t}
}

// newE2EClock is the clock of an e2e cluster: it moves only when a test
// moves it.
func newE2EClock() *fakeclock.Clock {
	return fakeclock.New(time.Date(2026, 5, 21, 0, 0, 0, 0, time.UTC))
}

// createGroup creates orders/workers with n shards.
func (c *cluster) createGroup(n int) {
	c.t.Helper()
	var view contract.GroupView
	if st := c.Admin().Call("POST", "/streams/orders/groups/workers", map[string]any{"initialShardCount": n, "requestedBy": "e2e"}, &view); st != http.StatusCreated {
		c.t.Fatalf("create: status %d", st)
	}
	if view.ShardCount != n || view.GroupEpoch != 1 || view.State != contract.GroupEmpty {
		c.t.Fatalf("created %+v", view)
	}
}

func (c *cluster) group() contract.GroupView {
	c.t.Helper()
	var v contract.GroupView
	if st := c.Admin().Call("GET", "/streams/orders/groups/workers", nil, &v); st != http.StatusOK {
		c.t.Fatalf("get group: status %d", st)
	}
	return v
}

func (c *cluster) members() map[string]contract.Member {
	c.t.Helper()
	var body contract.MemberList
	if st := c.Admin().Call("GET", "/monitoring/streams/orders/groups/workers/members", nil, &body); st != http.StatusOK {
		c.t.Fatalf("members: status %d", st)
	}
	out := map[string]contract.Member{}
	for _, m := range body.Members {
		out[m.MemberID] = m
	}
	return out
}

func (c *cluster) assignments() contract.AssignmentsView {
	c.t.Helper()
	var v contract.AssignmentsView
	if st := c.Admin().Call("GET", "/monitoring/streams/orders/groups/workers/assignments", nil, &v); st != http.StatusOK {
		c.t.Fatalf("assignments: status %d", st)
	}
	return v
}

// member is a protocol-following member of orders/workers heartbeating
// through the cluster's API.
func (c *cluster) member(id string) *coordtest.Member {
	return c.Member(group.Key{StreamPrefix: "orders", ConsumerGroup: "workers"}, id)
}

// converge lets the members heartbeat in rounds until every shard of the
// group is owned by exactly one of them, ownership matches the balanced
// target, and the group is STABLE. It fails after maxRounds rounds.
func (c *cluster) converge(shards int, members ...*coordtest.Member) {
	c.t.Helper()
	const maxRounds = 20
	for round := 0; round < maxRounds; round++ {
		for _, m := range members {
			m.Heartbeat()
		}
		if c.converged(shards, members) {
			return
		}
	}
	for _, m := range members {
		c.t.Logf("%s: epoch %d owned %v last %+v", m.ID, m.Epoch(), m.Owned(), m.Last)
	}
	c.t.Fatalf("not converged after %d rounds: %+v", maxRounds, c.assignments())
}

// convergeAlone lets m converge alone on the 4 shards of the group and
// fails unless it then reads all of them; when says after what.
func (c *cluster) convergeAlone(m *coordtest.Member, when string) {
	c.t.Helper()
	c.converge(4, m)
	if !m.Owned().Equal(contract.Range(0, 4)) {
		c.t.Fatalf("%s owns %v %s", m.ID, m.Owned(), when)
	}
}

func (c *cluster) converged(shards int, members []*coordtest.Member) bool {
	owner := map[int]string{}
	sims := make([]*membersim.Member, len(members))
	for i, m := range members {
		for _, s := range m.Owned() {
			if prev, dup := owner[s]; dup {
				c.t.Fatalf("shard %d owned by %s and %s", s, prev, m.ID)
			}
			owner[s] = m.ID
		}
		sims[i] = m.Member
	}
	if !membersim.Settled(shards, sims) {
		return false
	}
	v := c.group()
	return v.State == contract.GroupStable && v.AssignmentEpoch == v.GroupEpoch
}

func TestE2EEightMembersShareThirtyTwoShards(t *testing.T) {
	c := newCluster(t)
	c.createGroup(32)
	var ms []*coordtest.Member
	for i := range 8 {
		ms = append(ms, c.member(fmt.Sprintf("member-%d", i)))
	}
	c.converge(32, ms...)
	for _, m := range ms {
		if len(m.Owned()) != 4 {
			t.Errorf("%s owns %v, want 4 shards", m.ID, m.Owned())
		}
	}
	a := c.assignments()
	if len(a.InvariantViolations) != 0 {
		t.Errorf("invariant violations: %v", a.InvariantViolations)
	}
	for _, m := range ms {
		if !a.TargetAssignment[m.ID].Equal(m.Owned()) || !a.CurrentAssignments[m.ID].Equal(m.Owned()) {
			t.Errorf("%s: target %v current %v, member reads %v", m.ID, a.TargetAssignment[m.ID], a.CurrentAssignments[m.ID], m.Owned())
		}
	}
}

// TestE2EWorkedExample replays docs/protocol.md §4.7 step by step (the curl walkthrough in docs/protocol.md).
func TestE2EWorkedExample(t *testing.T) {
	c := newCluster(t)
	c.createGroup(4)
	a, b := c.member("member-a"), c.member("member-b")

	want := func(r contract.HeartbeatResponse, epoch int64, assigned, pending contract.ShardSet) {
		t.Helper()
		if r.Status != contract.StatusOK || r.MemberEpoch != epoch || !r.Assignment.AssignedShards.Equal(assigned) || !r.Assignment.PendingShards.Equal(pending) {
			t.Fatalf("answer %+v, want OK epoch %d assigned %v pending %v", r, epoch, assigned, pending)
		}
	}
	want(a.Heartbeat(), 2, contract.Range(0, 4), nil)
	want(a.Heartbeat(), 2, contract.Range(0, 4), nil)
	if v := c.group(); v.State != contract.GroupStable || v.GroupEpoch != 2 {
		t.Fatalf("after A's ack: %+v", v)
	}
	want(b.Heartbeat(), 3, nil, contract.NewShardSet(2, 3))
	want(a.Heartbeat(), 3, contract.NewShardSet(0, 1), nil)
	if !a.Released().Equal(contract.NewShardSet(2, 3)) {
		t.Fatalf("A released %v", a.Released())
	}
	want(a.Heartbeat(), 3, contract.NewShardSet(0, 1), nil)
	want(b.Heartbeat(), 3, contract.NewShardSet(2, 3), nil)
	as := c.assignments()
	if !as.TargetAssignment["member-a"].Equal(contract.NewShardSet(0, 1)) || !as.TargetAssignment["member-b"].Equal(contract.NewShardSet(2, 3)) ||
		!as.CurrentAssignments["member-a"].Equal(contract.NewShardSet(0, 1)) {
		t.Fatalf("assignments %+v", as)
	}
}

func TestE2EExpiredMemberLosesItsShards(t *testing.T) {
	c := newCluster(t)
	c.createGroup(4)
	a, b := c.member("member-a"), c.member("member-b")
	c.converge(4, a, b)

	// B goes silent. A keeps heartbeating while time passes beyond B's lease.
	half := c.Settings.MemberLeaseTTL/2 + time.Millisecond
	c.Clock.Advance(half)
	a.Heartbeat()
	c.Clock.Advance(half)
	c.Actors.TickNow()
	eventually.True(t, "member-b expired", func() bool { return c.members()["member-b"].State == contract.MemberExpired })

	c.convergeAlone(a, "after B expired")
	if r := b.Heartbeat(); r.Status != contract.StatusFencedMemberEpoch {
		t.Fatalf("expired member's heartbeat answered %s", r.Status)
	}
	c.converge(4, a, b)
}

func TestE2EGracefulLeaveHandsShardsOver(t *testing.T) {
	c := newCluster(t)
	c.createGroup(4)
	a, b := c.member("member-a"), c.member("member-b")
	c.converge(4, a, b)

	if r := b.Leave(); r.Status != contract.StatusOK {
		t.Fatalf("leave answered %+v", r)
	}
	if st := c.members()["member-b"].State; st != contract.MemberLeaving {
		t.Fatalf("B is %s after leaving", st)
	}
	c.convergeAlone(a, "after B left")
}

func TestE2EStaleEpochIsFencedAndRejoins(t *testing.T) {
	c := newCluster(t)
	c.createGroup(4)
	a := c.member("member-a")
	c.converge(4, a)
	good := a.Epoch()

	req := a.Request()
	req.MemberEpoch = good - 1
	var r contract.HeartbeatResponse
	if st := c.Admin().Call("POST", "/streams/orders/groups/workers/members/member-a/heartbeat", req, &r); st != http.StatusOK {
		t.Fatalf("stale epoch heartbeat: status %d", st)
	}
	if r.Status != contract.StatusFencedMemberEpoch || r.MemberEpoch != good {
		t.Fatalf("stale epoch answered %+v, want FENCED_MEMBER_EPOCH with epoch %d", r, good)
	}
	a.Apply(req, r)
	if a.Epoch() != 0 || a.Owned() != nil {
		t.Fatalf("fenced member kept state: epoch %d owned %v", a.Epoch(), a.Owned())
	}
	c.convergeAlone(a, "after rejoining")
}

func TestE2ECreateHeartbeatDelete(t *testing.T) {
	c := newCluster(t)
	c.createGroup(2)
	a := c.member("member-a")
	c.converge(2, a)

	var e struct{ Status, ErrorCode, Message string }
	if st := c.Admin().Call("POST", "/streams/orders/groups/workers", map[string]any{"requestedBy": "e2e"}, &e); st != http.StatusConflict || e.ErrorCode != "GROUP_ALREADY_EXISTS" {
		t.Fatalf("duplicate create: %d %+v", st, e)
	}
	if st := c.Admin().Call("DELETE", "/streams/orders/groups/workers", map[string]any{"requestedBy": "e2e", "reason": "test"}, &e); st != http.StatusConflict || e.ErrorCode != "GROUP_HAS_ACTIVE_MEMBERS" {
		t.Fatalf("delete without force: %d %+v", st, e)
	}
	var view contract.GroupView
	if st := c.Admin().Call("DELETE", "/streams/orders/groups/workers", map[string]any{"requestedBy": "e2e", "reason": "test", "force": true}, &view); st != http.StatusOK {
		t.Fatalf("forced delete: %d", st)
	}
	if view.CurrentAssignmentSummary["member-a"] != 2 {
		t.Fatalf("delete answered %+v, want the pre-delete view", view)
	}
	if st := c.Admin().Call("GET", "/streams/orders/groups/workers", nil, &e); st != http.StatusNotFound || e.ErrorCode != "GROUP_NOT_FOUND" {
		t.Fatalf("get after delete: %d %+v", st, e)
	}
	if r := a.Heartbeat(); r.Status != contract.StatusUnknownMemberID {
		t.Fatalf("heartbeat after delete answered %s", r.Status)
	}
}
