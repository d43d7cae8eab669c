package httpapi

import (
	"net/http"
	"strings"
	"testing"
)

// TestLiveOpsRoutes: the pause and resume bodies are checked before the
// coordinator is asked; a live reset needs Redis.
func TestLiveOpsRoutes(t *testing.T) {
	api := newTestAPI(&fakeCoord{})
	wantStatus := func(method, path, body string, want int) {
		t.Helper()
		if rec := do(api, method, path, body); rec.Code != want {
			t.Errorf("%s %s %s: %d %s, want %d", method, path, body, rec.Code, rec.Body, want)
		}
	}
	wantStatus("POST", groupPath+"/shards/pause", `{"shards":[1],"requestedBy":"ops"}`, http.StatusOK)
	wantStatus("POST", groupPath+"/shards/pause", `{"shards":[1]}`, http.StatusBadRequest)
	wantStatus("POST", groupPath+"/shards/resume", `{"shards":[1],"requestedBy":"ops"}`, http.StatusOK)
	wantStatus("GET", strings.Replace(groupPath, "/coord/v1/", "/coord/v1/monitoring/", 1)+"/offsets/resets/reset-9", "", http.StatusOK)
	wantStatus("POST", groupPath+"/offsets/reset", `{"to":"EARLIEST","requestedBy":"ops"}`, http.StatusServiceUnavailable)
	wantStatus("POST", groupPath+"/offsets/reset", `{"to":"BY","requestedBy":"ops"}`, http.StatusBadRequest)
}
