package security

import (
	"testing"

	"github.com/redis-stream-coordinator/coordinator/contract"
)

// TestRequired: every route needs its table operation, except heartbeats
// while member authentication is off.
func TestRequired(t *testing.T) {
	for _, memberAuth := range []bool{false, true} {
		pol := Policy{AuthenticateMemberAPI: memberAuth}
		for _, rt := range contract.Routes {
			want := rt.Operation
			if rt.Operation == contract.OpHeartbeat && !memberAuth {
				want = contract.OpOpen
			}
			if got := pol.Required(rt); got != want {
				t.Errorf("memberAuth=%v %s %s = %q, want %q", memberAuth, rt.Method, rt.Template, got, want)
			}
		}
	}
}

// TestEveryMutatingRouteNeedsAnOperation: only login, the API description
// and (with member auth off) heartbeats are open.
func TestEveryMutatingRouteNeedsAnOperation(t *testing.T) {
	for _, rt := range contract.Routes {
		open := rt.Template == contract.LoginTemplate || rt.Template == contract.OpenAPITemplate
		if (rt.Operation == contract.OpOpen) != open {
			t.Errorf("%s %s: operation %q", rt.Method, rt.Template, rt.Operation)
		}
		if rt.Mutates && rt.Scope != contract.ScopeGroup && rt.Scope != contract.ScopeStream {
			t.Errorf("%s %s mutates but names no stream", rt.Method, rt.Template)
		}
	}
}

func TestUnrouted(t *testing.T) {
	for _, base := range []string{"", "/coord/v1", "/admin/"} {
		pol := Policy{BasePath: base}
		root := contract.CleanBasePath(base)
		for path, want := range map[string]contract.Operation{
			"/actuator/health":                   contract.OpOpen,
			"/metrics":                           contract.OpOpen,
			"/":                                  contract.OpOpen,
			"":                                   contract.OpOpen,
			root + "x":                           contract.OpOpen,
			root:                                 contract.OpAuthenticated,
			root + "/auth/login":                 contract.OpAuthenticated,
			root + "/streams/p/groups/g/members": contract.OpAuthenticated,
		} {
			if got := pol.Unrouted(path); got != want {
				t.Errorf("base %q: Unrouted(%q) = %q, want %q", base, path, got, want)
			}
		}
	}
}
