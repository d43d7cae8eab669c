package metrics

import (
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// lagRefreshMetrics are the lag refresher's series: what it sends to
// Redis and how old its last completed round is.
type lagRefreshMetrics struct {
	commands   *prometheus.CounterVec // kind
	roundTrips prometheus.Counter
	age        prometheus.GaugeFunc
	// since is when the last completed round started, else when the
	// refresher started (unix nanoseconds; 0: no refresher runs).
	since atomic.Int64
}

// LagRefreshKinds are the kinds of commands the lag refresher counts:
// shard reads (XINFO STREAM, XINFO GROUPS, MEMORY USAGE), EXISTS checks of
// streams known not to exist, and dead-letter counts (XLEN, XRANGE).
var LagRefreshKinds = []string{"observe", "exists", "dead_letters"}

func newLagRefreshMetrics(now func() time.Time) *lagRefreshMetrics {
	l := &lagRefreshMetrics{
		commands:   counterVec("lag_refresh_commands_total", "Redis commands the lag refresher sent, by kind: observe (3 per shard read), exists (streams known not to exist, checked), dead_letters (dead-letter stream counts).", "kind"),
		roundTrips: prometheus.NewCounter(prometheus.CounterOpts{Namespace: Namespace, Name: "lag_refresh_round_trips_total", Help: "Redis round trips (a pipeline is one) the lag refresher made."}),
	}
	l.age = prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: Namespace, Name: "lag_refresh_age_seconds",
		Help: "Seconds since the start of the lag refresher's last completed round (since it started when none completed; 0 when it does not run): the age of the lag, pending and dead-letter gauges."},
		func() float64 {
			since := l.since.Load()
			if since == 0 {
				return 0
			}
			return now().Sub(time.Unix(0, since)).Seconds()
		})
	for _, k := range LagRefreshKinds {
		l.commands.WithLabelValues(k)
	}
	return l
}

// collectors are the collectors of the series, which New registers.
func (l *lagRefreshMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{l.commands, l.roundTrips, l.age}
}

// LagRefreshSent counts commands of kind (one of LagRefreshKinds) and
// round trips the lag refresher sent.
func (m *Metrics) LagRefreshSent(kind string, commands, roundTrips int) {
	m.lagRefresh.commands.WithLabelValues(kind).Add(float64(commands))
	m.lagRefresh.roundTrips.Add(float64(roundTrips))
}

// LagRefreshed records that a lag refresher round that started at at
// completed (and, called when the refresher starts, that none did yet):
// lag_refresh_age_seconds counts from at.
func (m *Metrics) LagRefreshed(at time.Time) { m.lagRefresh.since.Store(at.UnixNano()) }
