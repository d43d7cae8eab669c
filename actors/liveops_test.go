package actors

import (
	"context"
	"errors"
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

func (m *liveMember) beat(t *testing.T, c *Coordinator) {
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
	c1, err := New(Options{Store: store, Settings: group.DefaultSettings(), Positions: down})
	if err != nil {
		t.Fatal(err)
	}
	createGroup(t, c1, orders)
	a := &liveMember{id: "A"}
	a.beat(t, c1)
	a.beat(t, c1)
	r, err := c1.StartReset(testCtx(t), orders, group.ResetRequest{Target: group.ResetTarget{To: "EARLIEST"}, Shards: []int{1}, RequestedBy: "ops"})
	if err != nil || r.State != group.ResetPausing {
		t.Fatalf("start: %+v, %v", r, err)
	}
	eventually.True(t, "APPLYING", func() bool {
		a.beat(t, c1)
		cur, err := c1.Reset(testCtx(t), orders, r.ResetID)
		return err == nil && cur.State == group.ResetApplying
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
		return err == nil && cur.State == group.ResetDone
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
		return err == nil && cur.State == group.ResetFailed && cur.Error != ""
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
	if _, err := noRedis.PauseShards(testCtx(t), orders, group.PauseRequest{Shards: []int{0}, RequestedBy: "ops"}); err != nil {
		t.Fatalf("pause without Redis: %v", err)
	}
}
