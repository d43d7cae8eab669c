package member

import (
	"testing"
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
)

var t0 = time.Unix(1_000_000, 0)

func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

func ok(req contract.HeartbeatRequest, epoch int64, shards ...int) contract.HeartbeatResponse {
	return contract.HeartbeatResponse{ResponseTo: req.RequestID, Status: contract.StatusOK, MemberID: req.MemberID, MemberEpoch: epoch,
		MetadataVersion: 1, HeartbeatIntervalMs: 100, MemberLeaseTtlMs: 1000,
		Assignment: contract.AssignmentPayload{AssignedShards: contract.NewShardSet(shards...)}}
}

func status(req contract.HeartbeatRequest, st contract.HeartbeatStatus) contract.HeartbeatResponse {
	return contract.HeartbeatResponse{ResponseTo: req.RequestID, Status: st, MemberID: req.MemberID, MemberEpoch: req.MemberEpoch}
}

func reports(req contract.HeartbeatRequest) map[int]contract.RevokeReport {
	out := map[int]contract.RevokeReport{}
	for _, r := range req.RevokingShards {
		out[r.Shard.ShardIndex] = r
	}
	return out
}

// A revoked shard is stopped at once, reported DRAINING with its
// in-flight count, then REVOKED until an answer acknowledges it.
func TestRevokeDrainsThenReleases(t *testing.T) {
	s := New(Config{ID: "m"})
	req := s.Request()
	if req.MemberEpoch != 0 || len(req.OwnedShards) != 0 {
		t.Fatalf("join %+v", req)
	}
	e := s.Apply(req, ok(req, 3, 0, 1), at(0), at(5))
	if !contract.NewShardSet(e.Start...).Equal(contract.NewShardSet(0, 1)) || s.Interval() != 100*time.Millisecond || s.LeaseTTL() != time.Second {
		t.Fatalf("join effects %+v interval %v ttl %v", e, s.Interval(), s.LeaseTTL())
	}
	if !s.MayRead(1, at(50)) {
		t.Fatal("may not read an assigned shard")
	}
	req = s.Request()
	e = s.Apply(req, ok(req, 4, 0), at(100), at(105))
	if len(e.Stop) != 1 || e.Stop[0] != 1 || s.MayRead(1, at(106)) {
		t.Fatalf("revoke effects %+v", e)
	}
	s.SetInFlight(1, 3)
	req = s.Request()
	if r := reports(req)[1]; r.State != contract.RevokeDraining || r.InFlight != 3 || !req.OwnedShards.Equal(contract.NewShardSet(0)) {
		t.Fatalf("draining report %+v", req)
	}
	s.Apply(req, ok(req, 4, 0), at(200), at(205))
	if !s.SetInFlight(1, 0) {
		t.Fatal("not released at 0 in flight")
	}
	req = s.Request()
	if r := reports(req)[1]; !r.Terminal() {
		t.Fatalf("released report %+v", req.RevokingShards)
	}
	s.Apply(req, ok(req, 4, 0), at(300), at(305))
	if req = s.Request(); len(req.RevokingShards) != 0 {
		t.Fatalf("REVOKED reported after it was answered: %+v", req.RevokingShards)
	}
}

// The local lease ends one TTL after the send time of the last accepted
// heartbeat; RETRY does not renew it; reads stop starting in its last
// tenth.
func TestLocalLease(t *testing.T) {
	s := New(Config{ID: "m", LeaseTTL: 2 * time.Second})
	req := s.Request()
	s.Apply(req, ok(req, 1, 0), at(0), at(900))
	if s.LeaseTTL() != 2*time.Second {
		t.Fatalf("override lost: %v", s.LeaseTTL())
	}
	req = s.Request()
	s.Apply(req, status(req, contract.StatusRetry), at(1000), at(1001))
	if !s.MayRead(0, at(1799)) || s.MayRead(0, at(1800)) || !s.Expiring(at(1800)) {
		t.Fatal("lease margin")
	}
	if e := s.Tick(at(1999)); len(e.Stop) != 0 {
		t.Fatalf("lapsed early: %+v", e)
	}
	if e := s.Tick(at(2000)); !e.Lapsed || len(e.Stop) != 1 {
		t.Fatalf("lapse %+v", e)
	}
	s.SetInFlight(0, 0)
	// An OK answer to a heartbeat sent too long ago assigns nothing.
	req = s.Request()
	if e := s.Apply(req, ok(req, 1, 0), at(2100), at(4000)); len(e.Start) != 0 {
		t.Fatalf("started on a stale answer: %+v", e)
	}
}

// Fenced: everything stops, the rejoin reports nothing, and what is still
// in flight is reported DRAINING once the member has joined again.
func TestFencedRejoinKeepsDraining(t *testing.T) {
	s := New(Config{ID: "m"})
	req := s.Request()
	s.Apply(req, ok(req, 2, 0), at(0), at(1))
	req = s.Request()
	e := s.Apply(req, status(req, contract.StatusFencedMemberEpoch), at(100), at(101))
	if e.Reset != contract.StatusFencedMemberEpoch || len(e.Stop) != 1 || s.Epoch() != 0 {
		t.Fatalf("fenced effects %+v", e)
	}
	s.SetInFlight(0, 2)
	req = s.Request()
	if req.MemberEpoch != 0 || len(req.OwnedShards)+len(req.RevokingShards) != 0 {
		t.Fatalf("rejoin %+v", req)
	}
	if e := s.Apply(req, ok(req, 5, 0), at(200), at(201)); len(e.Start) != 0 {
		t.Fatalf("a draining shard restarted: %+v", e)
	}
	req = s.Request()
	if r := reports(req)[0]; req.MemberEpoch != 5 || r.State != contract.RevokeDraining || r.InFlight != 2 {
		t.Fatalf("after rejoin %+v", req)
	}
}

// A leave keeps heartbeating at the member's epoch while something is in
// flight and sends epoch −1 only after.
func TestLeaveAfterDrain(t *testing.T) {
	s := New(Config{ID: "m"})
	req := s.Request()
	s.Apply(req, ok(req, 2, 0, 1), at(0), at(1))
	e := s.Leave()
	if len(e.Stop) != 2 || s.MayRead(0, at(2)) {
		t.Fatalf("leave effects %+v", e)
	}
	s.SetInFlight(0, 1)
	s.SetInFlight(1, 0)
	req = s.Request()
	if req.MemberEpoch != 2 || len(req.OwnedShards) != 0 || reports(req)[0].State != contract.RevokeDraining || !reports(req)[1].Terminal() {
		t.Fatalf("draining leave %+v", req)
	}
	if e := s.Apply(req, ok(req, 2, 0, 1), at(100), at(101)); len(e.Start) != 0 || s.Done() {
		t.Fatalf("leaving member started %+v", e)
	}
	s.SetInFlight(0, 0)
	req = s.Request()
	if req.MemberEpoch != -1 {
		t.Fatalf("leave not sent: %+v", req)
	}
	if e := s.Apply(req, ok(req, -1), at(200), at(201)); !e.Left || !s.Done() {
		t.Fatalf("leave answer %+v", e)
	}
	// A member that never joined is done at once.
	n := New(Config{ID: "n"})
	if n.Leave(); !n.Done() {
		t.Fatal("unjoined member not done")
	}
}
