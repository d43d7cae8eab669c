package audit

import (
	"testing"

	"github.com/redis-stream-coordinator/coordinator/contract"
)

func TestActionFor(t *testing.T) {
	for _, tc := range []struct {
		base, method, route string
		want                Action
	}{
		{"", "POST", "/coord/v1/streams/:streamPrefix", CreateStream},
		{"", "POST", "/coord/v1/streams/:streamPrefix/scale", ScaleStream},
		{"", "POST", "/coord/v1/streams/:streamPrefix/groups/:consumerGroup", CreateGroup},
		{"", "DELETE", "/coord/v1/streams/:streamPrefix/groups/:consumerGroup", DeleteGroup},
		{"", "POST", "/coord/v1/streams/:streamPrefix/groups/:consumerGroup/scale", ScaleGroup},
		{"", "POST", "/coord/v1/streams/:streamPrefix/groups/:consumerGroup/migrations/:reshardingId/rollback", RollbackMigration},
		// Other parameter names and the OpenAPI style.
		{"/coord/v1", "POST", "/coord/v1/streams/:p/groups/:g/migrations/:id/rollback", RollbackMigration},
		{"/coord/v1/", "POST", "/coord/v1/streams/{P}/groups/{G}/scale", ScaleGroup},
		{"/admin", "DELETE", "/admin/streams/{P}/groups/{G}", DeleteGroup},
		{"admin", "POST", "/admin/streams/:P/scale", ScaleStream},
		// Not audited.
		{"", "GET", "/coord/v1/streams/:streamPrefix/groups/:consumerGroup", ""},
		{"", "POST", "/coord/v1/streams/:streamPrefix/groups/:consumerGroup/members/:memberId/heartbeat", ""},
		{"", "PATCH", "/coord/v1/streams/:streamPrefix/groups/:consumerGroup/consumer-concurrency", ""},
		{"", "GET", "/coord/v1/streams/:streamPrefix/groups/:consumerGroup/producer-routing", ""},
		{"", "POST", "/coord/v1/auth/login", Login},
		{"", "post", "/coord/v1/streams/:streamPrefix", ""},
		{"", "POST", "/coord/v1/streams/orders", ""},
		{"", "POST", "/coord/v1/streams/:streamPrefix/:scale", ""},
		{"/admin", "POST", "/coord/v1/streams/:streamPrefix", ""},
		{"", "POST", "/coord/v1/streams/:streamPrefix/groups/:consumerGroup/", ""},
	} {
		got, ok := Routes{BasePath: tc.base}.ActionFor(tc.method, tc.route)
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("base %q: ActionFor(%s, %s) = %q, %v; want %q", tc.base, tc.method, tc.route, got, ok, tc.want)
		}
	}
}

func TestMatch(t *testing.T) {
	const group = "/coord/v1/streams/{streamPrefix}/groups/{consumerGroup}"
	for _, tc := range []struct {
		method, path string
		want         Target
	}{
		{"POST", "/coord/v1/streams/orders", Target{CreateStream, "/coord/v1/streams/{streamPrefix}", "orders", "", ""}},
		{"POST", "/coord/v1/streams/orders/scale", Target{ScaleStream, "/coord/v1/streams/{streamPrefix}/scale", "orders", "", ""}},
		{"POST", "/coord/v1/streams/scale/scale", Target{ScaleStream, "/coord/v1/streams/{streamPrefix}/scale", "scale", "", ""}},
		{"POST", "/coord/v1/streams/orders/groups/c", Target{CreateGroup, group, "orders", "c", ""}},
		{"DELETE", "/coord/v1/streams/orders/groups/c", Target{DeleteGroup, group, "orders", "c", ""}},
		{"POST", "/coord/v1/streams/orders/groups/scale/scale", Target{ScaleGroup, group + "/scale", "orders", "scale", ""}},
		{"POST", "/coord/v1/streams/o/groups/c/migrations/reshard-1/rollback", Target{RollbackMigration, group + "/migrations/{reshardingId}/rollback", "o", "c", "reshard-1"}},
		{"POST", "/coord/v1/streams/orders/", Target{}},
		{"POST", "/coord/v1/streams//scale", Target{}},
		{"POST", "/coord/v1/streams", Target{}},
		{"PUT", "/coord/v1/streams/orders", Target{}},
		{"DELETE", "/coord/v1/streams/orders", Target{}},
		{"POST", "/coord/v1/streams/o/groups/c/members/m/heartbeat", Target{}},
		{"POST", "/coord/v1/streams/o/groups/c/migrations/r", Target{}},
		{"POST", "/coord/v10/streams/orders", Target{}},
		{"POST", "/streams/orders", Target{}},
	} {
		got, ok := Routes{}.Match(tc.method, tc.path)
		if got != tc.want || ok != (tc.want != Target{}) {
			t.Errorf("Match(%s, %s) = %+v, %v; want %+v", tc.method, tc.path, got, ok, tc.want)
		}
	}
	got, ok := Routes{BasePath: "/admin/"}.Match("POST", "/admin/streams/p/groups/g/scale")
	if want := (Target{ScaleGroup, "/admin/streams/{streamPrefix}/groups/{consumerGroup}/scale", "p", "g", ""}); !ok || got != want {
		t.Errorf("custom base: %+v, %v; want %+v", got, ok, want)
	}
}

// Every route Match produces is one ActionFor maps to the same action.
func TestMatchAgreesWithActionFor(t *testing.T) {
	for _, m := range mutations {
		rt := Routes{}
		target, ok := rt.Match(m.method, contract.BasePath+m.template)
		if !ok {
			t.Fatalf("template %s does not match itself", m.template)
		}
		if action, ok := rt.ActionFor(m.method, target.Route); !ok || action != m.action || target.Action != m.action {
			t.Errorf("%s %s: Match %s, ActionFor %s", m.method, m.template, target.Action, action)
		}
	}
}
