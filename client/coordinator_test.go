package client

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/redis-stream-coordinator/coordinator/contract"
)

// A request refused with 503 GROUP_OWNED_ELSEWHERE or
// COORDINATOR_NOT_SERVING did not run, so the client sends it again after
// the answer's Retry-After, a bounded number of times; any other error is
// returned at once, and a heartbeat is never sent again here (the member
// retries within its lease).
func TestCoordinatorRetriesAGroupOwnedElsewhere(t *testing.T) {
	for _, tc := range []struct {
		name     string
		refusals int32 // answers before the 201
		code     string
		wantErr  bool
		requests int32
	}{
		{"views agree again", 2, "GROUP_OWNED_ELSEWHERE", false, 3},
		{"views never agree", 100, "GROUP_OWNED_ELSEWHERE", true, ownerRetries + 1},
		{"owner restarting", 3, "COORDINATOR_NOT_SERVING", false, 4},
		{"another 503", 100, "COORDINATOR_UNREACHABLE", true, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var requests atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if requests.Add(1) <= tc.refusals {
					w.Header().Set("Retry-After", "0")
					w.WriteHeader(http.StatusServiceUnavailable)
					_, _ = w.Write([]byte(`{"status":"SERVICE_UNAVAILABLE","errorCode":"` + tc.code + `","message":"m"}`))
					return
				}
				w.WriteHeader(http.StatusCreated)
				_, _ = w.Write([]byte(`{"streamPrefix":"orders","consumerGroup":"billing"}`))
			}))
			defer srv.Close()
			v, err := NewCoordinator(srv.URL).CreateGroup(t.Context(), "orders", "billing", 4, "test")
			if (err != nil) != tc.wantErr || !tc.wantErr && v.ConsumerGroup != "billing" {
				t.Fatalf("CreateGroup = %+v, %v; want an error: %v", v, err, tc.wantErr)
			}
			if tc.wantErr && !IsErrorCode(err, ErrorCode(tc.code)) {
				t.Fatalf("error %v, want %s", err, tc.code)
			}
			if got := requests.Load(); got != tc.requests {
				t.Fatalf("%d requests, want %d", got, tc.requests)
			}
			requests.Store(0)
			req := &contract.HeartbeatRequest{MemberID: "m-1", RequestID: "r-1"}
			if _, _, err := NewCoordinator(srv.URL).heartbeat(t.Context(), "", "orders", "billing", req); err == nil || requests.Load() != 1 {
				t.Fatalf("heartbeat: %v after %d requests, want the refusal after 1", err, requests.Load())
			}
		})
	}
}
