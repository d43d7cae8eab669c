package httpapi

import (
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
)

// noOperator is a StreamOperator whose every method panics: a route that
// uses it does Redis I/O from the edge.
type noOperator struct{ StreamOperator }

// A forced offset reset is the runtime's write, and its dry run the
// runtime's read: the handler validates the body, asks
// Runtime.ForceReset (PreviewReset) with the domain's request and
// answers its result, calling no StreamOperator method. Without Redis it answers
// 503 REDIS_NOT_CONFIGURED, and a Redis failure in the runtime
// (contract.ErrDataPlane) 503 REDIS_UNAVAILABLE.
func TestForcedResetIsTheCoordinators(t *testing.T) {
	f := &fakeCoord{View: sampleView()}
	api := newTestAPI(f, func(o *Options) { o.Streams = noOperator{} })
	path := contract.BasePath + "/streams/orders/groups/billing/offsets/reset"
	body := `{"to":"by","by":-2,"shards":[3,1],"force":true,"requestedBy":"ops","reason":"replay"}`
	wantJSON(t, do(api, "POST", path, body), http.StatusOK,
		`{"streamPrefix":"orders","consumerGroup":"billing","to":"BY","forced":true,"shards":null}`)
	want := group.ResetRequest{Target: group.ResetTarget{To: "BY", By: -2}, Shards: []int{3, 1}, RequestedBy: "ops", Reason: "replay"}
	if got := f.Forced; got == nil || got.Target != want.Target || !slices.Equal(got.Shards, want.Shards) ||
		got.RequestedBy != want.RequestedBy || got.Reason != want.Reason || f.Key != (group.Key{StreamPrefix: "orders", ConsumerGroup: "billing"}) {
		t.Fatalf("ForceReset asked %+v for %v, want %+v", got, f.Key, want)
	}
	errorOf(t, do(api, "POST", path, `{"to":"nowhere","force":true,"requestedBy":"ops"}`), http.StatusBadRequest, string(contract.CodeInvalidRequest))

	f.Err = fmt.Errorf("force reset: %w: connection refused", contract.ErrDataPlane)
	errorOf(t, do(api, "POST", path, body), http.StatusServiceUnavailable, string(contract.CodeRedisUnavailable))

	// The dry run is the coordinator's read as well.
	f.Err, f.Forced = nil, nil
	wantJSON(t, do(api, "POST", path, `{"to":"latest","dryRun":true,"requestedBy":"ops"}`), http.StatusOK,
		`{"streamPrefix":"orders","consumerGroup":"billing","to":"LATEST","dryRun":true,"shards":null}`)
	if f.Forced == nil || f.Forced.Target.To != "LATEST" {
		t.Fatalf("PreviewReset asked %+v", f.Forced)
	}

	noRedis := &fakeCoord{}
	errorOf(t, do(newTestAPI(noRedis), "POST", path, body), http.StatusServiceUnavailable, string(contract.CodeRedisNotConfigured))
	if noRedis.Forced != nil {
		t.Error("a forced reset without Redis reached the coordinator")
	}
}
