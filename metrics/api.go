package metrics

import (
	"context"
	"strconv"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/observe"
)

// The methods of this file implement observe.RequestObserver, which the
// HTTP edge reports to, and Health decorates an observe.HealthChecker.

// Request outcomes (docs/protocol.md §10.1 api_request_total{outcome}).
const (
	OutcomeSuccess     = "SUCCESS"
	OutcomeClientError = "CLIENT_ERROR"
	OutcomeServerError = "SERVER_ERROR"
	OutcomeError       = "ERROR" // the handler panicked
)

// Statuses of the scale and producer routing counters.
const (
	StatusSuccess = "SUCCESS"
	StatusNoop    = "NOOP"
	StatusError   = "ERROR"
)

// RequestServed implements observe.RequestObserver: api_request_total and
// api_request_duration_seconds (by route, without stream and group) for
// every request, and for Admin API mutations also
// admin_mutation_total{action,outcome} and admin_mutation_failed_total.
// The stream and group labels are the path's names when they name a known
// group (stream-level routes: a known stream prefix, group "none"),
// "unknown" otherwise, and "none" off group paths.
func (m *Metrics) RequestServed(r observe.ServedRequest) {
	outcome := outcomeLabel(r.Status, r.Panicked)
	labels := []string{r.Method, r.Template, strconv.Itoa(r.Status), outcome}
	m.count(r.StreamPrefix, r.ConsumerGroup, func(stream, grp string) {
		m.apiRequests.WithLabelValues(append(labels, stream, grp)...).Inc()
	})
	m.apiDuration.WithLabelValues(labels...).Observe(r.Duration.Seconds())
	action := string(r.Action)
	if action == "" {
		return
	}
	m.adminMutations.WithLabelValues(action, outcome).Inc()
	if outcome != OutcomeSuccess {
		m.adminFailures.WithLabelValues(action).Inc()
	}
}

// ScaleServed implements observe.RequestObserver:
// scale_request_total{status} (SUCCESS, NOOP or ERROR) and, for ERROR,
// scale_request_failed_total. A stream scale that failed before reaching
// its groups is labelled with the stream and group "none".
func (m *Metrics) ScaleServed(key group.Key, noop bool, err error) {
	status := StatusSuccess
	switch {
	case err != nil:
		status = StatusError
	case noop:
		status = StatusNoop
	}
	m.countGroup(key, func(stream, grp string) {
		if err != nil {
			m.scaleFailed.WithLabelValues(stream, grp, status).Inc()
		}
		m.scaleRequests.WithLabelValues(stream, grp, status).Inc()
	})
}

// HeartbeatHandled implements observe.RequestObserver:
// heartbeat_total{status}.
func (m *Metrics) HeartbeatHandled(key group.Key, status contract.HeartbeatStatus) {
	m.countGroup(key, func(p, g string) { m.heartbeats.WithLabelValues(p, g, string(status)).Inc() })
}

// RoutingServed implements observe.RequestObserver:
// producer_routing_request_total{status} and producer_routing_stale_total.
func (m *Metrics) RoutingServed(key group.Key, stale bool, err error) {
	status := StatusSuccess
	if err != nil {
		status = StatusError
	}
	m.countGroup(key, func(p, g string) {
		m.routingRequests.WithLabelValues(p, g, status).Inc()
		if stale {
			m.routingStale.WithLabelValues(p, g).Inc()
		}
	})
}

// outcomeLabel is the outcome label of a served request (api_request_total,
// admin_mutation_total): its status class, or ERROR when the handler panicked.
func outcomeLabel(status int, panicked bool) string {
	switch {
	case panicked:
		return OutcomeError
	case status < 400:
		return OutcomeSuccess
	case status < 500:
		return OutcomeClientError
	}
	return OutcomeServerError
}

// Health returns next setting redis_stream_coord_up on every check: 1 when
// the report's status is UP, 0 otherwise (DEGRADED).
func (m *Metrics) Health(next observe.HealthChecker) observe.HealthChecker {
	return health{next: next, m: m}
}

type health struct {
	next observe.HealthChecker
	m    *Metrics
}

func (h health) Check(ctx context.Context) contract.HealthReport {
	r := h.next.Check(ctx)
	h.m.SetUp(r.Status == "UP")
	return r
}
