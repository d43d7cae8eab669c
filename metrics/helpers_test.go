package metrics_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"

	"github.com/redis-stream-coordinator/coordinator/actors"
	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	httpapi "github.com/redis-stream-coordinator/coordinator/http"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/coordtest"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/eventually"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/fakeclock"
	"github.com/redis-stream-coordinator/coordinator/metrics"
	"github.com/redis-stream-coordinator/coordinator/observe"
)

// The compile-time proof that Metrics is an actors.Observer and an
// observe.RequestObserver.
var (
	_ actors.Observer         = (*metrics.Metrics)(nil)
	_ observe.RequestObserver = (*metrics.Metrics)(nil)
)

// newFakeClock returns a settable clock, shared by a coordinator and its
// metrics, at the tests' start time.
func newFakeClock() *fakeclock.Clock {
	return fakeclock.New(time.Date(2026, 5, 21, 0, 0, 0, 0, time.UTC))
}

// harness is one coordinator on a store, observed by its own Metrics and
// served by the real HTTP API with the observing middleware and coordinator.
type harness struct {
	t     *testing.T
	clock *fakeclock.Clock
	reg   *prometheus.Registry
	m     *metrics.Metrics
	coord *actors.System
	api   http.Handler
}

const coordinatorID = "coord-test"

var (
	orders   = group.Key{StreamPrefix: "orders", ConsumerGroup: "billing"}
	settings = group.DefaultSettings()
)

// newHarness starts a coordinator (internal/testkit/coordtest) on a handle of
// backend (its store instrumented as "memory") with the clock; ticks are
// sent by the test (TickNow).
func newHarness(t *testing.T, backend *coordtest.Backend, clock *fakeclock.Clock) *harness {
	t.Helper()
	reg := prometheus.NewRegistry()
	m := metrics.New(reg, coordinatorID, metrics.WithClock(clock.Now), metrics.WithMemberSeries(1000))
	c := coordtest.Start(t, coordtest.Options{Backend: backend, Clock: clock, Settings: settings, ID: coordinatorID,
		Actors: func(o *actors.Options) { o.Store, o.Observer = m.Store("memory", o.Store), m },
		API: func(o *httpapi.Options) {
			o.Runtime = httpapi.ObserveRuntime(o.Runtime, m)
			o.Metrics = promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
			o.Middleware = []httpapi.Middleware{httpapi.ObserveRequests(m)}
		}})
	m.SetSource(c.Actors)
	t.Cleanup(func() { m.SetSource(nil) }) // before the coordinator stops
	return &harness{t: t, clock: clock, reg: reg, m: m, coord: c.Actors, api: c.API}
}

// do serves one request and returns the status and body.
func (h *harness) do(method, path string, body any) (int, []byte) {
	h.t.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			h.t.Fatal(err)
		}
		r = bytes.NewReader(b)
	}
	rec := httptest.NewRecorder()
	h.api.ServeHTTP(rec, httptest.NewRequest(method, path, r))
	return rec.Code, rec.Body.Bytes()
}

// groupPath is the API path of key's group.
func groupPath(key group.Key) string {
	return "/coord/v1/streams/" + key.StreamPrefix + "/groups/" + key.ConsumerGroup
}

// create creates key's group with 4 shards.
// It returns once the create's message latency is recorded (after the
// answer), so that it moves no series of a later step.
func (h *harness) create(key group.Key) {
	h.t.Helper()
	h.await(`actor_message_duration_seconds_count{type="create_group"}`, func() {
		if code, body := h.do(http.MethodPost, groupPath(key), map[string]any{"initialShardCount": 4, "requestedBy": "test"}); code != http.StatusCreated {
			h.t.Fatalf("create %s: %d %s", key, code, body)
		}
	})
}

// await runs f and waits until the counter named grew: the actor records a
// message's latency only after it has answered.
func (h *harness) await(counter string, f func()) {
	h.t.Helper()
	before := scrape(h.t, h.reg)[counter]
	f()
	waitFor(h.t, h.reg, counter, func(s series) bool { return s[counter] > before })
}

// hb is a heartbeat body.
type hb struct {
	member string
	epoch  int64
	owned  []int
}

// heartbeat sends one heartbeat over HTTP and returns the response.
func (h *harness) heartbeat(key group.Key, b hb) contract.HeartbeatResponse {
	h.t.Helper()
	owned := []map[string]int{}
	for _, s := range b.owned {
		owned = append(owned, map[string]int{"shardIndex": s})
	}
	code, body := h.do(http.MethodPost, groupPath(key)+"/members/"+b.member+"/heartbeat", map[string]any{
		"protocolVersion": 1, "requestId": fmt.Sprintf("r-%s-%d", b.member, b.epoch), "memberId": b.member,
		"memberEpoch": b.epoch, "runtimeConsumerCapacity": map[string]int{"runtimeMaxConcurrency": 2, "availableConcurrency": 1},
		"ownedShards": owned,
	})
	if code != http.StatusOK {
		h.t.Fatalf("heartbeat %s: %d %s", b.member, code, body)
	}
	var resp contract.HeartbeatResponse
	if err := json.Unmarshal(body, &resp); err != nil {
		h.t.Fatal(err)
	}
	return resp
}

// series is a flattened scrape: `name{label="value",…}` (labels sorted,
// coordinator left out) → value. Histograms and summaries contribute
// their _count only.
type series map[string]float64

// timeDependent names the gauges that move with the clock alone.
var timeDependent = []string{
	"redis_stream_coord_member_heartbeat_age_seconds",
	"redis_stream_coord_member_lease_remaining_seconds",
	"redis_stream_coord_consumer_shard_progress_age_seconds",
	"redis_stream_coord_migration_active_age_seconds",
}

// scrapeCaused are series that scraping itself moves: a scrape reads the
// member series from each group's snapshot, and one built since the last
// commit is a get_snapshot message.
var scrapeCaused = []string{`actor_message_duration_seconds_count{type="get_snapshot"}`}

// scrape gathers reg, leaving out the Go runtime and process collectors,
// the time-dependent gauges and the series scraping moves.
func scrape(t *testing.T, reg prometheus.Gatherer) series {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	out := series{}
	for _, f := range families {
		name := f.GetName()
		if !strings.HasPrefix(name, metrics.Namespace+"_") || slices.Contains(timeDependent, name) {
			continue
		}
		for _, mt := range f.GetMetric() {
			switch f.GetType() {
			case dto.MetricType_COUNTER:
				out[seriesName(name, mt)] = mt.GetCounter().GetValue()
			case dto.MetricType_GAUGE:
				out[seriesName(name, mt)] = mt.GetGauge().GetValue()
			case dto.MetricType_HISTOGRAM:
				if k := seriesName(name+"_count", mt); !slices.Contains(scrapeCaused, k) {
					out[k] = float64(mt.GetHistogram().GetSampleCount())
				}
			case dto.MetricType_SUMMARY:
				out[seriesName(name+"_count", mt)] = float64(mt.GetSummary().GetSampleCount())
			}
		}
	}
	return out
}

func seriesName(name string, mt *dto.Metric) string {
	var labels []string
	for _, l := range mt.GetLabel() {
		if l.GetName() != "coordinator" {
			labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
		}
	}
	sort.Strings(labels)
	return strings.TrimPrefix(name, metrics.Namespace+"_") + "{" + strings.Join(labels, ",") + "}"
}

// moved returns the series whose value differs between two scrapes (an
// absent series counts as 0), with the difference.
func moved(before, after series) series {
	out := series{}
	for k, v := range after {
		if d := v - before[k]; d != 0 {
			out[k] = d
		}
	}
	for k, v := range before {
		if _, ok := after[k]; !ok && v != 0 {
			out[k] = -v
		}
	}
	return out
}

// asyncSeries is reported after the actor has answered (the message
// latency is measured around the whole handler), so a step waits for it.
const asyncSeries = "actor_message_duration_seconds_count{"

// step runs f and checks that exactly the want series moved, by exactly
// the given amounts. It first waits until the asynchronous series have
// moved as much as wanted.
func (h *harness) step(name string, f func(), want series) {
	h.t.Helper()
	before := scrape(h.t, h.reg)
	f()
	var got series
	waitFor(h.t, h.reg, name+": the message latencies", func(after series) bool {
		got = moved(before, after)
		for k, v := range want {
			if strings.HasPrefix(k, asyncSeries) && got[k] < v {
				return false
			}
		}
		return true
	})
	var diffs []string
	for k, v := range want {
		if got[k] != v {
			diffs = append(diffs, fmt.Sprintf("  %s moved %v, want %v", k, got[k], v))
		}
	}
	for k, v := range got {
		if _, ok := want[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("  %s moved %v unexpectedly", k, v))
		}
	}
	if len(diffs) > 0 {
		sort.Strings(diffs)
		h.t.Errorf("%s:\n%s", name, strings.Join(diffs, "\n"))
	}
}

// waitFor polls reg until cond holds on a scrape.
func waitFor(t *testing.T, reg prometheus.Gatherer, what string, cond func(series) bool) {
	t.Helper()
	eventually.True(t, what, func() bool { return cond(scrape(t, reg)) })
}

// newMemoryHarness is newHarness on a fresh memory store.
func newMemoryHarness(t *testing.T) *harness {
	return newHarness(t, coordtest.Memory(), newFakeClock())
}
