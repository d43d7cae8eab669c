package httpapi

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// Issue 42 item 9 over HTTP: a heartbeat claiming a runtimeMaxConcurrency
// of 2^62, or an updatedAt of 1e300, is refused with 400 INVALID_REQUEST
// and a "field: message" error body (docs/protocol.md §0; the validation
// errors of §3 are HTTP errors, not heartbeat statuses), and never reaches
// the coordinator, so nothing is stored.
func TestHeartbeatOutOfBoundsRefused(t *testing.T) {
	capacity := `"runtimeConsumerCapacity":{"runtimeMaxConcurrency":1,"availableConcurrency":1}`
	progress := `"shardProgress":[{"shard":{"shardIndex":0},"pendingCount":0,"updatedAt":"2026-05-21T00:00:03.123Z"}]`
	valid := `{"protocolVersion":1,"requestId":"r1","memberId":"m1","memberEpoch":0,"metadataVersion":0,` + capacity + `,` + progress + `}`
	for _, tc := range []struct {
		name, from, to, message string
	}{
		{"concurrency 2^62", `"runtimeMaxConcurrency":1`, `"runtimeMaxConcurrency":4611686018427387904`,
			"runtimeConsumerCapacity.runtimeMaxConcurrency: must be less than or equal to 65536"},
		{"available 2^62", `"availableConcurrency":1`, `"availableConcurrency":4611686018427387904`,
			"runtimeConsumerCapacity.availableConcurrency: must be less than or equal to 65536"},
		{"updatedAt 1e300", `"updatedAt":"2026-05-21T00:00:03.123Z"`, `"updatedAt":1e300`,
			"shardProgress[0].updatedAt: must be null or between 2000-01-01T00:00:00.000Z and 2199-12-31T23:59:59.999Z"},
		{"updatedAt year 9999", `"updatedAt":"2026-05-21T00:00:03.123Z"`, `"updatedAt":"9999-01-01T00:00:00Z"`,
			"shardProgress[0].updatedAt: must be null or between 2000-01-01T00:00:00.000Z and 2199-12-31T23:59:59.999Z"},
		{"pendingCount 2^62", `"pendingCount":0`, `"pendingCount":4611686018427387904`,
			"shardProgress[0].pendingCount: must be less than or equal to 1000000000000"},
		{"metadataVersion 2^62", `"metadataVersion":0`, `"metadataVersion":4611686018427387904`,
			"metadataVersion: must be less than or equal to 9007199254740991"},
		{"memberEpoch 2^62", `"memberEpoch":0`, `"memberEpoch":4611686018427387904`,
			"memberEpoch: must be less than or equal to 9007199254740991"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := strings.Replace(valid, tc.from, tc.to, 1)
			if body == valid {
				t.Fatalf("%s not in the request", tc.from)
			}
			f := &fakeCoord{}
			b := errorOf(t, postJSON(newTestAPI(f), heartbeatPath, body), http.StatusBadRequest, "INVALID_REQUEST")
			if b.Message != tc.message {
				t.Errorf("message %q, want %q", b.Message, tc.message)
			}
			if f.Calls != 0 || f.LastHeartbeat != nil {
				t.Errorf("the coordinator was called")
			}
		})
	}
	f := &fakeCoord{}
	if rec := postJSON(newTestAPI(f), heartbeatPath, valid); rec.Code != http.StatusOK || f.LastHeartbeat == nil {
		t.Fatalf("the valid heartbeat: %d %s", rec.Code, rec.Body)
	}
}

// postJSON POSTs body as application/json to h.
func postJSON(h http.Handler, path, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}
