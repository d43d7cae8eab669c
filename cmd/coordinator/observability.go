package main

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/redis-stream-coordinator/coordinator/config"
	httpapi "github.com/redis-stream-coordinator/coordinator/http"
	"github.com/redis-stream-coordinator/coordinator/metrics"
)

// observability is the coordinator's Prometheus instrumentation: one
// registry, built here and nowhere else, and the metrics registered in it.
type observability struct {
	reg *prometheus.Registry
	m   *metrics.Metrics
}

// newObservability builds the registry and the metrics (labelled with the
// coordinator id) and instruments back: store writes, mutex acquisitions
// and the breaker state. The store is instrumented outside the breaker, so
// writes the breaker refuses count as unavailable.
func newObservability(cfg *config.Config, back *backend) *observability {
	reg := prometheus.NewRegistry()
	m := metrics.New(reg, cfg.ID)
	back.store = m.Store(cfg.Store.Type, back.store)
	if back.locker != nil {
		back.locker = m.Locker(back.locker)
	}
	m.WatchBreaker(cfg.Store.Type, back.breaker.State)
	return &observability{reg: reg, m: m}
}

// apiOptions returns o with the metrics wired in: the registry served at
// /actuator/prometheus and /metrics, requests observed by the outermost
// middleware, heartbeat statuses and routing reads observed on the
// coordinator, and every health check setting redis_stream_coord_up.
func (obs *observability) apiOptions(o httpapi.Options) httpapi.Options {
	o.Metrics = promhttp.HandlerFor(obs.reg, promhttp.HandlerOpts{})
	o.Middleware = append([]httpapi.Middleware{httpapi.ObserveRequests(obs.m)}, o.Middleware...)
	o.Coordinator = httpapi.ObserveCoordinator(o.Coordinator, obs.m)
	o.Health = obs.m.Health(o.Health)
	return o
}
