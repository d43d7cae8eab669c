package main

import (
	"net/http"
	"strings"
	"testing"
)

// The running coordinator serves its metrics at /actuator/prometheus and
// /metrics without credentials: every series is labelled with the
// coordinator id, heartbeats count by status, health checks set up, and
// the store's breaker state is exported.
func TestMetricsEndpoints(t *testing.T) {
	base, _ := start(t, "-config", writeConfig(t, "coordinator:\n  id: obs-it\n  server: {address: \"127.0.0.1:0\"}\n"))
	if code, body := send(t, http.MethodPost, base+"/coord/v1/streams/orders/groups/billing", `{"requestedBy":"t"}`); code != http.StatusCreated {
		t.Fatalf("create: %d %s", code, body)
	}
	hb := `{"protocolVersion":1,"requestId":"r","memberId":"m-1","memberEpoch":0,"runtimeConsumerCapacity":{"runtimeMaxConcurrency":1,"availableConcurrency":1}}`
	if code, body := send(t, http.MethodPost, base+"/coord/v1/streams/orders/groups/billing/members/m-1/heartbeat", hb); code != http.StatusOK {
		t.Fatalf("heartbeat: %d %s", code, body)
	}
	if code, body := send(t, http.MethodGet, base+"/coord/v1/monitoring/health", ""); code != http.StatusOK {
		t.Fatalf("health: %d %s", code, body)
	}
	for _, path := range []string{"/actuator/prometheus", "/metrics"} {
		code, body := sendAs(t, "", http.MethodGet, base+path, "")
		if code != http.StatusOK {
			t.Fatalf("GET %s: %d", path, code)
		}
		for _, want := range []string{
			`redis_stream_coord_up{coordinator="obs-it"} 1`,
			`redis_stream_coord_heartbeat_total{coordinator="obs-it",group="billing",status="OK",stream="orders"} 1`,
			`redis_stream_coord_store_breaker_state{coordinator="obs-it",store="memory"} 0`,
			`redis_stream_coord_store_commit_duration_seconds_count{coordinator="obs-it",operation="create",result="success",store="memory"} 1`,
			`redis_stream_coord_members{coordinator="obs-it",group="billing",state="active",stream="orders"} 1`,
		} {
			if !strings.Contains(body, want) {
				t.Errorf("GET %s: no %s", path, want)
			}
		}
	}
}
