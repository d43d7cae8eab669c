package membersim

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
)

// BenchmarkPost measures one heartbeat through Post (the member
// protocol's transport) against a server that echoes a settled answer.
func BenchmarkPost(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req contract.HeartbeatRequest
		body, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(body, &req)
		out, _ := json.Marshal(contract.HeartbeatResponse{ResponseTo: req.RequestID, Status: contract.StatusOK, MemberID: req.MemberID,
			MemberEpoch: 3, Assignment: contract.AssignmentPayload{AssignedShards: req.OwnedShards, MetadataVersion: 3}})
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(out)
	}))
	defer srv.Close()
	key := group.Key{StreamPrefix: "orders", ConsumerGroup: "workers"}
	req := contract.HeartbeatRequest{ProtocolVersion: 1, RequestID: "r-1", MemberID: "m-00001", MemberEpoch: 3, MetadataVersion: 3,
		RuntimeConsumerCapacity: &contract.Capacity{RuntimeMaxConcurrency: 1, AvailableConcurrency: 1}, OwnedShards: contract.Range(0, 5)}
	c := srv.Client()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Post(context.Background(), c, srv.URL, key, req); err != nil {
			b.Fatal(err)
		}
	}
}
