package security

import (
	"testing"

	"github.com/redis-stream-coordinator/coordinator/contract"
)

var allMethods = []string{"GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH", "DELETE"}

// access is the expected outcome of Policy.RequiredRole.
type access struct {
	role      Role
	needsAuth bool
}

var (
	open      = access{}
	readRole  = access{RoleRead, true}
	writeRole = access{RoleWrite, true}
)

// readOrWriteAccess is rule 4: WRITE for mutating methods, READ otherwise.
func readOrWriteAccess(method string) access {
	switch method {
	case "POST", "PUT", "PATCH", "DELETE":
		return writeRole
	}
	return readRole
}

// protocolTemplates lists route templates of docs/protocol.md §2 (relative to the
// base path) and the rule class they fall in.
func protocolTemplates() map[string]string {
	const group = "/streams/{streamPrefix}/groups/{consumerGroup}"
	routes := map[string]string{
		contract.LoginTemplate:                        "login",
		contract.OpenAPITemplate:                      "login",
		"/streams/{streamPrefix}":                     "streams",
		"/streams/{streamPrefix}/scale":               "streams",
		group:                                         "streams",
		group + "/producer-routing":                   "streams",
		group + "/scale":                              "streams",
		group + "/migrations/{reshardingId}":          "streams",
		group + "/migrations/{reshardingId}/rollback": "streams",
		contract.HeartbeatTemplate:                    "heartbeat",
		"/monitoring/session":                         "monitoring",
		"/monitoring/health":                          "monitoring",
		"/monitoring/groups":                          "monitoring",
		"/monitoring" + group + "/members":            "monitoring",
		"/monitoring/grafana/members":                 "monitoring",
	}
	return routes
}

func expected(class, method string, memberAuth bool) access {
	switch class {
	case "login", "outside":
		return open
	case "heartbeat":
		if memberAuth {
			return access{RoleMember, true}
		}
		return open
	case "monitoring":
		return readRole
	}
	return readOrWriteAccess(method)
}

func TestRequiredRoleTemplates(t *testing.T) {
	for _, base := range []string{"", "/coord/v1", "/coord/v1/", "/admin"} {
		policyBase := base
		if policyBase == "" || policyBase == "/coord/v1/" {
			policyBase = "/coord/v1"
		}
		for _, memberAuth := range []bool{false, true} {
			pol := Policy{BasePath: base, AuthenticateMemberAPI: memberAuth}
			for template, class := range protocolTemplates() {
				for _, method := range allMethods {
					role, needsAuth := pol.RequiredRole(method, policyBase+template)
					if got, want := (access{role, needsAuth}), expected(class, method, memberAuth); got != want {
						t.Errorf("base %q memberAuth=%v %s %s = %+v, want %+v", base, memberAuth, method, template, got, want)
					}
				}
			}
			if !pol.IsHeartbeat(policyBase+contract.HeartbeatTemplate) || pol.IsHeartbeat(policyBase+"/streams/members/groups/heartbeat") {
				t.Errorf("base %q: IsHeartbeat is wrong", base)
			}
		}
	}
}

// TestRequiredRoleIgnoresPathText: a template is compared whole, so paths
// (or templates) that merely look like a heartbeat or login get rule 4.
func TestRequiredRoleIgnoresPathText(t *testing.T) {
	pol := Policy{}
	for _, path := range []string{
		"/coord/v1/streams/members/groups/heartbeat",
		"/coord/v1/streams/p/groups/members/migrations/heartbeat",
		"/coord/v1/x/members/y/heartbeat",
		"/coord/v1/streams/p/groups/g/members/m/heartbeat",
		"/coord/v1/streams/auth/login",
		"/coord/v1/auth/login/extra",
	} {
		for _, method := range allMethods {
			role, needsAuth := pol.RequiredRole(method, path)
			if got, want := (access{role, needsAuth}), readOrWriteAccess(method); got != want {
				t.Errorf("%s %q = %+v, want %+v", method, path, got, want)
			}
		}
	}
}

func TestUnrouted(t *testing.T) {
	pol := Policy{AuthenticateMemberAPI: false}
	for _, tc := range []struct {
		path  string
		class string
	}{
		{"/actuator/health", "outside"},
		{"/metrics", "outside"},
		{"/", "outside"},
		{"", "outside"},
		{"/coord/v10/streams/x", "outside"},
		{"/coord", "outside"},
		{"/coord/v1", "other"},
		{"/coord/v1/auth/login", "other"},
		{"/coord/v1/openapi.json", "other"},
		{"/coord/v1/streams/p/groups/g/members/m/heartbeat", "other"},
		{"/coord/v1/monitoring/x", "other"},
	} {
		for _, method := range allMethods {
			role, needsAuth := pol.Unrouted(method, tc.path)
			if got, want := (access{role, needsAuth}), expected(tc.class, method, false); got != want {
				t.Errorf("%s %q = %+v, want %+v", method, tc.path, got, want)
			}
		}
	}
}

func TestRequiredRoleMethodCase(t *testing.T) {
	pol := Policy{}
	for _, method := range []string{"post", "Delete", "pUt", "patch"} {
		if role, needsAuth := pol.RequiredRole(method, "/coord/v1/streams/{streamPrefix}"); role != RoleWrite || !needsAuth {
			t.Errorf("%s = %s, %v; want WRITE", method, role, needsAuth)
		}
	}
	if IsMutatingMethod("get") || IsMutatingMethod("HEAD") || !IsMutatingMethod("post") {
		t.Error("IsMutatingMethod is wrong")
	}
}
