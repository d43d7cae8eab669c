package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/redis-stream-coordinator/coordinator/cluster"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/persistence"
)

// clusterMetrics are the coordinator cluster's series (docs/cluster.md):
// groups owned, handovers, forwarded requests, registry renewals and the
// live coordinators.
type clusterMetrics struct {
	owned     prometheus.Gauge
	handovers *prometheus.CounterVec
	forwarded *prometheus.CounterVec
	renewals  *prometheus.CounterVec
	live      prometheus.Gauge
}

func newClusterMetrics() *clusterMetrics {
	c := &clusterMetrics{
		owned:     gauge("cluster_groups_owned", "Groups this coordinator owns."),
		handovers: counterVec("cluster_handover_total", "Groups handed over to the coordinator they are placed on, by cause (placement, shutdown).", "cause"),
		forwarded: counterVec("cluster_forwarded_request_total", "Requests forwarded to the owning coordinator, by result (ok, unreachable; insecure_peer: not forwarded, the owner advertises http while this coordinator serves TLS).", "result"),
		renewals:  counterVec("cluster_lease_renewal_total", "Coordinator registry lease renewals by result (ok, lost, failed).", "result"),
		live:      gauge("cluster_coordinators", "Live coordinators in the registry, as this coordinator last read it."),
	}
	for _, cause := range []string{"placement", "shutdown"} {
		c.handovers.WithLabelValues(cause)
	}
	for _, r := range []string{"ok", "unreachable", cluster.InsecurePeer} {
		c.forwarded.WithLabelValues(r)
	}
	for _, r := range []string{"ok", "lost", "failed"} {
		c.renewals.WithLabelValues(r)
	}
	return c
}

// collectors are the collectors of the series, which New registers.
func (c *clusterMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{c.owned, c.handovers, c.forwarded, c.renewals, c.live}
}

// GroupOwned implements actors.Observer.
func (m *Metrics) GroupOwned(_ group.Key, owned bool) {
	if owned {
		m.cluster.owned.Inc()
	} else {
		m.cluster.owned.Dec()
	}
}

// HandedOver implements actors.Observer.
func (m *Metrics) HandedOver(_ group.Key, cause string) {
	m.cluster.handovers.WithLabelValues(cause).Inc()
}

// Forwarded counts one request forwarded to its group's owner; reached is
// false when the owner could not be reached.
func (m *Metrics) Forwarded(reached bool) {
	result := "ok"
	if !reached {
		result = "unreachable"
	}
	m.cluster.forwarded.WithLabelValues(result).Inc()
}

var _ cluster.ForwardObserver = (*Metrics)(nil)

// ForwardRefused implements cluster.ForwardObserver: one request not
// forwarded to its group's owner, counted with cause as its result
// (cluster.InsecurePeer).
func (m *Metrics) ForwardRefused(cause string) {
	m.cluster.forwarded.WithLabelValues(cause).Inc()
}

// Renewed implements cluster.Observer.
func (m *Metrics) Renewed(err error) {
	switch {
	case err == nil:
		m.cluster.renewals.WithLabelValues("ok").Inc()
	case persistence.Classify(err) == persistence.Unavailable:
		m.cluster.renewals.WithLabelValues("failed").Inc()
	default:
		m.cluster.renewals.WithLabelValues("lost").Inc()
	}
}

// MembershipChanged implements cluster.Observer.
func (m *Metrics) MembershipChanged(live []persistence.Peer) {
	m.cluster.live.Set(float64(len(live)))
}
