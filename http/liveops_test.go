package httpapi

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
)

func (f *fakeCoord) PauseShards(_ context.Context, key group.Key, req contract.PauseRequest) (contract.PausedView, error) {
	return contract.PausedView{PausedShards: req.Shards}, f.note(key)
}

func (f *fakeCoord) ResumeShards(_ context.Context, key group.Key, _ contract.PauseRequest) (contract.PausedView, error) {
	return contract.PausedView{}, f.note(key)
}

func (f *fakeCoord) StartReset(_ context.Context, key group.Key, req group.ResetRequest) (group.LiveReset, error) {
	return group.LiveReset{ResetID: "reset-1", State: contract.ResetPausing, Target: req.Target}, f.note(key)
}

func (f *fakeCoord) Reset(_ context.Context, key group.Key, id string) (group.LiveReset, error) {
	return group.LiveReset{ResetID: id, State: contract.ResetDone}, f.note(key)
}

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
