package deploy

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/redis-stream-coordinator/coordinator/actors"
	"github.com/redis-stream-coordinator/coordinator/group"
	httpapi "github.com/redis-stream-coordinator/coordinator/http"
	"github.com/redis-stream-coordinator/coordinator/metrics"
	"github.com/redis-stream-coordinator/coordinator/persistence/memory"
)

// coordinator is an in-process coordinator on the memory store, wired to
// its metrics as cmd/coordinator wires it, behind an httptest server.
type coordinator struct {
	url string
	reg *prometheus.Registry
}

// startCoordinator starts a coordinator and runs a short flow on it: a
// group is created and a member joins.
func startCoordinator(t *testing.T) *coordinator {
	t.Helper()
	reg := prometheus.NewRegistry()
	m := metrics.New(reg, "deploy-test", metrics.WithMemberSeries(1000))
	settings := group.DefaultSettings()
	coord, err := actors.New(actors.Options{Store: m.Store("memory", memory.New()), Settings: settings, GroupCommit: true, Observer: m})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = coord.Shutdown(context.Background()) })
	api := httpapi.New(httpapi.Options{
		Coordinator:   httpapi.ObserveCoordinator(coord, m),
		Settings:      settings,
		CoordinatorID: "deploy-test",
		Metrics:       promhttp.HandlerFor(reg, promhttp.HandlerOpts{}),
		Middleware:    []httpapi.Middleware{httpapi.ObserveRequests(m)},
	})
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	c := &coordinator{url: srv.URL, reg: reg}
	c.post(t, "/coord/v1/streams/orders/groups/billing", map[string]any{"initialShardCount": 2, "requestedBy": "deploy-test"}, http.StatusCreated)
	c.post(t, "/coord/v1/streams/orders/groups/billing/members/m-1/heartbeat", map[string]any{
		"protocolVersion": 1, "requestId": "r-1", "memberId": "m-1", "memberEpoch": 0,
		"runtimeConsumerCapacity": map[string]int{"runtimeMaxConcurrency": 1, "availableConcurrency": 1},
	}, http.StatusOK)
	return c
}

func (c *coordinator) post(t *testing.T, path string, body any, want int) {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(c.url+path, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != want {
		t.Fatalf("POST %s: %d, want %d", path, resp.StatusCode, want)
	}
}
