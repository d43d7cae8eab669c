package httpapi

import (
	"net/http"
	"testing"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
)

// TestGroupCaps: creates beyond MaxGroups or MaxGroupsPerPrefix answer 409
// GROUP_LIMIT_REACHED without reaching the coordinator (issue 21, defect 4),
// from the coordinator's counts: no create reads every group (which made
// creating n groups quadratic).
func TestGroupCaps(t *testing.T) {
	f := &fakeCoord{view: sampleView(), views: []group.GroupView{
		{StreamPrefix: "a", ConsumerGroup: "g1"}, {StreamPrefix: "a", ConsumerGroup: "g2"}, {StreamPrefix: "b", ConsumerGroup: "g1"},
	}}
	body := `{"requestedBy":"t"}`
	perPrefix := newTestAPI(f, func(o *Options) { o.MaxGroupsPerPrefix = 2 })
	if rec := do(perPrefix, "POST", contract.BasePath+"/streams/a/groups/g3", body); rec.Code != http.StatusConflict {
		t.Errorf("third group of a: %d %s", rec.Code, rec.Body)
	}
	if rec := do(perPrefix, "POST", contract.BasePath+"/streams/b/groups/g2", body); rec.Code != http.StatusCreated {
		t.Errorf("second group of b: %d %s", rec.Code, rec.Body)
	}
	total := newTestAPI(f, func(o *Options) { o.MaxGroups = 3 })
	rec := do(total, "POST", contract.BasePath+"/streams/c", body)
	wantJSON(t, rec, http.StatusConflict, `{"status":"CONFLICT","errorCode":"GROUP_LIMIT_REACHED","message":"The coordinator already has 3 groups (defaults.max-groups)"}`)
	if f.groupsRead != 0 {
		t.Errorf("the creates read every group %d times", f.groupsRead)
	}
}

// TestCreateRateLimitPerPrincipal: the per-group limiter let one caller
// create any number of distinct groups; CreateLimiter counts creates per
// principal whatever the group.
func TestCreateRateLimitPerPrincipal(t *testing.T) {
	e := newSecureEnv(t, &fakeCoord{view: sampleView()}, func(_ *secureEnv, s *Security) { s.CreateLimiter = mustLimiter(t, 2) })
	body := `{"requestedBy":"t"}`
	for i, want := range []int{http.StatusCreated, http.StatusCreated, http.StatusTooManyRequests} {
		rec := e.send("POST", contract.BasePath+"/streams/p/groups/g"+string(rune('0'+i)), basicOf("root"), body)
		if rec.Code != want {
			t.Fatalf("create %d: %d %s, want %d", i, rec.Code, rec.Body, want)
		}
	}
	if rec := e.send("POST", contract.BasePath+"/streams/p/groups/g9", e.bearerOf(t, "writer"), body); rec.Code != http.StatusCreated {
		t.Errorf("another principal: %d", rec.Code)
	}
}
