package metrics

import (
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/redis-stream-coordinator/coordinator/group"
)

// groupState is what the metrics know about one existing group. mu guards
// every field; Metrics.mu guards the map that holds it.
type groupState struct {
	mu  sync.Mutex
	key group.Key

	// stats are the group's gauges as of its last commit (GroupStats).
	stats group.Stats
	// assignmentEpoch is the committed one of the last GroupCommitted: a
	// group commit that raises it counts a rebalance.
	assignmentEpoch int64
	mailbox         int
	// flushed is set by a successful BatchFlushed and consumed by the
	// GroupCommitted that follows it; flushTime is that flush's duration.
	flushed   bool
	flushTime time.Duration

	// shards are the last observed stream offsets (ShardOffsets).
	shards []ShardSample
	// deadLetters is the last counted number of the group's dead letters.
	deadLetters int64
}

// GroupCommitted implements actors.Observer. It counts the expiries and
// fencings that the commit's records carry out (exactly: each decision is
// committed once, by the coordinator that made it) and a rebalance when a
// group commit raised the assignment epoch; O(records). A group that no
// longer exists is forgotten with all its series.
func (m *Metrics) GroupCommitted(key group.Key, g *group.Group, recs []group.Record) {
	if !g.Exists() {
		m.forget(key)
		return
	}
	m.countEvents(key, recs)
	gs := m.state(key)
	gs.mu.Lock()
	defer gs.mu.Unlock()
	if gs.flushed && g.AssignmentEpoch > gs.assignmentEpoch {
		m.rebalances.WithLabelValues(key.StreamPrefix, key.ConsumerGroup, "reconcile").Inc()
		m.rebalanceDuration.WithLabelValues("reconcile").Observe(gs.flushTime.Seconds())
	}
	gs.flushed = false
	gs.assignmentEpoch = g.AssignmentEpoch
}

// GroupStats implements actors.Observer: it keeps the stats the group
// gauges are computed from at scrape time (O(1)), and records the
// violations: each commit after which the group has n violations adds n to
// invariant_violation_total (docs/protocol.md §10.1, "+n per recording with
// violations"). Stats of a group not known to exist are ignored.
func (m *Metrics) GroupStats(key group.Key, s group.Stats) {
	gs := m.lookup(key)
	if gs == nil {
		return
	}
	gs.mu.Lock()
	defer gs.mu.Unlock()
	if s.Violations > 0 {
		m.violationsTotal.WithLabelValues(key.StreamPrefix, key.ConsumerGroup).Add(float64(s.Violations))
	}
	gs.stats = s
}

// countEvents counts the member decisions that recs carry out.
func (m *Metrics) countEvents(key group.Key, recs []group.Record) {
	var expired, fenced int
	for _, r := range recs {
		if mr, ok := r.(group.MemberRecord); ok {
			switch mr.Event {
			case group.MemberExpiredEvent:
				expired++
			case group.MemberFencedEvent:
				fenced++
			}
		}
	}
	if expired > 0 {
		m.memberExpired.WithLabelValues(key.StreamPrefix, key.ConsumerGroup).Add(float64(expired))
	}
	if fenced > 0 {
		m.memberFenced.WithLabelValues(key.StreamPrefix, key.ConsumerGroup).Add(float64(fenced))
	}
}

// state returns key's state, creating it.
func (m *Metrics) state(key group.Key) *groupState {
	m.mu.RLock()
	gs := m.groups[key]
	m.mu.RUnlock()
	if gs != nil {
		return gs
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if gs = m.groups[key]; gs == nil {
		gs = &groupState{key: key}
		m.groups[key] = gs
		m.prefixes[key.StreamPrefix]++
		m.zeroSeries(key)
	}
	return gs
}

// zeroSeries creates the counter series of a newly known group at 0, so that
// the first event is an increase (Prometheus' advice for known label values:
// rate, increase and the alert rules see the step from 0 to 1).
func (m *Metrics) zeroSeries(key group.Key) {
	p, g := key.StreamPrefix, key.ConsumerGroup
	for _, v := range []*prometheus.CounterVec{m.heartbeatsShed, m.memberExpired, m.memberFenced, m.violationsTotal, m.actorRestarts, m.routingStale} {
		v.WithLabelValues(p, g)
	}
	m.rebalances.WithLabelValues(p, g, "reconcile")
}

// lookup returns key's state, or nil for a group not known to exist.
func (m *Metrics) lookup(key group.Key) *groupState {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.groups[key]
}

// forget drops a deleted group and every series labelled with it.
func (m *Metrics) forget(key group.Key) {
	m.mu.Lock()
	gs := m.groups[key]
	if gs != nil {
		delete(m.groups, key)
		if m.prefixes[key.StreamPrefix]--; m.prefixes[key.StreamPrefix] == 0 {
			delete(m.prefixes, key.StreamPrefix)
		}
	}
	m.mu.Unlock()
	if gs == nil {
		return
	}
	labels := prometheus.Labels{"stream": key.StreamPrefix, "group": key.ConsumerGroup}
	for _, v := range m.groupVecs {
		v.DeletePartialMatch(labels)
	}
}

// groupLabels returns the stream and group label values for a request
// naming key: its names when the group is known, LabelUnknown otherwise, so
// that names taken from requests never grow the label space.
func (m *Metrics) groupLabels(key group.Key) (stream, grp string) {
	if m.lookup(key) == nil {
		return LabelUnknown, LabelUnknown
	}
	return key.StreamPrefix, key.ConsumerGroup
}

// streamLabel returns prefix when some known group has it, else
// LabelUnknown.
func (m *Metrics) streamLabel(prefix string) string {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.prefixes[prefix] > 0 {
		return prefix
	}
	return LabelUnknown
}

// states returns the known groups' states.
func (m *Metrics) states() []*groupState {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return slices.Collect(maps.Values(m.groups))
}
