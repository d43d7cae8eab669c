package contract

import "testing"

func TestCleanBasePath(t *testing.T) {
	for in, want := range map[string]string{
		"":            BasePath,
		"   ":         BasePath,
		"/":           BasePath,
		"//":          BasePath,
		BasePath:      BasePath,
		"/api/":       "/api",
		" /api// ":    "/api",
		"api":         "/api",
		"api/v2/":     "/api/v2",
		"/nested/x/y": "/nested/x/y",
	} {
		if got := CleanBasePath(in); got != want {
			t.Errorf("CleanBasePath(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestExpand(t *testing.T) {
	for _, c := range []struct {
		got, want string
	}{
		{GroupPath("orders", "workers"), "/streams/orders/groups/workers"},
		{HeartbeatPath("a b", "g/1", "m?"), "/streams/a%20b/groups/g%2F1/members/m%3F/heartbeat"},
		{Expand(GroupRollback, "p", "g", "r-1"), "/streams/p/groups/g/migrations/r-1/rollback"},
		{Expand(MonitoringMessages, "p", "g"), "/monitoring/streams/p/groups/g/shards/{shardIndex}/messages"},
		{Expand(ClusterTemplate, "extra"), "/cluster"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
