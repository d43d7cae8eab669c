package metrics

import (
	"cmp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

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

	// shards are the last observed stream offsets of the shards that get
	// series, lag and pending the sums over every shard (ShardOffsets).
	shards       []ShardSample
	lag, pending int64
	// deadLetters is the last counted number of the group's dead letters.
	deadLetters int64
	// health is the last consumption status evaluation (SetHealth); nil
	// before the first.
	health *GroupHealth

	// exported is set while the group has series of its own
	// (WithGroupSeries); Metrics.mu guards it.
	exported bool
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
	gs := m.state(key)
	m.countEvents(key, recs)
	gs.mu.Lock()
	defer gs.mu.Unlock()
	if gs.flushed && g.AssignmentEpoch > gs.assignmentEpoch {
		m.countGroup(key, func(p, g string) { m.rebalances.WithLabelValues(p, g, "reconcile").Inc() })
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
		m.countGroup(key, func(p, g string) { m.violationsTotal.WithLabelValues(p, g).Add(float64(s.Violations)) })
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
	if expired+fenced == 0 {
		return
	}
	m.countGroup(key, func(p, g string) {
		m.memberExpired.WithLabelValues(p, g).Add(float64(expired))
		m.memberFenced.WithLabelValues(p, g).Add(float64(fenced))
	})
}

// state returns key's state, creating it. A new group sorting among the
// first groupSeries is exported and pushes the last exported one out.
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
		i, _ := slices.BinarySearchFunc(m.order, key, compareKeys)
		m.order = slices.Insert(m.order, i, key)
		if i < m.groupSeries {
			m.export(gs)
		}
		if len(m.order) > m.groupSeries {
			if i < m.groupSeries {
				m.aggregate(m.groups[m.order[m.groupSeries]])
			}
			m.zeroAggregate()
		}
	}
	return gs
}

func compareKeys(a, b group.Key) int {
	return cmp.Or(strings.Compare(a.StreamPrefix, b.StreamPrefix), strings.Compare(a.ConsumerGroup, b.ConsumerGroup))
}

// export gives gs series of its own, created at 0. m.mu must be held.
func (m *Metrics) export(gs *groupState) {
	gs.exported = true
	m.exported[gs.key.StreamPrefix]++
	m.keep(gs.key)
	m.zeroSeries(gs.key)
}

// aggregate moves gs's future events to the LabelOther series and drops its
// own series. m.mu must be held.
func (m *Metrics) aggregate(gs *groupState) {
	gs.exported = false
	m.unexport(gs.key)
	m.dropSeries(gs.key)
}

// unexport counts key as no longer exported. m.mu must be held.
func (m *Metrics) unexport(key group.Key) {
	if m.exported[key.StreamPrefix]--; m.exported[key.StreamPrefix] == 0 {
		delete(m.exported, key.StreamPrefix)
	}
}

// dropSeries marks the series labelled with key for deletion, and those
// of its stream (group "none") once no exported group has that stream.
// m.mu must be held, so that no event recreates them with labels decided
// before. The deletion happens in sweep: deleting at once meant one scan
// of every vector per group (DeletePartialMatch), quadratic when a
// coordinator hands thousands of groups over.
func (m *Metrics) dropSeries(key group.Key) {
	m.dropped[key] = struct{}{}
	if m.exported[key.StreamPrefix] == 0 {
		m.dropped[group.Key{StreamPrefix: key.StreamPrefix, ConsumerGroup: LabelNone}] = struct{}{}
	}
	if len(m.dropped) >= maxDropped {
		m.sweep()
	}
}

// maxDropped bounds the keys waiting for a sweep between two scrapes.
const maxDropped = 1024

// keep takes key (and its stream) off the keys to drop: its series are
// exported again, and keep the values they had.
func (m *Metrics) keep(key group.Key) {
	delete(m.dropped, key)
	delete(m.dropped, group.Key{StreamPrefix: key.StreamPrefix, ConsumerGroup: LabelNone})
}

// sweep deletes the series of the dropped keys, one pass over each of the
// groupVecs. m.mu must be held.
func (m *Metrics) sweep() {
	if len(m.dropped) == 0 {
		return
	}
	for _, v := range m.groupVecs {
		for _, labels := range m.doomed(v) {
			v.Delete(labels)
		}
	}
	clear(m.dropped)
}

// doomed returns the variable labels of v's series whose stream and group
// are a dropped key.
func (m *Metrics) doomed(v *prometheus.CounterVec) []prometheus.Labels {
	ch := make(chan prometheus.Metric, 64)
	go func() {
		v.Collect(ch)
		close(ch)
	}()
	var out []prometheus.Labels
	for metric := range ch {
		var pb dto.Metric
		if metric.Write(&pb) != nil {
			continue
		}
		labels := prometheus.Labels{}
		for _, lp := range pb.GetLabel() {
			labels[lp.GetName()] = lp.GetValue()
		}
		if _, ok := m.dropped[group.Key{StreamPrefix: labels["stream"], ConsumerGroup: labels["group"]}]; ok {
			delete(labels, "coordinator") // a constant label, not one of v's
			out = append(out, labels)
		}
	}
	return out
}

// groupCounters collects the groupVecs, after deleting the series dropped
// since the last scrape.
type groupCounters struct{ m *Metrics }

func (c groupCounters) Describe(ch chan<- *prometheus.Desc) {
	for _, v := range c.m.groupVecs {
		v.Describe(ch)
	}
}

func (c groupCounters) Collect(ch chan<- prometheus.Metric) {
	c.m.mu.Lock()
	c.m.sweep()
	c.m.mu.Unlock()
	for _, v := range c.m.groupVecs {
		v.Collect(ch)
	}
}

// zeroSeries creates at 0 the series of key's event counters that the
// shipped alert rules read (deploy/prometheus/alerts.yml:
// member_expired_total, producer_routing_stale_total), so that their
// first event is an increase (Prometheus' advice for known label values:
// rate, increase and the rules see the step from 0 to 1). The group's
// other event counters get their series at their first event: each series
// costs about 700 B of heap, and most groups never restart, shed, fence
// or violate an invariant.
func (m *Metrics) zeroSeries(key group.Key) {
	p, g := key.StreamPrefix, key.ConsumerGroup
	for _, v := range []*prometheus.CounterVec{m.memberExpired, m.routingStale} {
		v.WithLabelValues(p, g)
	}
}

// zeroAggregate creates every event counter series of the groups beyond
// the cap (LabelOther) at 0: one series each for the coordinator.
func (m *Metrics) zeroAggregate() {
	for _, v := range []*prometheus.CounterVec{m.heartbeatsShed, m.memberExpired, m.memberFenced, m.violationsTotal, m.actorRestarts, m.routingStale} {
		v.WithLabelValues(LabelOther, LabelOther)
	}
	m.rebalances.WithLabelValues(LabelOther, LabelOther, "reconcile")
}

// lookup returns key's state, or nil for a group not known to exist.
func (m *Metrics) lookup(key group.Key) *groupState {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.groups[key]
}

// forget drops a deleted group and every series labelled with it; if it
// was exported, the first group beyond the cap takes its place.
func (m *Metrics) forget(key group.Key) {
	m.mu.Lock()
	defer m.mu.Unlock()
	gs := m.groups[key]
	if gs == nil {
		return
	}
	delete(m.groups, key)
	if m.prefixes[key.StreamPrefix]--; m.prefixes[key.StreamPrefix] == 0 {
		delete(m.prefixes, key.StreamPrefix)
	}
	i, _ := slices.BinarySearchFunc(m.order, key, compareKeys)
	m.order = slices.Delete(m.order, i, i+1)
	if !gs.exported {
		return
	}
	m.unexport(key)
	m.dropSeries(key)
	if len(m.order) >= m.groupSeries {
		m.export(m.groups[m.order[m.groupSeries-1]])
	}
}

// count calls inc with the stream and group label values of an event about
// the group prefix/grp, or about the stream prefix when grp is empty, or
// about neither: the names for an exported group (stream: a stream with an
// exported group), LabelOther for one beyond the cap, LabelUnknown for one
// this coordinator does not know (so names taken from requests never grow
// the label space), LabelNone for the missing parts. inc runs under m.mu,
// so a group pushed beyond the cap meanwhile cannot get its series back.
func (m *Metrics) count(prefix, grp string, inc func(stream, grp string)) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	switch {
	case grp != "":
		switch gs := m.groups[group.Key{StreamPrefix: prefix, ConsumerGroup: grp}]; {
		case gs == nil:
			inc(LabelUnknown, LabelUnknown)
		case !gs.exported:
			inc(LabelOther, LabelOther)
		default:
			inc(prefix, grp)
		}
	case prefix == "":
		inc(LabelNone, LabelNone)
	case m.prefixes[prefix] == 0:
		inc(LabelUnknown, LabelNone)
	case m.exported[prefix] == 0:
		inc(LabelOther, LabelNone)
	default:
		inc(prefix, LabelNone)
	}
}

// countGroup is count for key.
func (m *Metrics) countGroup(key group.Key, inc func(stream, grp string)) {
	m.count(key.StreamPrefix, key.ConsumerGroup, inc)
}

// states returns the states of the exported groups and of the others.
func (m *Metrics) states() (exported, others []*groupState) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	n := min(len(m.order), m.groupSeries)
	exported, others = make([]*groupState, n), make([]*groupState, len(m.order)-n)
	for i, key := range m.order {
		if i < n {
			exported[i] = m.groups[key]
		} else {
			others[i-n] = m.groups[key]
		}
	}
	return exported, others
}
