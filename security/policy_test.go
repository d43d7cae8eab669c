package security

import "testing"

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

// readOrWrite is rules 4 and 5: WRITE for mutating methods, READ otherwise.
func readOrWrite(method string) access {
	switch method {
	case "POST", "PUT", "PATCH", "DELETE":
		return writeRole
	}
	return readRole
}

// protocolRoutes lists every route of PROTOCOL §2 (relative to the base path,
// with sample values) and the rule class it falls in.
func protocolRoutes(p, g, m string) map[string]string {
	group := "/streams/" + p + "/groups/" + g
	routes := map[string]string{
		"/auth/login":                            "login",
		"/openapi.json":                          "login",
		"/streams/" + p:                          "streams",
		"/streams/" + p + "/scale":               "streams",
		group:                                    "streams",
		group + "/producer-routing":              "streams",
		group + "/scale":                         "streams",
		group + "/migrations/reshard-1":          "streams",
		group + "/migrations/reshard-1/rollback": "streams",
		group + "/members/" + m + "/heartbeat":   "heartbeat",
		group + "/consumer-concurrency":          "streams",
		"/monitoring/session":                    "monitoring",
		"/monitoring/health":                     "monitoring",
		"/monitoring/compatibility":              "monitoring",
		"/monitoring/groups":                     "monitoring",
	}
	for _, suffix := range []string{"", "/members", "/assignments", "/consumption", "/migrations", "/offsets", "/shards/0/messages"} {
		routes["/monitoring/streams/"+p+"/groups/"+g+suffix] = "monitoring"
	}
	for _, suffix := range []string{"groups", "options/streams", "options/consumer-groups", "options/shards", "members", "shards", "assignments", "messages"} {
		routes["/monitoring/grafana/"+suffix] = "monitoring"
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
	return readOrWrite(method)
}

func TestRequiredRoleProtocolRoutes(t *testing.T) {
	samples := [][3]string{
		{"orders", "orders-consumer", "member-a"},
		// Names that look like rule keywords must not change the rule.
		{"monitoring", "members", "heartbeat"},
		{"auth", "login", "x"},
	}
	for _, base := range []string{"", "/coord/v1", "/coord/v1/", "/admin"} {
		policyBase := base
		if policyBase == "" || policyBase == "/coord/v1/" {
			policyBase = "/coord/v1"
		}
		for _, memberAuth := range []bool{false, true} {
			pol := Policy{BasePath: base, AuthenticateMemberAPI: memberAuth}
			for _, s := range samples {
				for route, class := range protocolRoutes(s[0], s[1], s[2]) {
					for _, method := range allMethods {
						path := policyBase + route
						role, needsAuth := pol.RequiredRole(method, path)
						if got, want := (access{role, needsAuth}), expected(class, method, memberAuth); got != want {
							t.Errorf("base %q memberAuth=%v %s %s = %+v, want %+v", base, memberAuth, method, path, got, want)
						}
					}
				}
			}
		}
	}
}

func TestRequiredRoleOtherPaths(t *testing.T) {
	pol := Policy{}
	for _, tc := range []struct {
		path  string
		class string
	}{
		{"/actuator/health", "outside"},
		{"/actuator/info", "outside"},
		{"/actuator/prometheus", "outside"},
		{"/metrics", "outside"},
		{"/healthz", "outside"},
		{"/", "outside"},
		{"", "outside"},
		{"/coord/v10/streams/x", "outside"},
		{"/coord", "outside"},
		{"/coord/v1", "other"},
		{"/coord/v1/", "other"},
		{"/coord/v1/unknown", "other"},
		{"/coord/v1/auth/login/extra", "other"},
		{"/coord/v1/auth", "other"},
		{"/coord/v1/monitoring", "monitoring"},
		{"/coord/v1/monitoringx", "other"},
		{"/coord/v1/streams", "streams"},
		{"/coord/v1/x/members/y/heartbeat", "heartbeat"},
		{"/coord/v1/members/y/heartbeat", "heartbeat"},
		{"/coord/v1/streams/p/groups/g/members/m/heartbeat/", "streams"},
	} {
		for _, method := range allMethods {
			role, needsAuth := pol.RequiredRole(method, tc.path)
			if got, want := (access{role, needsAuth}), expected(tc.class, method, false); got != want {
				t.Errorf("%s %q = %+v, want %+v", method, tc.path, got, want)
			}
		}
	}
}

func TestRequiredRoleMethodCase(t *testing.T) {
	pol := Policy{}
	for _, method := range []string{"post", "Delete", "pUt", "patch"} {
		if role, needsAuth := pol.RequiredRole(method, "/coord/v1/streams/p"); role != RoleWrite || !needsAuth {
			t.Errorf("%s = %s, %v; want WRITE", method, role, needsAuth)
		}
	}
	if IsMutatingMethod("get") || IsMutatingMethod("HEAD") || !IsMutatingMethod("post") {
		t.Error("IsMutatingMethod is wrong")
	}
}
