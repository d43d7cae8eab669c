package main

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/redis-stream-coordinator/coordinator/config"
	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	httpapi "github.com/redis-stream-coordinator/coordinator/http"
	"github.com/redis-stream-coordinator/coordinator/metrics"
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

// fakeDataPlane answers GroupOffsets and CachedGroupOffsets with its
// offsets or err.
type fakeDataPlane struct {
	httpapi.DataPlane
	offsets contract.Offsets
	err     error
}

func (f fakeDataPlane) GroupOffsets(context.Context, *group.Group) (contract.Offsets, error) {
	return f.offsets, f.err
}

func (f fakeDataPlane) CachedGroupOffsets(ctx context.Context, g *group.Group) (contract.Offsets, error) {
	return f.GroupOffsets(ctx, g)
}

// observedGroup returns the observability of the default configuration
// changed by configure, knowing the group orders/billing of one shard, and
// its configuration.
func observedGroup(t *testing.T, configure func(*config.Monitoring)) (*observability, *group.Group, *config.Config) {
	t.Helper()
	cfg, err := config.Load("")
	if err != nil {
		t.Fatal(err)
	}
	configure(&cfg.Monitoring)
	back, err := openBackend(t.Context(), cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { back.Close() })
	obs := newObservability(cfg, back)
	g := group.New()
	g.Apply(group.MetaRecord{Meta: group.Meta{StreamPrefix: "orders", ConsumerGroup: "billing", ShardCount: 1}})
	obs.m.GroupCommitted(g.Key(), g, nil)
	return obs, g, cfg
}

// Offsets reads, live or cached, feed the shard gauges of the group;
// failed reads count as offsets refresh failures.
func TestOffsetsFeedShardGauges(t *testing.T) {
	obs, g, cfg := observedGroup(t, func(m *config.Monitoring) { m.ShardSeries = 16 })
	lag, produced := int64(3), 1.5
	o := obs.apiOptions(httpapi.Options{Health: staticHealth{}, DataPlane: fakeDataPlane{offsets: contract.Offsets{Shards: []contract.ShardOffset{
		{Shard: contract.Shard{ShardIndex: 0}, StreamPosition: contract.StreamPosition{StreamKey: "orders:0", StreamLength: 7, Lag: &lag}, ProducedPerSecond: &produced},
	}}}})
	if _, err := o.DataPlane.GroupOffsets(t.Context(), g); err != nil {
		t.Fatal(err)
	}
	o = obs.apiOptions(httpapi.Options{Health: staticHealth{}, DataPlane: fakeDataPlane{offsets: contract.Offsets{Shards: []contract.ShardOffset{
		{Shard: contract.Shard{ShardIndex: 0}, StreamPosition: contract.StreamPosition{StreamKey: "orders:0", StreamLength: 9, Lag: &lag}, ProducedPerSecond: &produced},
	}}}})
	if _, err := o.DataPlane.CachedGroupOffsets(t.Context(), g); err != nil {
		t.Fatal(err)
	}
	o = obs.apiOptions(httpapi.Options{Health: staticHealth{}, DataPlane: fakeDataPlane{err: errors.New("redis down")}})
	if _, err := o.DataPlane.GroupOffsets(t.Context(), g); err == nil {
		t.Fatal("the failure was swallowed")
	}
	if _, err := o.DataPlane.CachedGroupOffsets(t.Context(), g); err == nil {
		t.Fatal("the cached read's failure was swallowed")
	}
	rec := httptest.NewRecorder()
	o.Metrics.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	id := `coordinator="` + cfg.ID + `"`
	shard := `,group="billing",shard="0",stream="orders",stream_key="orders:0"}`
	for _, want := range []string{
		`redis_stream_coord_monitoring_refresh_failed_total{` + id + `,projection="offsets"} 2`,
		`redis_stream_coord_shard_lag{` + id + shard + ` 3`,
		`redis_stream_coord_shard_produced_per_second{` + id + shard + ` 1.5`,
		`redis_stream_coord_shard_stream_length{` + id + shard + ` 9`,
	} {
		if !strings.Contains(rec.Body.String(), want) {
			t.Errorf("no %s", want)
		}
	}
	if strings.Contains(rec.Body.String(), "redis_stream_coord_shard_consumed_per_second{") {
		t.Errorf("an unknown consumed rate was exported")
	}
}

// With the default configuration (monitoring.shard-series 0) an offsets
// read sets the group's lag and pending sums but no per-shard series: a
// scrape stays O(groups).
func TestShardSeriesOffByDefault(t *testing.T) {
	obs, g, cfg := observedGroup(t, func(*config.Monitoring) {})
	lag := int64(3)
	o := obs.apiOptions(httpapi.Options{Health: staticHealth{}, DataPlane: fakeDataPlane{offsets: contract.Offsets{Shards: []contract.ShardOffset{
		{Shard: contract.Shard{ShardIndex: 0}, StreamPosition: contract.StreamPosition{StreamKey: "orders:0", StreamLength: 7, Lag: &lag, PendingCount: 2}},
	}}}})
	if _, err := o.DataPlane.GroupOffsets(t.Context(), g); err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	o.Metrics.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	labels := `{coordinator="` + cfg.ID + `",group="billing",stream="orders"}`
	for _, want := range []string{`redis_stream_coord_group_lag` + labels + ` 3`, `redis_stream_coord_group_pending` + labels + ` 2`} {
		if !strings.Contains(rec.Body.String(), want) {
			t.Errorf("no %s", want)
		}
	}
	if strings.Contains(rec.Body.String(), "redis_stream_coord_shard_") {
		t.Errorf("per-shard series exported by default")
	}
}

// The configuration accepts monitoring.shard-series up to the metrics' hard
// cap and refuses more, so that no value is silently clipped.
func TestShardSeriesCapIsTheConfigLimit(t *testing.T) {
	for n, valid := range map[int]bool{metrics.MaxShardSeries: true, metrics.MaxShardSeries + 1: false} {
		cfg := config.Default()
		cfg.Monitoring.ShardSeries = n
		if err := cfg.Validate(); (err == nil) != valid {
			t.Errorf("shard-series %d: Validate() = %v, want valid %v", n, err, valid)
		}
	}
}

// The configuration accepts monitoring.group-series up to the metrics' hard
// cap and refuses more; its default is the metrics' default.
func TestGroupSeriesCapIsTheConfigLimit(t *testing.T) {
	if got := config.Default().Monitoring.GroupSeries; got != metrics.DefaultGroupSeries {
		t.Errorf("default group-series %d, want %d", got, metrics.DefaultGroupSeries)
	}
	for n, valid := range map[int]bool{0: true, metrics.MaxGroupSeries: true, metrics.MaxGroupSeries + 1: false, -1: false} {
		cfg := config.Default()
		cfg.Monitoring.GroupSeries = n
		if err := cfg.Validate(); (err == nil) != valid {
			t.Errorf("group-series %d: Validate() = %v, want valid %v", n, err, valid)
		}
	}
}

// monitoring.group-series reaches the metrics: with 0 the group's series
// are added up into the {other} ones.
func TestGroupSeriesConfigured(t *testing.T) {
	obs, _, cfg := observedGroup(t, func(m *config.Monitoring) { m.GroupSeries = 0 })
	rec := httptest.NewRecorder()
	obs.apiOptions(httpapi.Options{Health: staticHealth{}}).Metrics.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	body := rec.Body.String()
	if strings.Contains(body, `stream="orders"`) || !strings.Contains(body, `redis_stream_coord_groups_aggregated{coordinator="`+cfg.ID+`"} 1`) {
		t.Errorf("with group-series 0 the group has series of its own or is not counted as aggregated:\n%s", body)
	}
}

// staticHealth reports UP.
type staticHealth struct{}

func (staticHealth) Check(context.Context) contract.HealthReport {
	return contract.HealthReport{Status: "UP"}
}
