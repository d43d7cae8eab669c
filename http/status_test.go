package httpapi

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
)

// fakeStatus answers canned status views and records the group asked for.
type fakeStatus struct {
	status  contract.StatusView
	scaling contract.ScalingView
	// evaluated says whether Summary knows the group.
	evaluated bool
	asked     []group.Key
}

func (f *fakeStatus) Status(*group.Group) contract.StatusView   { return f.status }
func (f *fakeStatus) Scaling(*group.Group) contract.ScalingView { return f.scaling }
func (f *fakeStatus) Summary(key group.Key) (contract.ConsumptionStatus, int, bool) {
	f.asked = append(f.asked, key)
	return f.status.Status, f.scaling.DesiredMembers, f.evaluated
}

// The status and scaling routes answer what the StatusSource says of the
// group's snapshot (404 for an unknown group, as every group route), and
// 503 REDIS_NOT_CONFIGURED without one; the group views carry the status
// and desiredMembers of an evaluated group, and nothing before.
func TestStatusRoutes(t *testing.T) {
	src := &fakeStatus{
		status: contract.StatusView{StreamPrefix: "orders", ConsumerGroup: "orders-consumer", Status: contract.ConsumptionStalled,
			Counts: map[contract.ConsumptionStatus]int{contract.ConsumptionStalled: 1}, WindowSamples: 10,
			Shards: []contract.ShardStatus{{ShardIndex: 0, Status: contract.ConsumptionStalled, Since: 1000}}},
		scaling:   contract.ScalingView{StreamPrefix: "orders", ConsumerGroup: "orders-consumer", DesiredMembers: 3, ConsumeRatePerMember: 100},
		evaluated: true,
	}
	api := newTestAPI(&fakeCoord{View: sampleView(), Views: []contract.GroupView{sampleView()}}, func(o *Options) { o.Status = src })
	rec := do(api, http.MethodGet, groupPath+"/status", "")
	var st contract.StatusView
	if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &st) != nil || st.Status != contract.ConsumptionStalled || len(st.Shards) != 1 {
		t.Fatalf("GET status: %d %s", rec.Code, rec.Body)
	}
	rec = do(api, http.MethodGet, groupPath+"/scaling", "")
	var sc contract.ScalingView
	if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &sc) != nil || sc.DesiredMembers != 3 {
		t.Fatalf("GET scaling: %d %s", rec.Code, rec.Body)
	}
	for _, path := range []string{groupPath, "/coord/v1/monitoring/streams/orders/groups/orders-consumer"} {
		var v contract.GroupView
		rec = do(api, http.MethodGet, path, "")
		if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &v) != nil || v.Status != contract.ConsumptionStalled ||
			v.DesiredMembers == nil || *v.DesiredMembers != 3 {
			t.Errorf("GET %s: %d %s", path, rec.Code, rec.Body)
		}
	}
	var list contract.GroupList
	rec = do(api, http.MethodGet, "/coord/v1/monitoring/groups", "")
	if json.Unmarshal(rec.Body.Bytes(), &list) != nil || len(list.Groups) == 0 || list.Groups[0].Status != contract.ConsumptionStalled {
		t.Errorf("GET groups: %d %s", rec.Code, rec.Body)
	}
	if len(src.asked) == 0 || src.asked[0] != (group.Key{StreamPrefix: "orders", ConsumerGroup: "orders-consumer"}) {
		t.Errorf("asked for %v", src.asked)
	}

	src.evaluated = false
	wantJSON(t, do(api, http.MethodGet, groupPath, ""), http.StatusOK, sampleViewJSON)

	plain := newTestAPI(&fakeCoord{View: sampleView()})
	for _, path := range []string{groupPath + "/status", groupPath + "/scaling"} {
		if rec := do(plain, http.MethodGet, path, ""); rec.Code != http.StatusServiceUnavailable || !json.Valid(rec.Body.Bytes()) ||
			!jsonHas(rec.Body.Bytes(), "errorCode", string(contract.CodeRedisNotConfigured)) {
			t.Errorf("GET %s without Redis: %d %s", path, rec.Code, rec.Body)
		}
	}
	wantJSON(t, do(plain, http.MethodGet, groupPath, ""), http.StatusOK, sampleViewJSON)
}

// jsonHas reports whether the JSON object body has key with the string
// value want.
func jsonHas(body []byte, key, want string) bool {
	var m map[string]any
	return json.Unmarshal(body, &m) == nil && m[key] == want
}
