package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/redis-stream-coordinator/coordinator/internal/testkit/testredis"
)

// Security wiring: users, token secret, audit sinks and rate limit as
// configured, and nothing secret in the process log.

func basicAuth(user, password string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+password))
}

// login returns the Authorization header of a token for user.
func login(t *testing.T, api, user, password string) string {
	t.Helper()
	st, body := sendAs(t, "", "POST", api+"/auth/login", fmt.Sprintf(`{"username":%q,"password":%q}`, user, password))
	var tok struct {
		AccessToken string `json:"accessToken"`
	}
	if st != http.StatusOK || json.Unmarshal([]byte(body), &tok) != nil || tok.AccessToken == "" {
		t.Fatalf("login %s: %d %s", user, st, body)
	}
	return "Bearer " + tok.AccessToken
}

// recentMutations returns the outcomes and statuses of #16's recentMutations.
func recentMutations(t *testing.T, auth, url string) []string {
	t.Helper()
	st, body := sendAs(t, auth, "GET", url, "")
	var v struct {
		RecentMutations []struct {
			Action    string  `json:"action"`
			Outcome   string  `json:"outcome"`
			Status    int     `json:"status"`
			Principal *string `json:"principal"`
		} `json:"recentMutations"`
	}
	if st != http.StatusOK || json.Unmarshal([]byte(body), &v) != nil {
		t.Fatalf("monitoring group: %d %s", st, body)
	}
	var out []string
	for _, m := range v.RecentMutations {
		out = append(out, fmt.Sprintf("%s %s %d %s", m.Action, m.Outcome, m.Status, *m.Principal))
	}
	return out
}

func TestRunConfiguredUsersLogSinkAndRateLimit(t *testing.T) {
	const (
		opsPassword     = "ops-pw-71b3c9"
		grafanaPassword = "grafana-pw-2a9d40"
		secret          = "token-secret-5e8c1f"
	)
	hash, err := bcrypt.GenerateFromPassword([]byte(opsPassword), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, fmt.Sprintf(`coordinator:
  id: it
  server: {address: "127.0.0.1:0"}
  api:
    token-secret: %q
    users:
      - {username: ops, password: %q, roles: [WRITE]}
      - {username: grafana, password: %q, roles: [MONITOR]}
      - {username: admin, password: password, roles: [ADMIN]}
    rate-limit: {enabled: true, window: 1m, max-requests: 2}
`, secret, hash, grafanaPassword))
	base, stop, logs := startLogged(t, "-config", cfg)
	api := base + "/coord/v1"
	grp := api + "/streams/orders/groups/workers"

	if st, _ := sendAs(t, "", "GET", api+"/monitoring/groups", ""); st != http.StatusUnauthorized {
		t.Errorf("no credentials: %d, want 401", st)
	}
	if st, _ := send(t, "GET", api+"/monitoring/groups", ""); st != http.StatusUnauthorized {
		t.Errorf("the admin pair listed as a user is ignored: %d, want 401", st)
	}
	if st, _ := sendAs(t, "", "GET", base+"/healthz", ""); st != http.StatusOK {
		t.Errorf("/healthz: %d", st)
	}
	ops := login(t, api, "ops", opsPassword)
	grafana := basicAuth("grafana", grafanaPassword)
	if st, body := sendAs(t, grafana, "POST", grp, `{"requestedBy":"it"}`); st != http.StatusForbidden {
		t.Errorf("MONITOR creates: %d %s", st, body)
	}
	for _, want := range []int{http.StatusCreated, http.StatusConflict, http.StatusTooManyRequests} {
		if st, body := sendAs(t, ops, "POST", grp, `{"requestedBy":"it","initialShardCount":2}`); st != want {
			t.Fatalf("create: %d %s, want %d", st, body, want)
		}
	}
	got := strings.Join(recentMutations(t, grafana, api+"/monitoring/streams/orders/groups/workers"), "; ")
	if want := "CREATE_GROUP FAILED 429 ops; CREATE_GROUP FAILED 409 ops; CREATE_GROUP SUCCESS 201 ops; CREATE_GROUP FORBIDDEN 403 grafana"; got != want {
		t.Errorf("recent mutations:\n got %s\nwant %s", got, want)
	}
	stop()

	if rec, ok := logs.find("configured API user ignored"); !ok || rec["username"] != "admin" || rec["level"] != "WARN" {
		t.Errorf("ignored user warning: %v", rec)
	}
	if _, ok := logs.find("token secret derived from admin credentials: for local development only; set coordinator.api.token-secret"); ok {
		t.Error("dev secret warning with a configured secret")
	}
	audits := 0
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, `"logger":"redis-stream-coordinator.audit"`) {
			audits++
		}
	}
	if audits != 5 { // the four creates and ops' login
		t.Errorf("%d audit log lines, want 5", audits)
	}
	for _, s := range []string{opsPassword, grafanaPassword, secret, string(hash), strings.TrimPrefix(ops, "Bearer ")} {
		if strings.Contains(logs.String(), s) {
			t.Errorf("secret %q in the process log", s)
		}
	}
}

func TestRunWarnsAboutTheDevelopmentSecret(t *testing.T) {
	cfg := writeConfig(t, "coordinator:\n  server: {address: \"127.0.0.1:0\"}\n")
	_, stop, logs := startLogged(t, "-config", cfg)
	stop()
	rec, ok := logs.find("token secret derived from admin credentials: for local development only; set coordinator.api.token-secret")
	if !ok || rec["level"] != "WARN" {
		t.Errorf("dev secret warning: %v", rec)
	}
	if strings.Contains(logs.String(), "redis-stream-coordinator-token") {
		t.Error("the derived secret is logged")
	}
}

func TestRunRedisAuditSink(t *testing.T) {
	client := testredis.Shared(t)
	prefix := testredis.Prefix(t, client)
	host, port, _ := net.SplitHostPort(testredis.SharedAddr)
	cfg := writeConfig(t, fmt.Sprintf(`coordinator:
  id: it
  server: {address: "127.0.0.1:0"}
  store: {key-prefix: %q}
  redis: {host: %q, port: %s}
  audit: {sink: redis, redis-max-entries: 2}
`, prefix, host, port))
	base, _, logs := startLogged(t, "-config", cfg)
	api := base + "/coord/v1"
	grp := api + "/streams/orders/groups/workers"
	for _, want := range []int{http.StatusCreated, http.StatusConflict, http.StatusConflict} {
		if st, body := send(t, "POST", grp, `{"requestedBy":"it","initialShardCount":2}`); st != want {
			t.Fatalf("create: %d %s, want %d", st, body, want)
		}
	}
	if st, body := send(t, "DELETE", grp, `{"requestedBy":"it","reason":"cleanup","force":true}`); st != http.StatusOK {
		t.Fatalf("delete: %d %s", st, body)
	}
	raw, err := client.LRange(context.Background(), prefix+":{orders:workers}:admin:audit", 0, -1).Result()
	if err != nil || len(raw) != 2 || !strings.Contains(raw[0], `"status":409`) || !strings.Contains(raw[1], `"action":"DELETE_GROUP"`) {
		t.Fatalf("audit list (capped at 2): %v %v", raw, err)
	}
	if strings.Contains(logs.String(), `"logger":"redis-stream-coordinator.audit"`) {
		t.Error("audit lines logged with the redis sink")
	}
	// The group is gone, so #16 answers 404; recreate it to read the history.
	if st, body := send(t, "POST", grp, `{"requestedBy":"it","initialShardCount":2}`); st != http.StatusCreated {
		t.Fatalf("recreate: %d %s", st, body)
	}
	got := strings.Join(recentMutations(t, adminAuth, api+"/monitoring/streams/orders/groups/workers"), "; ")
	if want := "CREATE_GROUP SUCCESS 201 admin; DELETE_GROUP SUCCESS 200 admin"; got != want {
		t.Errorf("recent mutations: %s, want %s", got, want)
	}
}
