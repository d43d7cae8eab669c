package main

import (
	"context"
	"errors"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/redis-stream-coordinator/coordinator/config"
	"github.com/redis-stream-coordinator/coordinator/group"
	httpapi "github.com/redis-stream-coordinator/coordinator/http"
	"github.com/redis-stream-coordinator/coordinator/metrics"
	"github.com/redis-stream-coordinator/coordinator/monitoring"
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
	m := metrics.New(reg, cfg.ID, metrics.WithMemberSeries(cfg.Monitoring.MemberSeries),
		metrics.WithShardSeries(cfg.Monitoring.ShardSeries), metrics.WithGroupSeries(cfg.Monitoring.GroupSeries))
	back.store = m.Store(cfg.Store.Type, back.store)
	if back.locker != nil {
		back.locker = m.Locker(back.locker)
	}
	m.WatchBreaker(cfg.Store.Type, back.breaker.State)
	return &observability{reg: reg, m: m}
}

// apiOptions returns o with the metrics wired in: the registry served at
// /actuator/prometheus and /metrics (one scrape at a time), requests observed by the outermost
// middleware, heartbeat statuses and routing reads observed on the
// coordinator, every health check setting redis_stream_coord_up, and
// every offsets read feeding the shard gauges.
func (obs *observability) apiOptions(o httpapi.Options) httpapi.Options {
	o.Metrics = metrics.Handler(obs.reg)
	o.Middleware = append([]httpapi.Middleware{httpapi.ObserveRequests(obs.m)}, o.Middleware...)
	o.Coordinator = httpapi.ObserveCoordinator(o.Coordinator, obs.m)
	o.Health = obs.m.Health(o.Health)
	if o.DataPlane != nil {
		o.DataPlane = observedDataPlane{DataPlane: o.DataPlane, m: obs.m}
	}
	return o
}

// offsetsProjection names failed offsets reads in
// monitoring_refresh_failed_total.
const offsetsProjection = "offsets"

// observedDataPlane feeds the shard offset gauges from every offsets read,
// live (/offsets) or cached (the Grafana rows), and counts the reads that
// fail.
type observedDataPlane struct {
	httpapi.DataPlane
	m *metrics.Metrics
}

func (d observedDataPlane) GroupOffsets(ctx context.Context, g *group.Group) (monitoring.Offsets, error) {
	o, err := d.DataPlane.GroupOffsets(ctx, g)
	d.record(g, o, err)
	return o, err
}

func (d observedDataPlane) CachedGroupOffsets(ctx context.Context, g *group.Group) (monitoring.Offsets, error) {
	o, err := d.DataPlane.CachedGroupOffsets(ctx, g)
	d.record(g, o, err)
	return o, err
}

// record sets g's shard gauges from o, or counts err (a canceled read is
// neither).
func (d observedDataPlane) record(g *group.Group, o monitoring.Offsets, err error) {
	switch {
	case errors.Is(err, context.Canceled):
	case err != nil:
		d.m.MonitoringRefreshFailed(offsetsProjection)
	default:
		samples := make([]metrics.ShardSample, len(o.Shards))
		for i, s := range o.Shards {
			samples[i] = shardSample(s)
		}
		d.m.ShardOffsets(g.Key(), samples)
	}
}

// shardSample is the metrics' sample of one /offsets row.
func shardSample(s monitoring.ShardOffset) metrics.ShardSample {
	return metrics.ShardSample{
		Shard: s.Shard.ShardIndex, StreamKey: s.StreamKey, StreamLength: s.StreamLength,
		Pending: s.PendingCount, Lag: s.Lag, MemoryUsageBytes: s.MemoryUsageBytes,
		LastRecordID: s.LastRecordID, LastGeneratedID: s.LastGeneratedID,
		GroupLastDeliveredID: s.GroupLastDeliveredID, ConsumerLastAckedID: s.ConsumerLastAckedID,
		ProducedPerSecond: s.ProducedPerSecond, ConsumedPerSecond: s.ConsumedPerSecond,
	}
}
