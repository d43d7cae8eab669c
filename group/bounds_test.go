package group

import (
	"strings"
	"testing"

	"github.com/redis-stream-coordinator/coordinator/contract"
)

// TestEveryInputBounded: oversized strings and out-of-range shard numbers
// and counts are refused by the one validator of each request (issue 21,
// defect 4: a 1,000,000-byte memberName and owned shards -1 and 2^62 were
// accepted).
func TestEveryInputBounded(t *testing.T) {
	s := DefaultSettings()
	long := strings.Repeat("x", 1_000_000)
	ok := func() *contract.HeartbeatRequest {
		return &contract.HeartbeatRequest{ProtocolVersion: 1, RequestID: "r", MemberID: "m", RuntimeConsumerCapacity: &contract.Capacity{RuntimeMaxConcurrency: 1, AvailableConcurrency: 1}}
	}
	for name, tc := range map[string]struct {
		mod   func(*contract.HeartbeatRequest)
		field string
	}{
		"memberName": {func(r *contract.HeartbeatRequest) { r.MemberName = &long }, "memberName"},
		"requestId":  {func(r *contract.HeartbeatRequest) { r.RequestID = long }, "requestId"},
		"owned -1":   {func(r *contract.HeartbeatRequest) { r.OwnedShards = contract.ShardSet{-1} }, "ownedShards[0].shardIndex"},
		"owned 2^62": {func(r *contract.HeartbeatRequest) { r.OwnedShards = contract.ShardSet{0, 1 << 62} }, "ownedShards[1].shardIndex"},
		"revoking shard": {func(r *contract.HeartbeatRequest) {
			r.RevokingShards = []contract.RevokeReport{{Shard: contract.Shard{ShardIndex: -3}}}
		}, "revokingShards[0].shard.shardIndex"},
		"inFlight": {func(r *contract.HeartbeatRequest) { r.RevokingShards = []contract.RevokeReport{{InFlight: -1}} }, "revokingShards[0].inFlight"},
		"progress shard": {func(r *contract.HeartbeatRequest) {
			r.ShardProgress = []contract.ShardProgress{{Shard: contract.Shard{ShardIndex: s.MaxShardCount}}}
		}, "shardProgress[0].shard.shardIndex"},
		"progress key":  {func(r *contract.HeartbeatRequest) { r.ShardProgress = []contract.ShardProgress{{StreamKey: &long}} }, "shardProgress[0].streamKey"},
		"progress id":   {func(r *contract.HeartbeatRequest) { r.ShardProgress = []contract.ShardProgress{{LastAckedID: &long}} }, "shardProgress[0].lastAckedId"},
		"pending count": {func(r *contract.HeartbeatRequest) { r.ShardProgress = []contract.ShardProgress{{PendingCount: -1}} }, "shardProgress[0].pendingCount"},
	} {
		req := ok()
		tc.mod(req)
		err := ValidateHeartbeat(req, s)
		if err == nil || !strings.HasPrefix(err.(*Error).Message, tc.field+":") || strings.Contains(err.Error(), ";") {
			t.Errorf("%s: %v, want one violation of %s", name, err, tc.field)
		}
	}
	if err := ValidateHeartbeat(ok(), s); err != nil {
		t.Fatal(err)
	}
	reason := long
	if err := ValidateCreate(&contract.CreateRequest{RequestedBy: long}, s); err == nil || !strings.Contains(err.Error(), "requestedBy: must be at most 200 bytes") {
		t.Errorf("create requestedBy: %v", err)
	}
	if err := ValidateScale(&contract.ScaleRequest{TargetShardCount: new(int), RequestedBy: "x", Reason: &reason}, s); err == nil || !strings.Contains(err.Error(), "reason: must be at most 1000 bytes") {
		t.Errorf("scale reason: %v", err)
	}
	if err := ValidateDelete(&contract.DeleteRequest{RequestedBy: "x", Reason: long}); err == nil || !strings.Contains(err.Error(), "reason") {
		t.Errorf("delete reason: %v", err)
	}
	if err := ValidateRollback(&contract.RollbackRequest{RequestedBy: long, Reason: "r"}); err == nil || !strings.Contains(err.Error(), "requestedBy") {
		t.Errorf("rollback requestedBy: %v", err)
	}
}

// Validating a valid heartbeat allocates the same however many shards it
// lists: field names are formatted only for an item that fails.
func TestValidHeartbeatAllocationsDoNotGrowWithShards(t *testing.T) {
	s := DefaultSettings()
	s.MaxShardCount = 1000
	heartbeat := func(shards int) *contract.HeartbeatRequest {
		req := &contract.HeartbeatRequest{ProtocolVersion: 1, RequestID: "r", MemberID: "m", RuntimeConsumerCapacity: &contract.Capacity{RuntimeMaxConcurrency: 1}}
		for i := range shards {
			req.OwnedShards = append(req.OwnedShards, i)
			req.ShardProgress = append(req.ShardProgress, contract.ShardProgress{Shard: contract.Shard{ShardIndex: i}})
			req.RevokingShards = append(req.RevokingShards, contract.RevokeReport{Shard: contract.Shard{ShardIndex: 500 + i}})
		}
		return req
	}
	one, many := heartbeat(1), heartbeat(500)
	if err := ValidateHeartbeat(many, s); err != nil {
		t.Fatal(err)
	}
	allocs := func(req *contract.HeartbeatRequest) float64 {
		return testing.AllocsPerRun(10, func() { _ = ValidateHeartbeat(req, s) })
	}
	if a, b := allocs(one), allocs(many); b != a {
		t.Errorf("%.0f allocations with 500 shards in each list, %.0f with 1", b, a)
	}
	req := many
	req.ShardProgress[7].PendingCount = -1
	want := "shardProgress[7].pendingCount: must be greater than or equal to 0"
	if err := ValidateHeartbeat(req, s); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v; want it to name %q", err, want)
	}
}
