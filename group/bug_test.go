package group_test

import (
	"testing"
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/grouptest"
)

// TestBug_… tests are regression tests for bugs found against the protocol
// (docs/protocol.md), all fixed: each comment names the rule, the input, the
// expected outcome and what the code did before the fix ("Was").

// TestBug_StaleRebalanceDeadlineSurvivesJoinReplay:
//
// docs/protocol.md §4.6 rebalance timeout: "for each live owner release = (current ∪ revoking)
// − target; non-empty without deadline → deadline = now + timeout; empty →
// clear". It runs in step 11 of every accepted heartbeat and on every tick
// (docs/protocol.md §4.2, §7), for every owner.
//
// Input: b owns 0–3 alone; a joins at t0 (targets a{2,3} b{0,1}) and b is
// stuck draining 2,3, so b's deadline is t0+60s. At t0+58s b's process
// restarts and sends epoch 0 with nothing (improvement 8b): the record is
// cleared, b holds only its target. At t0+58.5s a heartbeats and a tick
// runs: b's release is empty, so its deadline must be cleared. At t0+59s c
// joins and b must give up shard 1: a fresh deadline t0+119s.
//
// Expected: b's deadline cleared at t0+58.5s; b still ACTIVE at t0+60s.
// Was: the join replay keeps rebalanceDeadlineAt, and the incremental
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
	expectTargets(t, c.Group, map[string]contract.ShardSet{"a": shards(2, 3), "b": shards(0, 1)})
	// b is stuck: it keeps reading 2,3 and reports them draining; it is told
	// its reduced target at t0.
	stuck := c.Member("b", member(t, c, "b").MemberEpoch, 0, 1, 2, 3)
	expect(t, c.Heartbeat(stuck), contract.StatusOK, c.Group.AssignmentEpoch, shards(0, 1), nil)
	for c.Now < t0.Add(55*time.Second) {
		c.Advance(5 * time.Second)
		hb := c.Member("b", member(t, c, "b").MemberEpoch, 0, 1)
		hb.RevokingShards = grouptest.Draining(2, 3)
		expect(t, c.Heartbeat(hb), contract.StatusOK, c.Group.AssignmentEpoch, shards(0, 1), nil)
		a.beat(c)
	}
	if d := member(t, c, "b").RebalanceDeadlineAt; d != t0.Add(c.Settings.RebalanceTimeout) {
		t.Fatalf("b's deadline %v, want t0+60s", d)
	}
	// b restarts at t0+58s.
	c.Now = t0.Add(58 * time.Second)
	b.restart()
	expect(t, b.beat(c), contract.StatusOK, member(t, c, "b").MemberEpoch, shards(0, 1), nil)
	// Its next heartbeat says it reads 0,1 only: 2,3 are released.
	expect(t, b.beat(c), contract.StatusOK, member(t, c, "b").MemberEpoch, shards(0, 1), nil)
	// t0+58.5s: a heartbeats (and reads 2,3), a tick runs.
	c.Now = t0.Add(58500 * time.Millisecond)
	a.beat(c)
	clone := group.Rebuilt(c.Group)
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
	expectTargets(t, c.Group, map[string]contract.ShardSet{"a": shards(2, 3), "b": shards(0), "c": shards(1)})
	// t0+60s: b had one second; it must not be fenced yet.
	c.Now = t0.Add(60 * time.Second)
	c.Tick()
	if m := member(t, c, "b"); m.State != group.MemberActive {
		t.Errorf("b is %s at t0+60s: fenced by the deadline of a release it finished at t0+58s", m.State)
	}
	c.Check()
}

// TestBug_RejoinOverLeavingRecordDuringRoundStuckAtEpochMinusOne:
//
// docs/protocol.md §4.2 steps 5–7 treat a LEAVING record as syncable, and §4.5 answers
// SYNC_METADATA with memberEpoch = stored, which is −1 for a LEAVING record.
// A new process of a member that left earlier starts with epoch 0 and a
// metadataVersion other than the group's (stale, or 0 when unknown). While a
// correction round is open, step 7 answers it SYNC_METADATA with
// memberEpoch −1 instead of running the rejoin of step 8 ("epoch 0, rec
// LEAVING → rejoin"). The client echoes −1 (docs/protocol.md §4.3: clients echo the last
// response's epoch), which is a leave: every later heartbeat is "second
// leave → OK, epoch −1, nothing assigned". The process never rejoins, never
// gets a shard, and its record stays LEAVING with a fresh lastHeartbeatAt,
// so it is never pruned either.
//
// Input: A{0,1} B{2,3}; B leaves (v4); A claims metadataVersion 9 (round
// open); B's new process joins with epoch 0, metadataVersion 3.
// Expected: B rejoins (ACTIVE, a positive epoch) and, once the round closes,
// reads its share. Was: SYNC_METADATA with memberEpoch −1, then B stays
// LEAVING forever while its process heartbeats.
// (Found by TestProperty_ProtocolSafetyAndConvergence.)
func TestBug_RejoinOverLeavingRecordDuringRoundStuckAtEpochMinusOne(t *testing.T) {
	c := stableAB(t)
	a := clientsAB(c)[0]
	c.Leave("B", grouptest.Revoked(2, 3)...)
	a.beat(c)
	req := a.request()
	req.MetadataVersion = 9
	a.handle(req, c.Heartbeat(req), c.Now)
	if c.Group.MetadataCorrection == nil {
		t.Fatalf("no round")
	}
	b := newClient("B")
	req = b.request()
	req.MetadataVersion = 3 // a stale version the new process remembered
	resp := c.Heartbeat(req)
	b.handle(req, resp, c.Now)
	if resp.MemberEpoch < 0 {
		t.Errorf("a joining process (epoch 0) was answered %s with memberEpoch %d", resp.Status, resp.MemberEpoch)
	}
	for i := 0; i < 10; i++ {
		c.Advance(time.Second)
		a.beat(c)
		b.beat(c)
		c.Tick()
	}
	if m := member(t, c, "B"); m.State != group.MemberActive || len(b.owned()) == 0 {
		t.Errorf("B's process heartbeats but its record is %s epoch %d and it reads %v (client epoch %d)",
			m.State, m.MemberEpoch, b.owned(), b.epoch())
	}
	c.Check()
}

// TestBug_SyncMetadataUnblocksShardsTheMemberReportsOwning:
//
// docs/protocol.md §5 "revoke before assign": a moved shard stays pending for its new owner
// until the old owner stops listing it in owned/active revoking. Our domain
// also counts a member's granted set as held (model.go Holding) so that a
// shard granted but not yet reported blocks others.
//
// The SYNC_METADATA path (docs/protocol.md §4.2 steps 6–7, §4.5) sets granted := owned ∩
// (target − blocked) and, as docs/protocol.md §4.5 says, leaves the current set alone. When
// the member reports owning a shard that is no longer in its target (and its
// current set does not list it yet, because the shard was granted after its
// last normal heartbeat), that shard leaves granted and is in neither current
// nor revoking: it is no longer held, although the member just said it reads
// it. The next target owner is then assigned the shard while the member still
// reads it (until it processes the SYNC_METADATA answer; forever if that
// answer is lost).
//
// Input: A{0,1} B{2,3}, B granted {2,3} (its current still empty); C joins
// (targets A{0,1} B{2} C{3}, C pending 3); A claims metadataVersion 9
// (round open); B heartbeats with its old metadataVersion owning {2,3} →
// SYNC_METADATA assigned {2} (response lost, B keeps reading 2,3); D joins
// (G bump, round dropped); C heartbeats.
// Expected: shard 3 stays pending for C while B reports/reads it.
// Was: C is assigned 3 while B reads it: two live readers of shard 3.
// (Found by TestProperty_ProtocolSafetyAndConvergence.)
func TestBug_SyncMetadataUnblocksShardsTheMemberReportsOwning(t *testing.T) {
	c := grouptest.New(t, 4)
	a, b := newClient("A"), newClient("B")
	a.beat(c)
	a.beat(c)
	b.beat(c)
	a.beat(c)
	a.beat(c)
	b.beat(c) // B is granted {2,3}, its current set is still empty
	if !b.owned().Equal(shards(2, 3)) || len(member(t, c, "B").CurrentAssignment) != 0 {
		t.Fatalf("setup: B reads %v, record %+v", b.owned(), member(t, c, "B"))
	}
	cc := newClient("C")
	cc.beat(c)
	expectTargets(t, c.Group, map[string]contract.ShardSet{"A": shards(0, 1), "B": shards(2), "C": shards(3)})
	if !cc.owned().Equal(nil) {
		t.Fatalf("C reads %v", cc.owned())
	}
	// A opens a correction round.
	req := a.request()
	req.MetadataVersion = 9
	a.handle(req, c.Heartbeat(req), c.Now)
	// B, on its old metadata version, reports owning {2,3}: SYNC_METADATA,
	// the answer is lost (B keeps reading 2,3).
	resp := c.Heartbeat(b.request())
	if resp.Status != contract.StatusSyncMetadata {
		t.Fatalf("B: %+v", resp)
	}
	// D joins: the round is dropped.
	newClient("D").beat(c)
	resp = cc.beat(c)
	if cc.owned().Contains(3) && b.owned().Contains(3) {
		t.Errorf("C was assigned shard 3 (%s assigned %v) while B reports owning and reads it", resp.Status, resp.Assignment.AssignedShards)
	}
	c.Check()
}

// TestBug_SyncMetadataForgetsActiveRevokes (regression of the fix for
// TestBug_SyncMetadataUnblocksShardsTheMemberReportsOwning, commit 94c6a65):
//
// docs/protocol.md §5 revoke before assign: a moved shard stays pending for the new owner
// until the old owner stops listing it in owned *or active revoking*.
//
// The SYNC_METADATA path now sets current := owned ∩ authority but ignores
// the request's revoke reports, so a shard the member moved from owned to
// DRAINING leaves its current set without entering its revoking set: it is
// no longer held. The member's next heartbeat on the round's version then
// has its DRAINING report discarded by the in-round rule of docs/protocol.md §4.4 ("entries
// outside current ∪ revoking ∪ target are discarded first"), the round
// closes, and the new owner is assigned the shard while the old owner still
// drains (reads) it.
//
// Input: 2 shards, A{0,1}; B joins (target A{0} B{1}); A learns it keeps
// {0} and drains 1 (DRAINING/1); A sends metadataVersion 9 with owned {0},
// DRAINING 1 → SYNC_METADATA; A heartbeats on the current version with owned
// {0}, DRAINING 1; B heartbeats.
// Expected: 1 stays pending for B while A reports DRAINING 1.
// Was: B is assigned 1 (OK) while A drains it.
// (Found by TestProperty_ProtocolWithResharding with slow, draining clients.)
func TestBug_SyncMetadataForgetsActiveRevokes(t *testing.T) {
	c := grouptest.New(t, 2)
	a := newClient("A")
	a.slow = true
	a.beat(c)
	b := newClient("B")
	b.beat(c)
	a.beat(c) // OK assigned {0}: A drains 1
	if !a.owned().Equal(shards(0)) || !a.draining().Equal(shards(1)) {
		t.Fatalf("setup: A owns %v drains %v", a.owned(), a.draining())
	}
	req := a.request()
	req.MetadataVersion = 9
	if resp := c.Heartbeat(req); resp.Status != contract.StatusSyncMetadata {
		t.Fatalf("A: %+v", resp)
	}
	if m := member(t, c, "A"); !m.Holding().Contains(1) {
		t.Errorf("after SYNC_METADATA A's record no longer holds shard 1 it reports DRAINING: %+v", m)
	}
	a.beat(c)
	resp := b.beat(c)
	if b.reading().Contains(1) && a.reading().Contains(1) {
		t.Errorf("B was assigned shard 1 (%s %v) while A reports DRAINING 1", resp.Status, resp.Assignment.AssignedShards)
	}
	c.Check()
}

// stuckB builds A{0,1} B{2,3}; C joins at t0 (targets A{0,1} B{2} C{3}) and
// B stays stuck owning 3 while everybody heartbeats until t0+55s; B is
// told its reduced target at t0. It returns the clients A and C and t0; B's
// deadline is t0+60s.
func stuckB(t *testing.T) (*grouptest.Context, *client, *client, contract.Instant) {
	t.Helper()
	c := stableAB(t)
	cls := clientsAB(c)
	a := cls[0]
	c.Advance(time.Second)
	t0 := c.Now
	cc := newClient("C")
	cc.beat(c)
	expectTargets(t, c.Group, map[string]contract.ShardSet{"A": shards(0, 1), "B": shards(2), "C": shards(3)})
	c.Heartbeat(c.Member("B", member(t, c, "B").MemberEpoch, 2, 3))
	for c.Now < t0.Add(55*time.Second) {
		c.Advance(5 * time.Second)
		a.beat(c)
		cc.beat(c)
		expect(t, c.Heartbeat(c.Member("B", member(t, c, "B").MemberEpoch, 2, 3)), contract.StatusOK, c.Group.AssignmentEpoch, shards(2), nil)
	}
	if d := member(t, c, "B").RebalanceDeadlineAt; d != t0.Add(60*time.Second) {
		t.Fatalf("B's deadline %v", d)
	}
	return c, a, cc, t0
}

// TestBug_JoinReplayAnswersTargetFromBeforeItsOwnTimeoutPass:
//
// docs/protocol.md §4.1/§4.2: an OK answer carries the member's target at the assignment
// epoch it reports (assigned = target − blocked, pending = target ∩
// blocked). joinReplay now runs enforceTimeouts after it has computed the
// answer; when that pass fences a stuck owner (G bump, new targets), the
// answer reports the new group/assignment epoch with the old target.
//
// Input: A{0,1} B{2,3}; C joins at t0 (C{3}, B stuck on 3, deadline
// t0+60s); at t0+60s C's process restarts and sends epoch 0 with nothing.
// Expected: the answer matches the assignment epoch it carries: B is fenced
// in that pass, C's target is {2,3} and nothing blocks it: assigned {2,3}
// (or, if the timeout pass ran after answering, the old epochs).
// Was: groupEpoch/assignmentEpoch of the new assignment (5) with C's old
// target: assigned [] pending [3]; shard 2 is in neither list.
// (Found by TestProperty_ProtocolSafetyAndConvergence; same ordering in
// syncMetadata, see the next test.)
func TestBug_JoinReplayAnswersTargetFromBeforeItsOwnTimeoutPass(t *testing.T) {
	c, _, cc, t0 := stuckB(t)
	c.Now = t0.Add(60 * time.Second)
	cc.restart()
	resp := cc.beat(c)
	expectState(t, c, "B", group.MemberFenced, 5)
	target := c.Group.Targets["C"]
	if all := resp.Assignment.AssignedShards.Union(resp.Assignment.PendingShards); !all.Equal(target) ||
		resp.AssignmentEpoch != c.Group.AssignmentEpoch {
		t.Errorf("answer at assignmentEpoch %d: assigned %v pending %v; C's target at that epoch is %v",
			resp.AssignmentEpoch, resp.Assignment.AssignedShards, resp.Assignment.PendingShards, target)
	}
	c.Check()
}

// TestBug_SyncMetadataAnswersAFencedMember:
//
// docs/protocol.md §4.2 step 12: a member fenced by the rebalance timeout while its own
// heartbeat is processed gets FENCED_MEMBER_EPOCH. syncMetadata now runs
// enforceTimeouts for the member after computing its answer; when the
// member is past its deadline it is fenced (record FENCED, epoch bumped, G
// bump), yet the answer is SYNC_METADATA with an assignment, telling it to
// keep reading.
//
// Input: A{0,1} B{2,3}; C joins at t0 (B stuck on 3, deadline t0+60s); at
// t0+60s B heartbeats with metadataVersion 99, owning {2,3}.
// Expected: FENCED_MEMBER_EPOCH (B's record is FENCED).
// Was: SYNC_METADATA with assigned [2] and memberEpoch 5 while B's
// record is FENCED.
func TestBug_SyncMetadataAnswersAFencedMember(t *testing.T) {
	c, _, _, t0 := stuckB(t)
	c.Now = t0.Add(60 * time.Second)
	hb := c.Member("B", member(t, c, "B").MemberEpoch, 2, 3)
	hb.MetadataVersion = 99
	resp := c.Heartbeat(hb)
	m := member(t, c, "B")
	if m.State == group.MemberFenced && resp.Status != contract.StatusFencedMemberEpoch {
		t.Errorf("B's record is FENCED (epoch %d) but it was answered %s assigned %v epoch %d",
			m.MemberEpoch, resp.Status, resp.Assignment.AssignedShards, resp.MemberEpoch)
	}
	c.Check()
}
