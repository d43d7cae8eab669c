package main

import (
	"context"
	"errors"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/redis-stream-coordinator/coordinator/config"
	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
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
	m := metrics.New(reg, cfg.ID, metrics.WithMemberSeries(cfg.Monitoring.MemberSeries),
		metrics.WithShardSeries(cfg.Monitoring.ShardSeries), metrics.WithGroupSeries(cfg.Monitoring.GroupSeries),
		metrics.WithStatusSeries(cfg.Monitoring.StatusSeries))
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
	o.Runtime = httpapi.ObserveRuntime(o.Runtime, obs.m)
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

func (d observedDataPlane) GroupOffsets(ctx context.Context, g *group.Group) (contract.Offsets, error) {
	o, err := d.DataPlane.GroupOffsets(ctx, g)
	d.record(g, o, err)
	return o, err
}

func (d observedDataPlane) CachedGroupOffsets(ctx context.Context, g *group.Group) (contract.Offsets, error) {
	o, err := d.DataPlane.CachedGroupOffsets(ctx, g)
	d.record(g, o, err)
	return o, err
}

// record sets g's shard gauges from o, or counts err (offsetsRead).
func (d observedDataPlane) record(g *group.Group, o contract.Offsets, err error) {
	if offsetsRead(d.m, err) {
		d.m.ShardOffsets(g.Key(), shardSamples(o.Shards))
	}
}

// offsetsRead reports whether an offsets read succeeded (err is nil); a
// failed one is counted in monitoring_refresh_failed_total unless it was
// canceled.
func offsetsRead(m *metrics.Metrics, err error) bool {
	if err != nil && !errors.Is(err, context.Canceled) {
		m.MonitoringRefreshFailed(offsetsProjection)
	}
	return err == nil
}

// shardSamples are the metrics' samples of /offsets rows.
func shardSamples(rows []contract.ShardOffset) []metrics.ShardSample {
	samples := make([]metrics.ShardSample, len(rows))
	for i, s := range rows {
		samples[i] = shardSample(s)
	}
	return samples
}

// shardSample is the metrics' sample of one /offsets row.
func shardSample(s contract.ShardOffset) metrics.ShardSample {
	return metrics.ShardSample{
		Shard: s.Shard.ShardIndex, StreamKey: s.StreamKey, StreamLength: s.StreamLength,
		Pending: s.PendingCount, Lag: s.Lag, MemoryUsageBytes: s.MemoryUsageBytes,
		LastRecordID: s.LastRecordID, LastGeneratedID: s.LastGeneratedID,
		GroupLastDeliveredID: s.GroupLastDeliveredID, ConsumerLastAckedID: s.ConsumerLastAckedID,
		ProducedPerSecond: s.ProducedPerSecond, ConsumedPerSecond: s.ConsumedPerSecond,
	}
}
