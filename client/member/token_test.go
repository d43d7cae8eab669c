package member

import (
	"testing"

	"github.com/redis-stream-coordinator/coordinator/contract"
)

// A shard's token is the one of the answer that started it, kept while the
// member owns the shard (later answers repeat it), forgotten when the shard
// stops, and taken afresh from the answer that starts it again.
func TestTokenFollowsTheGrant(t *testing.T) {
	s := New(Config{ID: "m"})
	withTokens := func(resp contract.HeartbeatResponse, tokens ...contract.ShardFence) contract.HeartbeatResponse {
		resp.Assignment.FencingTokens = tokens
		return resp
	}
	req := s.Request()
	s.Apply(req, withTokens(ok(req, 3, 0, 1), contract.ShardFence{ShardIndex: 0, FencingToken: 3}, contract.ShardFence{ShardIndex: 1, FencingToken: 3}), at(0), at(1))
	if s.Token(0) != 3 || s.Token(1) != 3 || s.Token(2) != 0 {
		t.Fatalf("tokens after the join: %d %d %d", s.Token(0), s.Token(1), s.Token(2))
	}
	req = s.Request()
	s.Apply(req, withTokens(ok(req, 5, 0), contract.ShardFence{ShardIndex: 0, FencingToken: 3}), at(100), at(101))
	if s.Token(0) != 3 || s.Token(1) != 0 {
		t.Fatalf("tokens after shard 1's revocation: %d %d", s.Token(0), s.Token(1))
	}
	s.SetInFlight(1, 0)
	req = s.Request()
	s.Apply(req, withTokens(ok(req, 7, 0, 1), contract.ShardFence{ShardIndex: 0, FencingToken: 3}, contract.ShardFence{ShardIndex: 1, FencingToken: 7}), at(200), at(201))
	if s.Token(0) != 3 || s.Token(1) != 7 {
		t.Fatalf("tokens after shard 1's new grant: %d %d", s.Token(0), s.Token(1))
	}
	req = s.Request()
	s.Apply(req, ok(req, 7, 0, 1), at(300), at(301)) // an answer without tokens changes none
	if s.Token(0) != 3 || s.Token(1) != 7 {
		t.Fatalf("tokens after an answer without tokens: %d %d", s.Token(0), s.Token(1))
	}
}
