package deploy

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/redis-stream-coordinator/coordinator/actors"
	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	httpapi "github.com/redis-stream-coordinator/coordinator/http"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/coordtest"
	"github.com/redis-stream-coordinator/coordinator/metrics"
)

// coordinator is an in-process coordinator (internal/testkit/coordtest) on the
// memory store, wired to its metrics as cmd/coordinator wires it.
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
	ct := coordtest.Start(t, coordtest.Options{ID: "deploy-test",
		Actors: func(o *actors.Options) { o.Store, o.Observer = m.Store("memory", o.Store), m },
		API: func(o *httpapi.Options) {
			o.Runtime = httpapi.ObserveRuntime(o.Runtime, m)
			o.Metrics = promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
			o.Middleware = []httpapi.Middleware{httpapi.ObserveRequests(m)}
		}})
	key := group.Key{StreamPrefix: "orders", ConsumerGroup: "billing"}
	ct.Admin().Create(key, 2)
	if resp := ct.Member(key, "m-1").Heartbeat(); resp.Status != contract.StatusOK {
		t.Fatalf("m-1 joins: %+v", resp)
	}
	return &coordinator{url: ct.URL, reg: reg}
}
