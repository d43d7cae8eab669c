package group_test

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/grouptest"
)

// grantSeen is the last grant of one shard the records showed.
type grantSeen struct {
	member string
	token  int64
}

// fenceOracle follows every member record a run produces, in order, and
// checks the fencing-token rules (group/fence.go) on each grant it shows:
// a shard granted to a member other than its last grantee carries a token
// strictly above every earlier grant's; a grant that goes on keeps its
// token; no token exceeds the group epoch. Records of members that hold
// nothing (EXPIRED, or FENCED past their lease) keep stale sets and are
// not grants.
type fenceOracle struct {
	last   map[int]grantSeen
	seen   int // records already read
	grants int // grants to a new member seen, for the log
}

func (o *fenceOracle) check(t *rapid.T, g *group.Group, recs []group.Record) {
	t.Helper()
	for _, r := range recs[o.seen:] {
		mr, ok := r.(group.MemberRecord)
		if !ok || mr.Member == nil || !mr.Member.Holds() {
			continue
		}
		m := mr.Member
		if len(m.GrantEpochs) != len(m.GrantedAssignment) {
			t.Fatalf("%s: grant epochs %v not aligned with granted %v", m.MemberID, m.GrantEpochs, m.GrantedAssignment)
		}
		for i, s := range m.GrantedAssignment {
			tok := m.GrantEpochs[i]
			if tok < 1 || tok > g.GroupEpoch {
				t.Fatalf("shard %d granted to %s with token %d (group epoch %d)", s, m.MemberID, tok, g.GroupEpoch)
			}
			prev, ok := o.last[s]
			switch {
			case !ok:
			case prev.member != m.MemberID && tok <= prev.token:
				t.Fatalf("shard %d: %s was granted it with token %d, then %s with token %d", s, prev.member, prev.token, m.MemberID, tok)
			case prev.member == m.MemberID && tok < prev.token:
				t.Fatalf("shard %d: %s's token went back from %d to %d", s, m.MemberID, prev.token, tok)
			}
			if !ok || prev.member != m.MemberID {
				o.grants++
			}
			o.last[s] = grantSeen{member: m.MemberID, token: tok}
		}
	}
	o.seen = len(recs)
}

// TestProperty_FencingTokensGrowAcrossGrants runs the protocol's random
// worlds (joins, heartbeats, leaves, crashes, paused processes, lost and
// duplicated answers, scale changes and rollbacks) and checks every grant
// of every shard against fenceOracle: a shard's tokens never repeat nor go
// back from one grantee to the next, and a grant keeps its token.
func TestProperty_FencingTokensGrowAcrossGrants(t *testing.T) {
	total := 0
	rapid.Check(t, func(t *rapid.T) {
		w := newWorld(t, rapid.IntRange(2, 6).Draw(t, "members"), rapid.IntRange(1, 12).Draw(t, "shards"), false, true)
		o := &fenceOracle{last: map[int]grantSeen{}}
		steps := rapid.IntRange(1, 150).Draw(t, "steps")
		for i := 0; i < steps; i++ {
			w.step()
			o.check(t, w.c.Group, w.c.Records)
		}
		w.settle()
		o.check(t, w.c.Group, w.c.Records)
		total += o.grants
	})
	t.Logf("grants to a new member checked: %d", total)
	clear(stats)
}

// tokenOf returns shard's token in resp, failing when resp has none.
func tokenOf(t *testing.T, resp contract.HeartbeatResponse, shard int) int64 {
	t.Helper()
	tok := resp.Assignment.FencingTokens.Token(shard)
	if tok == 0 {
		t.Fatalf("no fencing token for shard %d in %+v", shard, resp.Assignment)
	}
	return tok
}

// A handover gives the next owner a larger token; a grant keeps its token
// while other members join; a live reset's re-grant and a scale change's
// moves carry larger tokens; the answer lists a token for every assigned
// shard and none for pending ones.
func TestFencingTokenScenarios(t *testing.T) {
	c := grouptest.New(t, 2)
	a := c.Join("a")
	a = c.Heartbeat(*grouptest.NextRequest("a", a))
	if !a.Assignment.AssignedShards.Equal(contract.NewShardSet(0, 1)) || len(a.Assignment.FencingTokens) != 2 {
		t.Fatalf("a: %+v", a.Assignment)
	}
	t0 := tokenOf(t, a, 0)

	// b joins: shard 1 moves to b once a releases it; shard 0 stays a's
	// with its token.
	b := c.Join("b")
	if len(b.Assignment.AssignedShards) != 0 || len(b.Assignment.FencingTokens) != 0 {
		t.Fatalf("b's join answer: %+v", b.Assignment)
	}
	req := grouptest.NextRequest("a", a)
	a = c.Heartbeat(*req)
	req = grouptest.NextRequest("a", a)
	req.RevokingShards = grouptest.Revoked(1)
	a = c.Heartbeat(*req)
	if got := tokenOf(t, a, 0); got != t0 {
		t.Fatalf("a's token of shard 0 changed from %d to %d while a kept it", t0, got)
	}
	b = c.Heartbeat(*grouptest.NextRequest("b", b))
	if tb := tokenOf(t, b, 1); tb <= tokenOf(t, a, 0) {
		t.Fatalf("shard 1 handed to b with token %d, not above a's %d", tb, tokenOf(t, a, 0))
	}
	tb1 := tokenOf(t, b, 1)

	// a leaves: shard 0 goes to b with a larger token.
	c.Leave("a", grouptest.Revoked(0)...)
	b = c.Heartbeat(*grouptest.NextRequest("b", b))
	if got := tokenOf(t, b, 0); got <= t0 {
		t.Fatalf("shard 0 handed from a (%d) to b with token %d", t0, got)
	}
	if got := tokenOf(t, b, 1); got != tb1 {
		t.Fatalf("b's token of shard 1 changed from %d to %d", tb1, got)
	}

	// A live reset of shard 1: revoked, set, granted again above.
	res := c.Group.StartReset(c.Now, c.Settings, group.ResetRequest{Target: group.ResetTarget{To: "EARLIEST"}, Shards: []int{1}, RequestedBy: "test"}, "reset-1")
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	c.Records = append(c.Records, res.Records...)
	b = c.Heartbeat(*grouptest.NextRequest("b", b))
	req = grouptest.NextRequest("b", b)
	req.RevokingShards = grouptest.Revoked(1)
	b = c.Heartbeat(*req)
	for _, r := range []group.Result[group.LiveReset]{
		c.Group.BeginApply(c.Now, c.Settings, "reset-1", []group.ShardReset{{ShardIndex: 1, SetID: "0-0"}}),
	} {
		if r.Err != nil {
			t.Fatal(r.Err)
		}
		c.Records = append(c.Records, r.Records...)
	}
	if r := c.Group.FinishReset(c.Now, c.Settings, "reset-1", nil); r.Err != nil {
		t.Fatal(r.Err)
	} else {
		c.Records = append(c.Records, r.Records...)
	}
	b = c.Heartbeat(*grouptest.NextRequest("b", b))
	b = c.Heartbeat(*grouptest.NextRequest("b", b))
	if got := tokenOf(t, b, 1); got <= tb1 {
		t.Fatalf("shard 1 granted after the live reset with token %d, not above %d", got, tb1)
	}
	c.Check()
}
