package httpapi_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/eventually"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/membersim"
	"github.com/redis-stream-coordinator/coordinator/streams"
)

// testPositions performs the live-reset steps on the test Redis; while
// failing is set, every SetID fails with it (Redis refusing or down).
type testPositions struct {
	streams.ResetPositions
	mu      sync.Mutex
	failing error
}

func (p *testPositions) failWith(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.failing = err
}

func (p *testPositions) SetID(ctx context.Context, key group.Key, s group.ShardReset) (*contract.GroupPosition, error) {
	p.mu.Lock()
	err := p.failing
	p.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return p.ResetPositions.SetID(ctx, key, s)
}

// holderOf returns the member of ms that reads shard s, nil for none.
func holderOf(ms []*membersim.Member, s int) *membersim.Member {
	for _, m := range ms {
		if m.Owned().Contains(s) {
			return m
		}
	}
	return nil
}

func (e *reshardEnv) liveReset(id string) contract.LiveReset {
	e.t.Helper()
	var r contract.LiveReset
	e.expect("GET", e.monitoringPath()+"/offsets/resets/"+id, nil, http.StatusOK, &r)
	return r
}

// waitReset runs heartbeat rounds of ms (no new entries) until reset id
// is in state want.
func (e *reshardEnv) waitReset(id string, want contract.ResetState, ms []*membersim.Member) contract.LiveReset {
	e.t.Helper()
	var r contract.LiveReset
	eventually.True(e.t, fmt.Sprintf("reset %s %s", id, want), func() bool {
		e.round(0, ms...)
		r = e.liveReset(id)
		return r.State == want
	})
	return r
}

// TestLiveResetStatesEndToEnd drives a live reset through each state on
// real streams with members reading them: a dry run changes nothing;
// PAUSING while the shard's reader holds it; APPLYING once it released
// it (held there by a failing SETID, with nobody reading the shard); DONE
// once set, the shard granted again and its entries delivered again;
// RESET_IN_PROGRESS for a second reset meanwhile; FAILED for a target
// Redis refuses, the shard granted again; BY moves relative to the
// position. No shard is ever read by two members (round checks).
func TestLiveResetStatesEndToEnd(t *testing.T) {
	e := newReshardEnv(t)
	ms := e.settledGroup(2, 2)
	for range 5 {
		e.add(0, "x")
	}
	e.add(1, "y")
	for _, m := range ms {
		e.consume(m)
	}
	holder := holderOf(ms, 0)
	last := e.groupInfo(0, e.key.ConsumerGroup).LastDeliveredID
	n := e.rdb.XLen(t.Context(), e.streamKey(0)).Val() // every entry of shard 0, all delivered
	reset := e.groupPath() + "/offsets/reset"

	var preview struct {
		DryRun bool `json:"dryRun"`
		Shards []struct {
			WouldPause []string      `json:"wouldPause"`
			Before     shardPosition `json:"before"`
			After      struct {
				LastDeliveredID string `json:"lastDeliveredId"`
			} `json:"after"`
			Redelivered int64 `json:"redelivered"`
		} `json:"shards"`
	}
	e.expect("POST", reset, map[string]any{"to": "EARLIEST", "shards": []int{0}, "dryRun": true, "requestedBy": "ops"}, http.StatusOK, &preview)
	if p := preview.Shards; !preview.DryRun || len(p) != 1 || p[0].Redelivered != n || p[0].After.LastDeliveredID != "0" ||
		!slices.Equal(p[0].WouldPause, []string{holder.ID}) || *p[0].Before.LastDeliveredID != last {
		t.Fatalf("dry run %+v", preview)
	}
	if g := e.groupInfo(0, e.key.ConsumerGroup); g.LastDeliveredID != last || g.Lag != 0 {
		t.Fatalf("the dry run moved the group: %+v", g)
	}

	e.positions.failWith(errors.New("redis is down"))
	var r contract.LiveReset
	e.expect("POST", reset, map[string]any{"to": "EARLIEST", "shards": []int{0}, "requestedBy": "ops", "reason": "replay"}, http.StatusOK, &r)
	if r.State != contract.ResetPausing || len(r.Shards) != 1 || !slices.Equal(r.Shards[0].PausedFrom, []string{holder.ID}) {
		t.Fatalf("started %+v", r)
	}
	e.expectError("POST", reset, map[string]any{"to": "LATEST", "shards": []int{1}, "requestedBy": "ops"}, http.StatusConflict, "RESET_IN_PROGRESS")
	r = e.waitReset(r.ResetID, contract.ResetApplying, ms)
	if h := holderOf(ms, 0); h != nil {
		t.Fatalf("%s reads shard 0 while the reset is APPLYING", h.ID)
	}
	if g := e.group(); !g.PausedShards.Contains(0) || g.ActiveReset == nil {
		t.Fatalf("group view while APPLYING: %+v", g)
	}
	if s := r.Shards[0]; s.SetID != "0" || *s.Before.LastDeliveredID != last || *s.Before.Lag != 0 {
		t.Fatalf("APPLYING %+v", s)
	}
	// Counted while nobody reads shard 0: the round that sees the reset
	// DONE may already grant the shard and read it again.
	before := e.delivered[0]
	e.positions.failWith(nil)
	r = e.waitReset(r.ResetID, contract.ResetDone, ms)
	if a := r.Shards[0].After; *a.LastDeliveredID != "0-0" || *a.Lag != n || *a.Pending != 0 || r.ApplyingAt == 0 {
		t.Fatalf("DONE %+v", r.Shards[0])
	}
	eventually.True(t, "shard 0 read again", func() bool {
		e.round(0, ms...)
		return holderOf(ms, 0) != nil
	})
	e.consume(holderOf(ms, 0))
	if got := e.delivered[0] - before; int64(got) != n {
		t.Fatalf("after the reset to EARLIEST %d entries delivered again, want %d", got, n)
	}

	// BY: two entries back on shard 0 (everything is read again above).
	newest := e.rdb.XRevRangeN(t.Context(), e.streamKey(0), "+", "-", 3).Val()
	r = contract.LiveReset{}
	e.expect("POST", reset, map[string]any{"to": "BY", "by": -2, "shards": []int{0}, "requestedBy": "ops"}, http.StatusOK, &r)
	r = e.waitReset(r.ResetID, contract.ResetDone, ms)
	if a := r.Shards[0].After; len(newest) != 3 || a == nil || *a.LastDeliveredID != newest[2].ID {
		t.Fatalf("BY -2: %+v, want %s", r.Shards[0], newest[2].ID)
	}

	// FAILED: the shard is granted again, the position untouched.
	e.positions.failWith(fmt.Errorf("%w: refused", group.ErrResetTarget))
	r = contract.LiveReset{}
	e.expect("POST", reset, map[string]any{"to": "LATEST", "shards": []int{1}, "requestedBy": "ops"}, http.StatusOK, &r)
	r = e.waitReset(r.ResetID, contract.ResetFailed, ms)
	e.positions.failWith(nil)
	if r.Error == "" || e.group().ActiveReset != nil {
		t.Fatalf("FAILED %+v", r)
	}
	eventually.True(t, "shard 1 read again", func() bool {
		e.round(0, ms...)
		return holderOf(ms, 1) != nil
	})
	var list contract.ResetList
	e.expect("GET", e.monitoringPath()+"/offsets/resets", nil, http.StatusOK, &list)
	if len(list.Resets) != 3 {
		t.Fatalf("%d resets listed", len(list.Resets))
	}
	e.expectError("GET", e.monitoringPath()+"/offsets/resets/nope", nil, http.StatusNotFound, "RESET_NOT_FOUND")
}

// TestPauseEndToEnd: a paused shard is released by its reader and read by
// nobody, shows in the group, assignment and paused views; resumed, it is
// read again.
func TestPauseEndToEnd(t *testing.T) {
	e := newReshardEnv(t)
	ms := e.settledGroup(2, 2)
	var v contract.PausedView
	e.expect("POST", e.groupPath()+"/shards/pause", map[string]any{"shards": []int{1}, "requestedBy": "ops", "reason": "poison"}, http.StatusOK, &v)
	if !v.PausedShards.Equal(contract.NewShardSet(1)) || len(v.Pausing) != 1 {
		t.Fatalf("pause %+v", v)
	}
	e.expectError("POST", e.groupPath()+"/shards/pause", map[string]any{"shards": []int{2}, "requestedBy": "ops"}, http.StatusBadRequest, "INVALID_REQUEST")
	eventually.True(t, "shard 1 released", func() bool {
		e.round(4, ms...)
		return holderOf(ms, 1) == nil
	})
	eventually.True(t, "nobody holds shard 1", func() bool {
		e.round(4, ms...)
		v = contract.PausedView{} // decoding into a map merges
		e.expect("GET", e.monitoringPath()+"/paused-shards", nil, http.StatusOK, &v)
		return len(v.Pausing) == 0
	})
	if !v.PausedShards.Contains(1) {
		t.Fatalf("paused view %+v", v)
	}
	var a contract.AssignmentsView
	e.expect("GET", e.monitoringPath()+"/assignments", nil, http.StatusOK, &a)
	if !a.PausedShards.Contains(1) || len(a.InvariantViolations) != 0 {
		t.Fatalf("assignments %+v", a)
	}
	for range 3 {
		e.round(4, ms...)
		if holderOf(ms, 1) != nil {
			t.Fatal("a paused shard was granted")
		}
	}
	e.expect("POST", e.groupPath()+"/shards/resume", map[string]any{"shards": []int{1}, "requestedBy": "ops"}, http.StatusOK, &v)
	eventually.True(t, "shard 1 read again", func() bool {
		e.round(4, ms...)
		return holderOf(ms, 1) != nil
	})
	if g := e.group(); len(g.PausedShards) != 0 {
		t.Fatalf("paused after resume: %v", g.PausedShards)
	}
}
