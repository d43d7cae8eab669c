package httpapi

import (
	"net/http"
	"strings"
	"testing"

	"github.com/redis-stream-coordinator/coordinator/contract"
)

// TestGroupNamesCannotShareAKey: stream ka:kb + group kc and stream ka +
// group kb:kc would both be the Redis record <kp>:{ka:kb:kc}:metadata
// (issue 21, defect 3), so a consumer group name with ':' (other than its
// prefix's own, the stream-level group) is refused on every route that
// names one, and so is a pair that reads as a stream-level group.
func TestGroupNamesCannotShareAKey(t *testing.T) {
	f := &fakeCoord{View: sampleView()}
	api := newTestAPI(f)
	body := `{"requestedBy":"t","reason":"r","targetShardCount":2}`
	if rec := do(api, "POST", contract.BasePath+"/streams/ka:kb/groups/kc", body); rec.Code != http.StatusCreated {
		t.Fatalf("ka:kb / kc: %d %s", rec.Code, rec.Body)
	}
	calls := f.Calls
	for _, rq := range []struct{ method, path string }{
		{"POST", "/streams/ka/groups/kb:kc"},
		{"GET", "/streams/ka/groups/kb:kc"},
		{"DELETE", "/streams/ka/groups/kb:kc"},
		{"POST", "/streams/ka/groups/kb:kc/scale"},
		{"POST", "/streams/ka/groups/kb:kc/members/m/heartbeat"},
		{"GET", "/monitoring/streams/ka/groups/kb:kc/members"},
		{"POST", "/streams/ka:kb:ka/groups/kb"},
	} {
		rec := do(api, rq.method, contract.BasePath+rq.path, body)
		if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), `"consumerGroup: must not`) {
			t.Errorf("%s %s: %d %s, want 400 naming the consumerGroup rule", rq.method, rq.path, rec.Code, rec.Body)
		}
	}
	if f.Calls != calls {
		t.Errorf("the coordinator was asked %d times", f.Calls-calls)
	}
	for _, path := range []string{"/streams/ka:kb", "/streams/ka:kb/groups/ka:kb"} {
		if rec := do(api, "POST", contract.BasePath+path, body); rec.Code != http.StatusCreated {
			t.Errorf("stream-level group %s: %d %s", path, rec.Code, rec.Body)
		}
	}
}
