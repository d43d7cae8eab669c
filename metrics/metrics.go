package metrics

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/redis-stream-coordinator/coordinator/group"
)

// Namespace prefixes every metric name.
const Namespace = "redis_stream_coord"

// Label values used when a name taken from a request must not become a
// label (see Metrics).
const (
	// LabelNone is the stream or group label of series not about a group.
	LabelNone = "none"
	// LabelUnknown is the stream or group label of requests naming a
	// group this coordinator does not know.
	LabelUnknown = "unknown"
	// LabelOther is the stream and group label of the series that add up
	// the groups beyond the WithGroupSeries cap. Stream prefixes cannot
	// contain braces, so no real group has it.
	LabelOther = "{other}"
)

// Option configures New.
type Option func(*Metrics)

// WithClock sets the clock used for the age gauges
// (heartbeat age, lease remaining, progress age, migration age); default
// time.Now.
func WithClock(now func() time.Time) Option { return func(m *Metrics) { m.now = now } }

// WithMemberSeries turns on the per-member series (member_* and
// consumer_shard_* gauges) for at most limit members of each group, the
// first limit by member id; 0 (the default) leaves them off, so that a
// scrape stays small however many members there are. Group-level series
// are always on.
func WithMemberSeries(limit int) Option { return func(m *Metrics) { m.memberSeries = max(0, limit) } }

// DefaultGroupSeries is the number of groups that get per-group series
// unless WithGroupSeries says otherwise: about 2.6 MB of scrape for the
// group series of 1,000 groups.
const DefaultGroupSeries = 1000

// MaxGroupSeries is the hard cap of WithGroupSeries.
const MaxGroupSeries = 10000

// WithGroupSeries caps the groups that get series of their own (the
// stream- and group-labelled counters and gauges, and the member and shard
// series when those are on) at limit, at most MaxGroupSeries; 0 gives
// none. The exported groups are the first limit by (stream, group), so the
// choice is the same on every scrape, after a restart and on every
// coordinator that knows the same groups, and changes only when a group
// sorting before the limit is created or deleted. The groups beyond the
// cap are added up into one set of series labelled stream and group
// LabelOther (counters count their events; gauges sum, the migration age
// is the oldest one; the epochs are not exported), so sums over all
// series still cover every group; groups and groups_aggregated count them.
func WithGroupSeries(limit int) Option {
	return func(m *Metrics) { m.groupSeries = min(max(0, limit), MaxGroupSeries) }
}

// MaxShardSeries is the hard cap of WithShardSeries: no group exports
// per-shard series for more shards than this.
const MaxShardSeries = 1024

// WithShardSeries turns on the per-shard series (shard_* gauges, twelve or
// more per shard) for at most limit shards of each group, the first by
// index, limit capped at MaxShardSeries; 0 (the default) leaves them off,
// so that a scrape is O(groups), not O(shards). The group_lag and
// group_pending sums cover every shard either way.
func WithShardSeries(limit int) Option {
	return func(m *Metrics) { m.shardSeries = min(max(0, limit), MaxShardSeries) }
}

// Metrics holds every coordinator collector. All methods are safe for
// concurrent use and never block on I/O.
type Metrics struct {
	now func() time.Time
	// coordinator is the value of every series' coordinator label.
	coordinator string
	// memberSeries caps the members per group that get series (0: none);
	// members is where they are read from (SetSource).
	memberSeries int
	members      memberSource
	// shardSeries caps the shards per group that get series (0: none).
	shardSeries int
	// statusSeries caps the shards per group that get a shard_status
	// series (0: none).
	statusSeries int
	// groupSeries caps the groups that get series of their own (0: none).
	groupSeries int

	up prometheus.Gauge

	heartbeats        *prometheus.CounterVec // stream, group, status
	heartbeatsShed    *prometheus.CounterVec // stream, group
	memberExpired     *prometheus.CounterVec // stream, group
	memberFenced      *prometheus.CounterVec // stream, group
	rebalances        *prometheus.CounterVec // stream, group, reason
	rebalanceDuration *prometheus.HistogramVec
	violationsTotal   *prometheus.CounterVec // stream, group
	actorRestarts     *prometheus.CounterVec // stream, group
	scaleRequests     *prometheus.CounterVec // stream, group, status
	scaleFailed       *prometheus.CounterVec // stream, group, status
	routingRequests   *prometheus.CounterVec // stream, group, status
	routingStale      *prometheus.CounterVec // stream, group
	apiRequests       *prometheus.CounterVec // method, route, status, outcome, stream, group
	apiDuration       *prometheus.SummaryVec

	ticks          *prometheus.CounterVec // changed
	tickDuration   *prometheus.HistogramVec
	stateConflicts *prometheus.CounterVec // operation, attempt
	adminMutations *prometheus.CounterVec // action, outcome
	adminFailures  *prometheus.CounterVec // action
	refreshFailed  *prometheus.CounterVec // projection

	storeDuration  *prometheus.HistogramVec // store, operation, result
	mutexAcquire   *prometheus.HistogramVec // result
	mutexTimeouts  prometheus.Counter
	breakers       *breakerCollector
	messageTime    *prometheus.HistogramVec
	batchSize      prometheus.Histogram
	commitDuration *prometheus.HistogramVec // result
	groupActors    prometheus.Gauge
	cluster        *clusterMetrics
	lagRefresh     *lagRefreshMetrics

	// groupVecs are the vectors with stream and group labels, cleared
	// when a group is deleted.
	groupVecs []*prometheus.CounterVec

	mu     sync.RWMutex
	groups map[group.Key]*groupState
	// order holds the known groups sorted by key: the first groupSeries
	// are exported (groupState.exported).
	order []group.Key
	// prefixes counts the known groups of each stream prefix, exported
	// the exported ones.
	prefixes, exported map[string]int
	// dropped holds the keys whose groupVecs series are to be deleted
	// (dropSeries): a group's key, or {stream, LabelNone} for a stream's
	// own series. sweep deletes them in one pass over each vector.
	dropped map[group.Key]struct{}
}

// latencyBuckets span 0.5 ms to about 16 s.
var latencyBuckets = prometheus.ExponentialBuckets(0.0005, 2, 16)

// New builds the coordinator's collectors and registers them, together with
// the Go runtime and process collectors, with reg. Every series carries the
// constant label coordinator=coordinatorID. It panics if a collector is
// already registered (a wiring error).
func New(reg prometheus.Registerer, coordinatorID string, opts ...Option) *Metrics {
	m := &Metrics{
		now:         time.Now,
		coordinator: coordinatorID,
		groups:      map[group.Key]*groupState{},
		prefixes:    map[string]int{},
		exported:    map[string]int{},
		dropped:     map[group.Key]struct{}{},
		groupSeries: DefaultGroupSeries,

		statusSeries: DefaultStatusSeries,
	}
	for _, o := range opts {
		o(m)
	}
	grp := []string{"stream", "group"}
	// The counters labelled with stream and group (groupVecs) carry the
	// coordinator label themselves, as the group collector does: through
	// the wrapping registerer below, each of their series (thousands with
	// many groups) would get a new Desc and a wrapped copy at every scrape.
	perGroup := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: name, Help: help,
			ConstLabels: prometheus.Labels{"coordinator": coordinatorID}}, labels)
	}
	with := func(extra ...string) []string { return append(append([]string{}, grp...), extra...) }

	m.up = gauge("up", "1 while the coordinator reports itself UP (set by every health check), else 0.")
	m.up.Set(1)
	m.heartbeats = perGroup("heartbeat_total", "Handled member heartbeats by response status.", with("status")...)
	m.heartbeatsShed = perGroup("heartbeat_shed_total", "Heartbeats answered RETRY at the edge: too many were queued for their group, or its actor did not answer within the store timeout (load shedding).", grp...)
	m.memberExpired = perGroup("member_expired_total", "Members whose lease expired.", grp...)
	m.memberFenced = perGroup("member_fenced_total", "Members fenced (invalid ownership report or rebalance timeout).", grp...)
	m.rebalances = perGroup("rebalance_total", "Target assignment recomputations committed by a group commit.", with("reason")...)
	// By reason only: with stream and group labels its buckets were 18
	// series per group, 40% of a default scrape with 10,000 groups.
	m.rebalanceDuration = histogramVec("rebalance_duration_seconds", "Duration of the group commits that recomputed the target assignment.", latencyBuckets, "reason")
	m.violationsTotal = perGroup("invariant_violation_total", "Invariant violations, added up at every group refresh that found some.", grp...)
	m.actorRestarts = perGroup("actor_restarts_total", "Group actor restarts after a panic.", grp...)
	m.scaleRequests = perGroup("scale_request_total", "Scale requests by result (SUCCESS, NOOP or ERROR).", with("status")...)
	m.scaleFailed = perGroup("scale_request_failed_total", "Scale requests that failed.", with("status")...)
	m.routingRequests = perGroup("producer_routing_request_total", "Producer routing reads by result (SUCCESS or ERROR).", with("status")...)
	m.routingStale = perGroup("producer_routing_stale_total", "Producer routing reads whose knownMetadataVersion was older than the current one.", grp...)
	m.apiRequests = perGroup("api_request_total", "Coordinator API requests.", "method", "route", "status", "outcome", "stream", "group")
	// Not per group: a summary series holds its quantile streams (~46 KB),
	// so stream and group labels made it O(groups × statuses) in memory
	// (10,000 groups: ~1 GB) and in every scrape.
	m.apiDuration = prometheus.NewSummaryVec(prometheus.SummaryOpts{
		Namespace:  Namespace,
		Name:       "api_request_duration_seconds",
		Help:       "Coordinator API request latency by route (quantiles over the last minute).",
		Objectives: map[float64]float64{0.5: 0.05, 0.95: 0.01, 0.99: 0.001},
		MaxAge:     time.Minute,
		AgeBuckets: 3,
	}, []string{"method", "route", "status", "outcome"})

	m.ticks = counterVec("tick_total", "Event-loop ticks handled by group actors.", "changed")
	m.tickDuration = histogramVec("tick_duration_seconds", "Time a group actor took to handle one tick.", latencyBuckets, "changed")
	m.stateConflicts = counterVec("state_conflict_total", "Store revision conflicts by operation and attempt.", "operation", "attempt")
	m.adminMutations = counterVec("admin_mutation_total", "Admin API mutations by action and outcome.", "action", "outcome")
	m.adminFailures = counterVec("admin_mutation_failed_total", "Admin API mutations answered with an error status.", "action")
	m.refreshFailed = counterVec("monitoring_refresh_failed_total", "Monitoring projection refreshes that failed.", "projection")

	m.storeDuration = histogramVec("store_commit_duration_seconds", "Metadata store write latency by operation and result.", latencyBuckets, "store", "operation", "result")
	m.mutexAcquire = histogramVec("mutex_acquire_duration_seconds", "State mutex acquire latency by result.", latencyBuckets, "result")
	m.mutexTimeouts = prometheus.NewCounter(prometheus.CounterOpts{Namespace: Namespace, Name: "mutex_timeout_total", Help: "State mutex acquisitions that timed out."})
	m.breakers = &breakerCollector{states: map[string]func() string{}}
	m.messageTime = histogramVec("actor_message_duration_seconds", "Time a group actor took to handle one message, by message type.", latencyBuckets, "type")
	m.batchSize = prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: Namespace, Name: "group_commit_batch_size", Help: "Requests and ticks per group commit.", Buckets: prometheus.ExponentialBuckets(1, 2, 12)})
	m.commitDuration = histogramVec("group_commit_duration_seconds", "Group commit critical section duration (retries included) by result.", latencyBuckets, "result")
	m.groupActors = gauge("group_actors", "Live group actors.")
	m.cluster = newClusterMetrics()
	m.lagRefresh = newLagRefreshMetrics(m.now)

	m.groupVecs = []*prometheus.CounterVec{m.heartbeats, m.heartbeatsShed, m.memberExpired, m.memberFenced, m.rebalances, m.violationsTotal,
		m.actorRestarts, m.scaleRequests, m.scaleFailed, m.routingRequests, m.routingStale, m.apiRequests}
	reg.MustRegister(groupCounters{m})

	r := prometheus.WrapRegistererWith(prometheus.Labels{"coordinator": coordinatorID}, reg)
	r.MustRegister(m.up, m.rebalanceDuration, m.apiDuration, m.ticks, m.tickDuration, m.stateConflicts, m.adminMutations, m.adminFailures,
		m.refreshFailed, m.storeDuration, m.mutexAcquire, m.mutexTimeouts, m.breakers, m.messageTime,
		m.batchSize, m.commitDuration, m.groupActors,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	r.MustRegister(m.cluster.collectors()...)
	r.MustRegister(m.lagRefresh.collectors()...)
	// The group collector labels its series with the coordinator itself:
	// through r, every one of its series (16 per group) would get a new
	// Desc and a wrapped copy at each scrape.
	reg.MustRegister(groupCollector{m})
	return m
}

// SetUp sets redis_stream_coord_up: 1 when up, else 0. The health checker
// calls it on every check.
func (m *Metrics) SetUp(up bool) {
	if up {
		m.up.Set(1)
	} else {
		m.up.Set(0)
	}
}

// MonitoringRefreshFailed counts one failed refresh of a monitoring
// projection (e.g. "offsets" for the stream offset cache, "group_metrics"
// for the group refresher).
func (m *Metrics) MonitoringRefreshFailed(projection string) {
	m.refreshFailed.WithLabelValues(projection).Inc()
}

// breakerStates maps the state names of persistence/breaker to the values
// of store_breaker_state.
var breakerStates = map[string]float64{"closed": 0, "half-open": 1, "open": 2}

// WatchBreaker exports the state of a store's circuit breaker as
// store_breaker_state{store}: state (e.g. (*breaker.Breaker).State) is
// read at every scrape and mapped 0 closed, 1 half-open, 2 open; an
// unknown name is not exported.
func (m *Metrics) WatchBreaker(store string, state func() string) {
	m.breakers.mu.Lock()
	defer m.breakers.mu.Unlock()
	m.breakers.states[store] = state
}

// breakerCollector exports the watched breakers' states.
type breakerCollector struct {
	mu     sync.Mutex
	states map[string]func() string
}

var breakerDesc = prometheus.NewDesc(prometheus.BuildFQName(Namespace, "", "store_breaker_state"),
	"Store circuit breaker state: 0 closed, 1 half-open, 2 open.", []string{"store"}, nil)

// Describe implements prometheus.Collector.
func (c *breakerCollector) Describe(ch chan<- *prometheus.Desc) { ch <- breakerDesc }

// Collect implements prometheus.Collector.
func (c *breakerCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for store, state := range c.states {
		if v, ok := breakerStates[state()]; ok {
			ch <- prometheus.MustNewConstMetric(breakerDesc, prometheus.GaugeValue, v, store)
		}
	}
}

func gauge(name, help string) prometheus.Gauge {
	return prometheus.NewGauge(prometheus.GaugeOpts{Namespace: Namespace, Name: name, Help: help})
}

func counterVec(name, help string, labels ...string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: name, Help: help}, labels)
}

func histogramVec(name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
	return prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: Namespace, Name: name, Help: help, Buckets: buckets}, labels)
}
