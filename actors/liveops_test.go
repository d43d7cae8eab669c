package actors

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/eventually"
)

// fakePositions plans every shard to "0" and records what it sets; while
// failing is set, SetID fails with it.
type fakePositions struct {
	mu      sync.Mutex
	failing error
	set     map[int]string
}

func (p *fakePositions) PlanReset(_ context.Context, _ group.Key, shard int, _ group.ResetTarget) (group.ShardReset, error) {
	before := "7-0"
	return group.ShardReset{ShardIndex: shard, SetID: "0", Before: &contract.GroupPosition{LastDeliveredID: &before}}, nil
}

func (p *fakePositions) SetID(_ context.Context, _ group.Key, s group.ShardReset) (*contract.GroupPosition, error) {
	shard, id := s.ShardIndex, s.SetID
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.failing != nil {
		return nil, p.failing
	}
	if p.set == nil {
		p.set = map[int]string{}
	}
	p.set[shard] = id
	return &contract.GroupPosition{LastDeliveredID: &id}, nil
}

// ForceSet sets shard to the target's EntryID ("bad" is a target Redis
// refuses), from "7-0" or what it set before.
func (p *fakePositions) ForceSet(_ context.Context, _ group.Key, shard int, target group.ResetTarget) (before, after contract.GroupPosition, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.failing != nil {
		return before, after, p.failing
	}
	if target.EntryID == "bad" {
		return before, after, fmt.Errorf("%w: invalid id", group.ErrResetTarget)
	}
	if p.set == nil {
		p.set = map[int]string{}
	}
	was, ok := p.set[shard]
	if !ok {
		was = "7-0"
	}
	id := target.EntryID
	p.set[shard] = id
	return contract.GroupPosition{LastDeliveredID: &was}, contract.GroupPosition{LastDeliveredID: &id}, nil
}

// Preview plans every shard to the target's EntryID from "7-0" or what
// was set, changing nothing.
func (p *fakePositions) Preview(_ context.Context, _ group.Key, shard int, target group.ResetTarget) (contract.ResetPreviewShard, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.failing != nil {
		return contract.ResetPreviewShard{}, p.failing
	}
	was, ok := p.set[shard]
	if !ok {
		was = "7-0"
	}
	return contract.ResetPreviewShard{ShardIndex: shard, StreamKey: contract.StreamKey(orders.StreamPrefix, shard),
		Before: contract.GroupPosition{LastDeliveredID: &was}, After: contract.PreviewedAfter{LastDeliveredID: target.EntryID}}, nil
}

func (p *fakePositions) setTo(shard int) (string, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	id, ok := p.set[shard]
	return id, ok
}

// member heartbeats as a well-behaved member: it owns what it was
// assigned and reports the shards it gave up as revoked.
type liveMember struct {
	id   string
	resp contract.HeartbeatResponse
}

func (m *liveMember) beat(t *testing.T, c *System) {
	t.Helper()
	req := join(m.id)
	if m.resp.MemberEpoch > 0 {
		req = next(m.id, m.resp)
	}
	m.resp = heartbeat(t, c, orders, req)
}

// TestLiveResetSurvivesRestart: a reset left APPLYING by a coordinator
// that stops (its SETID failing) is finished by the next coordinator on
// the same store at the group's next request; the shard stays paused in
// between and is granted again once DONE.
func TestLiveResetSurvivesRestart(t *testing.T) {
	store := newTestStore()
	down := &fakePositions{failing: errors.New("redis is down")}
	c1 := start(t, Options{Store: store, Positions: down})
	createGroup(t, c1, orders)
	a := &liveMember{id: "A"}
	a.beat(t, c1)
	a.beat(t, c1)
	r, err := c1.StartReset(testCtx(t), orders, group.ResetRequest{Target: group.ResetTarget{To: "EARLIEST"}, Shards: []int{1}, RequestedBy: "ops"})
	if err != nil || r.State != contract.ResetPausing {
		t.Fatalf("start: %+v, %v", r, err)
	}
	eventually.True(t, "APPLYING", func() bool {
		a.beat(t, c1)
		cur, err := c1.Reset(testCtx(t), orders, r.ResetID)
		return err == nil && cur.State == contract.ResetApplying
	})
	if a.resp.Assignment.AssignedShards.Contains(1) {
		t.Fatal("shard 1 assigned while APPLYING")
	}
	if err := c1.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}

	up := &fakePositions{}
	c2 := start(t, Options{Store: store, Positions: up})
	eventually.True(t, "DONE on the next coordinator", func() bool {
		a.beat(t, c2)
		cur, err := c2.Reset(testCtx(t), orders, r.ResetID)
		return err == nil && cur.State == contract.ResetDone
	})
	if id, ok := up.setTo(1); !ok || id != "0" {
		t.Fatalf("shard 1 set to %q (%v)", id, ok)
	}
	eventually.True(t, "shard 1 granted again", func() bool {
		a.beat(t, c2)
		return a.resp.Assignment.AssignedShards.Contains(1)
	})
}

// TestLiveResetFailsAfterRepeatedFailures: a SETID that keeps failing ends
// the reset FAILED and grants the shard again; a reset without Redis is
// refused.
func TestLiveResetFailsAfterRepeatedFailures(t *testing.T) {
	down := &fakePositions{failing: errors.New("redis is down")}
	c := start(t, Options{Store: newTestStore(), Positions: down})
	createGroup(t, c, orders)
	a := &liveMember{id: "A"}
	a.beat(t, c)
	a.beat(t, c)
	r, err := c.StartReset(testCtx(t), orders, group.ResetRequest{Target: group.ResetTarget{To: "LATEST"}, Shards: []int{0}, RequestedBy: "ops"})
	if err != nil {
		t.Fatal(err)
	}
	eventually.True(t, "FAILED", func() bool {
		a.beat(t, c)
		cur, err := c.Reset(testCtx(t), orders, r.ResetID)
		return err == nil && cur.State == contract.ResetFailed && cur.Error != ""
	})
	eventually.True(t, "shard 0 granted again", func() bool {
		a.beat(t, c)
		return a.resp.Assignment.AssignedShards.Contains(0)
	})

	noRedis := start(t, Options{Store: newTestStore()})
	createGroup(t, noRedis, orders)
	if _, err := noRedis.StartReset(testCtx(t), orders, group.ResetRequest{Target: group.ResetTarget{To: "LATEST"}, RequestedBy: "ops"}); !errors.Is(err, ErrNoPositions) {
		t.Fatalf("reset without Redis: %v", err)
	}
	if _, err := noRedis.PauseShards(testCtx(t), orders, contract.PauseRequest{Shards: []int{0}, RequestedBy: "ops"}); err != nil {
		t.Fatalf("pause without Redis: %v", err)
	}
}

// A forced reset sets the requested shards at once through Positions (the
// runtime performs the write; the HTTP edge only asks), names each
// shard's holders, stores nothing, and answers: INVALID_REQUEST for a
// shard the group does not have or a target Redis refuses,
// contract.ErrDataPlane when Redis fails, GROUP_NOT_FOUND for a group not
// stored, ErrNoPositions without Redis.
func TestForceReset(t *testing.T) {
	pos := &fakePositions{}
	store := newTestStore()
	c := start(t, Options{Store: store, Positions: pos})
	createGroup(t, c, orders)
	a := &liveMember{id: "A"}
	a.beat(t, c)
	a.beat(t, c)
	ctx := testCtx(t)
	writes := store.writeCalls()
	req := group.ResetRequest{Target: group.ResetTarget{To: "ID", EntryID: "5-0"}, Shards: []int{3, 1, 1}, RequestedBy: "ops"}
	res, err := c.ForceReset(ctx, orders, req)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Forced || res.To != "ID" || res.StreamPrefix != orders.StreamPrefix || len(res.Shards) != 2 || res.Shards[0].ShardIndex != 1 || res.Shards[1].ShardIndex != 3 {
		t.Fatalf("answer %+v, want shards 1 and 3, forced", res)
	}
	for _, s := range res.Shards {
		if s.StreamKey != contract.StreamKey(orders.StreamPrefix, s.ShardIndex) || *s.Before.LastDeliveredID != "7-0" || *s.After.LastDeliveredID != "5-0" ||
			len(s.HeldBy) != 1 || s.HeldBy[0] != "A" {
			t.Errorf("shard %+v, want 7-0 → 5-0 held by A", s)
		}
	}
	if id, ok := pos.setTo(3); !ok || id != "5-0" {
		t.Errorf("shard 3 set to %q", id)
	}
	if _, ok := pos.setTo(0); ok {
		t.Error("shard 0 set, not requested")
	}
	if n := store.writeCalls(); n != writes {
		t.Errorf("a forced reset wrote the group %d times", n-writes)
	}
	all, err := c.ForceReset(ctx, orders, group.ResetRequest{Target: group.ResetTarget{To: "ID", EntryID: "6-0"}, RequestedBy: "ops"})
	if err != nil || len(all.Shards) != 4 {
		t.Fatalf("every shard: %+v, %v", all, err)
	}

	_, err = c.ForceReset(ctx, orders, group.ResetRequest{Target: group.ResetTarget{To: "ID", EntryID: "5-0"}, Shards: []int{4}, RequestedBy: "ops"})
	wantCode(t, err, contract.CodeInvalidRequest)
	_, err = c.ForceReset(ctx, orders, group.ResetRequest{Target: group.ResetTarget{To: "ID", EntryID: "bad"}, RequestedBy: "ops"})
	wantCode(t, err, contract.CodeInvalidRequest)
	_, err = c.ForceReset(ctx, group.Key{StreamPrefix: "nobody", ConsumerGroup: "g"}, req)
	wantCode(t, err, contract.CodeGroupNotFound)
	pos.mu.Lock()
	pos.failing = errors.New("redis is down")
	pos.mu.Unlock()
	if _, err = c.ForceReset(ctx, orders, req); !errors.Is(err, contract.ErrDataPlane) {
		t.Errorf("Redis down: %v, want ErrDataPlane", err)
	}

	noRedis := start(t, Options{Store: newTestStore()})
	createGroup(t, noRedis, orders)
	if _, err := noRedis.ForceReset(ctx, orders, req); !errors.Is(err, ErrNoPositions) {
		t.Errorf("without Redis: %v, want ErrNoPositions", err)
	}
}

// A reset's dry run is a read of the coordinator: each requested shard's
// position now and what the reset would set (Positions.Preview), the
// members that would pause (the holders), nothing set and nothing stored;
// its refusals are the forced reset's.
func TestPreviewReset(t *testing.T) {
	pos := &fakePositions{}
	store := newTestStore()
	c := start(t, Options{Store: store, Positions: pos})
	createGroup(t, c, orders)
	a := &liveMember{id: "A"}
	a.beat(t, c)
	a.beat(t, c)
	ctx := testCtx(t)
	writes := store.writeCalls()
	p, err := c.PreviewReset(ctx, orders, group.ResetRequest{Target: group.ResetTarget{To: "ID", EntryID: "5-0"}, Shards: []int{2, 0}, RequestedBy: "ops"})
	if err != nil {
		t.Fatal(err)
	}
	if !p.DryRun || p.To != "ID" || len(p.Shards) != 2 || p.Shards[0].ShardIndex != 0 || p.Shards[1].ShardIndex != 2 {
		t.Fatalf("preview %+v, want shards 0 and 2", p)
	}
	for _, s := range p.Shards {
		if *s.Before.LastDeliveredID != "7-0" || s.After.LastDeliveredID != "5-0" || len(s.WouldPause) != 1 || s.WouldPause[0] != "A" {
			t.Errorf("shard %+v, want 7-0 → 5-0, pausing A", s)
		}
	}
	if _, set := pos.setTo(0); set || store.writeCalls() != writes {
		t.Error("a dry run set a position or wrote the group")
	}
	_, err = c.PreviewReset(ctx, orders, group.ResetRequest{Target: group.ResetTarget{To: "LATEST"}, Shards: []int{9}, RequestedBy: "ops"})
	wantCode(t, err, contract.CodeInvalidRequest)
	_, err = c.PreviewReset(ctx, group.Key{StreamPrefix: "nobody", ConsumerGroup: "g"}, group.ResetRequest{Target: group.ResetTarget{To: "LATEST"}, RequestedBy: "ops"})
	wantCode(t, err, contract.CodeGroupNotFound)
	pos.mu.Lock()
	pos.failing = errors.New("redis is down")
	pos.mu.Unlock()
	if _, err = c.PreviewReset(ctx, orders, group.ResetRequest{Target: group.ResetTarget{To: "LATEST"}, RequestedBy: "ops"}); !errors.Is(err, contract.ErrDataPlane) {
		t.Errorf("Redis down: %v, want ErrDataPlane", err)
	}
}
