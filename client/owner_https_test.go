package client

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/eventually"
)

// An owner hint is followed, keeping the configured base path, unless it
// would leave https for another scheme.
func TestOwnerBaseNeverLeavesHTTPS(t *testing.T) {
	for _, tc := range []struct{ base, owner, want string }{
		{"https://a:1/coord/v1", "https://b:2", "https://b:2/coord/v1"},
		{"https://a:1/coord/v1", "http://b:2", ""},
		{"https://a:1/coord/v1", "HTTP://b:2", ""},
		{"https://a:1/coord/v1", "ws://b:2", ""},
		{"https://a:1/coord/v1", "http://a:1", ""},
		{"http://a:1/coord/v1", "https://b:2", "https://b:2/coord/v1"},
		{"http://a:1/coord/v1", "http://b:2", "http://b:2/coord/v1"},
		{"http://a:1/coord/v1", "http://a:1", ""},
	} {
		if got := NewCoordinator(tc.base).ownerBase(tc.owner); got != tc.want {
			t.Errorf("base %s, owner %s: %q, want %q", tc.base, tc.owner, got, tc.want)
		}
	}
}

// A member configured with an https coordinator keeps heartbeating there
// when the answers name an http owner.
func TestMemberIgnoresHTTPOwnerFromHTTPS(t *testing.T) {
	plain := newFake(t, func(int, contract.HeartbeatRequest) (contract.HeartbeatResponse, int) { return ok(1, 0), 200 })
	var hits atomic.Int64
	secure := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req contract.HeartbeatRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		hits.Add(1)
		resp := ok(1, 0)
		resp.ResponseTo, resp.MemberID, resp.HeartbeatIntervalMs = req.RequestID, req.MemberID, 10
		w.Header().Set(OwnerHeader, plain.httpSrv.URL)
		_ = json.NewEncoder(w).Encode(resp)
	}))
	defer secure.Close()

	m, err := NewMember(MemberConfig{Coordinator: NewCoordinator(secure.URL+"/coord/v1", WithHTTPClient(secure.Client())),
		StreamPrefix: "p", Group: "g", MemberID: "m"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	eventually.True(t, "five heartbeats answered with an http owner", func() bool { return hits.Load() >= 5 })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := len(plain.requests()); n != 0 {
		t.Errorf("%d heartbeats left https for the http owner", n)
	}
}
