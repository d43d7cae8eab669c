package membersim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/redis-stream-coordinator/coordinator/client"
	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
)

// answer is a heartbeat response to req.
func answer(req contract.HeartbeatRequest, st contract.HeartbeatStatus, epoch int64, assigned contract.ShardSet) contract.HeartbeatResponse {
	return contract.HeartbeatResponse{ResponseTo: req.RequestID, Status: st, MemberID: req.MemberID, MemberEpoch: epoch,
		MetadataVersion: 1, Assignment: contract.AssignmentPayload{AssignedShards: assigned}}
}

func released(req contract.HeartbeatRequest) contract.ShardSet {
	var s []int
	for _, r := range req.RevokingShards {
		s = append(s, r.Shard.ShardIndex)
	}
	return contract.NewShardSet(s...)
}

func TestMemberFollowsTheProtocol(t *testing.T) {
	o := NewOracle()
	m := New("a", o)
	steps := []struct {
		status   contract.HeartbeatStatus
		epoch    int64
		assigned contract.ShardSet
		// what the next request must carry
		wantEpoch    int64
		wantOwned    contract.ShardSet
		wantReleased contract.ShardSet
	}{
		{contract.StatusOK, 2, contract.Range(0, 4), 2, contract.Range(0, 4), nil},
		{contract.StatusRevokePending, 3, contract.NewShardSet(0, 1, 7), 3, contract.NewShardSet(0, 1), contract.NewShardSet(2, 3)},
		{contract.StatusRetry, 9, nil, 3, contract.NewShardSet(0, 1), contract.NewShardSet(2, 3)},
		{contract.StatusOK, 3, contract.NewShardSet(0, 1, 7), 3, contract.NewShardSet(0, 1, 7), nil},
		{contract.StatusFencedMemberEpoch, 5, nil, 0, nil, nil},
	}
	req := m.Request()
	for i, st := range steps {
		m.Apply(req, answer(req, st.status, st.epoch, st.assigned))
		req = m.Request()
		if req.MemberEpoch != st.wantEpoch || !req.OwnedShards.Equal(st.wantOwned) || !released(req).Equal(st.wantReleased) {
			t.Fatalf("step %d (%s): request epoch %d owned %v released %v", i, st.status, req.MemberEpoch, req.OwnedShards, released(req))
		}
	}
	if r := o.Readers(); len(r) != 0 {
		t.Errorf("fenced member still reads %v", r)
	}

	m.Apply(req, answer(req, contract.StatusOK, 6, contract.NewShardSet(4)))
	m.Leave()
	req = m.Request()
	if req.MemberEpoch != -1 || len(req.OwnedShards) != 0 || !released(req).Equal(contract.NewShardSet(4)) {
		t.Fatalf("leave request %+v", req)
	}
	m.Apply(req, answer(req, contract.StatusRetry, 0, nil))
	if m.Done() {
		t.Fatal("done after RETRY")
	}
	m.Apply(req, answer(req, contract.StatusOK, -1, nil))
	if !m.Done() || len(o.Readers()) != 0 || len(o.Overlaps()) != 0 {
		t.Fatalf("after leaving: done %v readers %v overlaps %v", m.Done(), o.Readers(), o.Overlaps())
	}
}

func TestOracleReportsOverlaps(t *testing.T) {
	o := NewOracle()
	a, b := New("a", o), New("b", o)
	grant := func(m *Member, shards contract.ShardSet) {
		req := m.Request()
		m.Apply(req, answer(req, contract.StatusOK, 2, shards))
	}
	grant(a, contract.NewShardSet(0, 1))
	grant(b, contract.NewShardSet(2))
	grant(a, contract.NewShardSet(0))
	grant(b, contract.NewShardSet(1, 2))
	if ov := o.Overlaps(); len(ov) != 0 {
		t.Fatalf("hand-over after release reported: %v", ov)
	}
	grant(a, contract.NewShardSet(0, 2))
	if ov := o.Overlaps(); len(ov) != 1 {
		t.Fatalf("overlaps %v, want one for shard 2", ov)
	}
	if r := o.Readers(); !slices.Equal(r[2], []string{"b", "a"}) || !slices.Equal(r[1], []string{"b"}) {
		t.Errorf("readers %v", r)
	}
}

func TestHeartbeatOverHTTP(t *testing.T) {
	var status int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/coord/v1/streams/orders/groups/workers/members/m-1/heartbeat" {
			t.Errorf("%s %s", r.Method, r.URL.Path)
		}
		var req contract.HeartbeatRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			t.Error(err)
		}
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(answer(req, contract.StatusOK, 2, contract.NewShardSet(3)))
	}))
	defer srv.Close()
	m := New("m-1", nil)
	key := group.Key{StreamPrefix: "orders", ConsumerGroup: "workers"}

	status = http.StatusServiceUnavailable
	_, err := Heartbeat(context.Background(), srv.Client(), srv.URL+"/coord/v1", key, m)
	if se, ok := errors.AsType[*client.APIError](err); !ok || se.StatusCode != 503 || m.Epoch() != 0 {
		t.Fatalf("503: %v, epoch %d", err, m.Epoch())
	}
	status = http.StatusOK
	resp, err := Heartbeat(context.Background(), srv.Client(), srv.URL+"/coord/v1", key, m)
	if err != nil || resp.Status != contract.StatusOK || m.Epoch() != 2 || !m.Owned().Equal(contract.NewShardSet(3)) {
		t.Fatalf("200: %+v %v, epoch %d owned %v", resp, err, m.Epoch(), m.Owned())
	}
}

func TestSettled(t *testing.T) {
	owning := func(sets ...contract.ShardSet) []*Member {
		var ms []*Member
		for i, s := range sets {
			m := New(fmt.Sprint(i), nil)
			req := m.Request()
			m.Apply(req, answer(req, contract.StatusOK, 1, s))
			ms = append(ms, m)
		}
		return ms
	}
	for name, tc := range map[string]struct {
		members []*Member
		want    bool
	}{
		"balanced":     {owning(contract.NewShardSet(0, 1), contract.NewShardSet(2)), true},
		"unbalanced":   {owning(contract.NewShardSet(0, 1, 2), nil), false},
		"shard unread": {owning(contract.NewShardSet(0), contract.NewShardSet(1)), false},
		"read twice":   {owning(contract.NewShardSet(0, 1), contract.NewShardSet(1, 2)), false},
		"out of range": {owning(contract.NewShardSet(0, 1), contract.NewShardSet(2, 3)), false},
	} {
		if got := Settled(3, tc.members); got != tc.want {
			t.Errorf("%s: Settled = %v", name, got)
		}
	}
}

func TestStopReadingKeepsTheEpochAndReportsTheRelease(t *testing.T) {
	o := NewOracle()
	m := New("a", o)
	req := m.Request()
	m.Apply(req, answer(req, contract.StatusOK, 2, contract.NewShardSet(0, 1)))
	stale := m.Request() // in flight while the local lease lapses
	m.StopReading()
	req = m.Request()
	if req.MemberEpoch != 2 || len(req.OwnedShards) != 0 || !released(req).Equal(contract.NewShardSet(0, 1)) || len(o.Readers()) != 0 {
		t.Fatalf("after StopReading: request %+v, readers %v", req, o.Readers())
	}
	// The answer to the older request assigns shard 1 again: it is read,
	// so it is no longer reported released; shard 0 still is.
	m.Apply(stale, answer(stale, contract.StatusOK, 2, contract.NewShardSet(1)))
	req = m.Request()
	if !req.OwnedShards.Equal(contract.NewShardSet(1)) || !released(req).Equal(contract.NewShardSet(0)) {
		t.Fatalf("after the late answer: owned %v released %v", req.OwnedShards, released(req))
	}
}
