package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/eventually"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/testredis"
)

// readiness is one answer of /readyz and /actuator/health.
type readiness struct {
	readyz, actuator int    // status codes
	readyzBody       string // /readyz body
	report           contract.HealthReport
}

func getReadiness(t *testing.T, base string) readiness {
	t.Helper()
	var r readiness
	r.readyz, r.readyzBody = send(t, "GET", base+"/readyz", "")
	st, body := sendAs(t, "", "GET", base+"/actuator/health", "")
	r.actuator = st
	if err := json.Unmarshal([]byte(body), &r.report); err != nil {
		t.Fatalf("/actuator/health: %v in %s", err, body)
	}
	return r
}

// TestReadinessFollowsTheStore kills the Redis of a Redis-backed
// coordinator: with no traffic at all the store probe fails, /readyz and
// /actuator/health turn 503, both health reports DEGRADED with the store
// DOWN; once Redis is back the coordinator is ready again.
func TestReadinessFollowsTheStore(t *testing.T) {
	srv := testredis.Start(t)
	host, port, _ := net.SplitHostPort(srv.Addr)
	base, _ := start(t, "-config", writeConfig(t, fmt.Sprintf(`coordinator:
  id: ready-it
  server: {address: "127.0.0.1:0"}
  store: {type: redis, key-prefix: ready-it, timeout: 500ms}
  redis: {host: %q, port: %s}
  health: {redis-timeout-ms: 500, cache-ttl-ms: 5}
`, host, port)))
	up := func(r readiness) bool {
		return r.readyz == http.StatusOK && r.readyzBody == `{"status":"UP"}` && r.actuator == http.StatusOK &&
			r.report.Status == "UP" && r.report.Store.Status == contract.StoreUp
	}
	eventually.True(t, "ready before the kill", func() bool { return up(getReadiness(t, base)) })

	srv.Kill()
	var down readiness
	eventually.True(t, "not ready with Redis killed", func() bool {
		down = getReadiness(t, base)
		return down.readyz == http.StatusServiceUnavailable && down.actuator == http.StatusServiceUnavailable
	})
	if down.readyzBody != `{"status":"DEGRADED"}` || down.report.Status != "DEGRADED" || down.report.Store.Status != contract.StoreDown ||
		down.report.CoordinatorID != "ready-it" {
		t.Errorf("not ready: /readyz %s, /actuator/health %+v", down.readyzBody, down.report)
	}
	waitHealth(t, base+"/coord/v1", "monitoring health DEGRADED", func(h contract.HealthReport) bool {
		return h.Status == "DEGRADED" && h.Store.Status == contract.StoreDown
	})

	srv.Restart()
	eventually.True(t, "ready after the restart", func() bool { return up(getReadiness(t, base)) })
}

// TestDatabaseDownAtStart starts a PostgreSQL-backed coordinator whose
// database does not answer: it starts degraded, as with Redis down, instead
// of exiting: /readyz 503 DEGRADED, heartbeats answered 200 RETRY.
// (persistence/sql's TestDatabaseDownAtOpen covers the database coming up.)
func TestDatabaseDownAtStart(t *testing.T) {
	base, _ := start(t, "-config", writeConfig(t, `coordinator:
  server: {address: "127.0.0.1:0"}
  store: {type: jdbc, jdbc: {url: "postgres://postgres@127.0.0.1:1/test?sslmode=disable"}, timeout: 500ms}
  health: {cache-ttl-ms: 5}
`))
	eventually.True(t, "not ready with the database down", func() bool {
		r := getReadiness(t, base)
		return r.readyz == http.StatusServiceUnavailable && r.readyzBody == `{"status":"DEGRADED"}` && r.report.Store.Status == contract.StoreDown
	})
	st, body := send(t, "POST", base+"/coord/v1/streams/down/groups/g/members/m/heartbeat",
		`{"protocolVersion":1,"requestId":"r","memberId":"m","memberName":"g","memberEpoch":0,"metadataVersion":0,"runtimeConsumerCapacity":{"runtimeMaxConcurrency":1,"availableConcurrency":1},"ownedShards":[]}`)
	if st != http.StatusOK || !strings.Contains(body, `"status":"RETRY"`) {
		t.Errorf("heartbeat with the database down: %d %s, want 200 RETRY", st, body)
	}
}
