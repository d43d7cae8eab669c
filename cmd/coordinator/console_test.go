package main

import (
	"strings"
	"testing"

	"github.com/redis-stream-coordinator/coordinator/config"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/eventually"
)

// TestStartLogNamesTheConsole: the start log names the console's URL on
// the listening address and how to log in, with the default password only
// when it is still the default.
func TestStartLogNamesTheConsole(t *testing.T) {
	cfg := writeConfig(t, "coordinator:\n  id: it\n  server: {address: \"127.0.0.1:0\"}\n")
	base, _, logs := startLogged(t, "-config", cfg)
	var rec map[string]any
	// The record follows "coordinator listening", which start waits for.
	eventually.True(t, "the web console record", func() (ok bool) {
		rec, ok = logs.find("web console")
		return ok
	})
	login, _ := rec["login"].(string)
	if rec["url"] != base+"/console" || !strings.Contains(login, "user admin") || !strings.Contains(login, "COORDINATOR_ADMIN_PASSWORD") || !strings.Contains(login, `"password"`) {
		t.Errorf("web console record %v; want url %s/console and a login hint for admin", rec, base)
	}
}

func TestLoginHint(t *testing.T) {
	c := config.Default()
	c.API.AdminPassword = "s3cret"
	if h := loginHint(c); strings.Contains(h, "s3cret") || !strings.Contains(h, "user admin") {
		t.Errorf("own admin password: %q", h)
	}
	c.API.Users = []config.User{{Username: "ops", Password: "x", Roles: []string{"ADMIN"}}}
	if h := loginHint(c); !strings.Contains(h, "api.users (1 configured)") {
		t.Errorf("users: %q", h)
	}
}
