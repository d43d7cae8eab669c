package metrics

import (
	"iter"
	"maps"
	"slices"
	"strings"
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
	// deleted is set when the group is forgotten, so that a refresher
	// holding the state does not record for it any more.
	deleted bool

	// Refreshed from O(1) fields at every commit.
	groupEpoch, assignmentEpoch int64
	migrationSince              group.Instant // createdAt of the active migration; 0 when none
	total, active               int
	mailbox                     int
	// flushed is set by a successful BatchFlushed and consumed by the
	// GroupCommitted that follows it; flushTime is that flush's duration.
	flushed   bool
	flushTime time.Duration
	// commits counts GroupCommitted calls (the refresher uses it to see
	// whether a commit raced with its read).
	commits uint64

	// Refreshed at most once per interval: O(members) work.
	refreshedAt   time.Time // zero before the first refresh
	dirty         bool      // a commit after refreshedAt is not reflected yet
	expired       int
	revokePending int
	targetShards  int
	currentShards int
	violations    int
	duplicates    int
	members       []memberSample // the members with series (WithMemberSeries)

	// shards are the last observed stream offsets (ShardOffsets).
	shards []ShardSample
}

// memberSample is the part of a member record the member gauges show.
type memberSample struct {
	id                      string
	state                   group.MemberState
	lastHeartbeat, leaseEnd group.Instant
	maxConcurrency, workers int
	current, revoking       int
	progress                []group.ShardProgress
}

// GroupCommitted implements actors.Observer. It counts the expiries and
// fencings that the commit's records carry out (exactly: each decision is
// committed once, by the coordinator that made it), refreshes the
// group-level gauges from O(1) fields every time, counts a rebalance when a
// group commit raised the assignment epoch, and refreshes everything that
// needs a pass over the members (member gauges, member states, violations)
// at most once per refresh interval; a commit that falls inside the
// interval marks the group dirty for RefreshStale. A group that no longer
// exists is forgotten with all its series.
func (m *Metrics) GroupCommitted(key group.Key, g *group.Group, recs []group.Record) {
	if !g.Exists() {
		m.forget(key)
		return
	}
	m.countEvents(key, recs)
	gs := m.state(key)
	now := m.now()
	gs.mu.Lock()
	defer gs.mu.Unlock()
	gs.commits++
	if gs.flushed && g.AssignmentEpoch > gs.assignmentEpoch {
		m.rebalances.WithLabelValues(key.StreamPrefix, key.ConsumerGroup, "reconcile").Inc()
		m.rebalanceDuration.WithLabelValues(key.StreamPrefix, key.ConsumerGroup, "reconcile").Observe(gs.flushTime.Seconds())
	}
	gs.flushed = false
	gs.groupEpoch, gs.assignmentEpoch = g.GroupEpoch, g.AssignmentEpoch
	gs.total, gs.active = len(g.Members), len(g.LiveMemberIDs())
	gs.migrationSince = 0
	if id := g.ActiveReshardingID; id != nil {
		gs.migrationSince = g.Migrations[*id].CreatedAt
	}
	if !gs.refreshedAt.IsZero() && now.Sub(gs.refreshedAt) < m.interval {
		gs.dirty = true
		return
	}
	m.refresh(gs, now, maps.Values(g.Members), g.Targets, g.Violations())
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

// refresh is the O(members) refresh of gs (locked by the caller).
func (m *Metrics) refresh(gs *groupState, now time.Time, members iter.Seq[*group.Member], targets map[string]group.ShardSet, violations []group.Violation) {
	var total, active, expired, revoking, current int
	var sampled []memberSample
	for mem := range members {
		total++
		switch {
		case mem.State.Live():
			active++
			current += len(mem.CurrentAssignment)
		case mem.State == group.MemberExpired:
			expired++
		}
		if mem.Holds() {
			revoking += len(mem.Revoking)
		}
		if m.memberSeries > 0 {
			sampled = append(sampled, memberSample{
				id: mem.MemberID, state: mem.State,
				lastHeartbeat: mem.LastHeartbeatAt, leaseEnd: mem.MemberLeaseExpiresAt,
				maxConcurrency: mem.RuntimeMaxConcurrency, workers: mem.ActiveConsumerWorkers,
				current: len(mem.CurrentAssignment), revoking: len(mem.Revoking),
				progress: slices.Clone(mem.ShardProgress), // g is not kept
			})
		}
	}
	if len(sampled) > m.memberSeries {
		slices.SortFunc(sampled, func(a, b memberSample) int { return strings.Compare(a.id, b.id) })
		sampled = slices.Clip(sampled[:m.memberSeries])
	}
	target := 0
	for _, t := range targets {
		target += len(t)
	}
	duplicates := 0
	for _, v := range violations {
		if v.Kind == group.DuplicateCurrentOwners {
			duplicates++
		}
	}
	gs.members, gs.refreshedAt, gs.dirty = sampled, now, false
	gs.total, gs.active, gs.expired = total, active, expired
	gs.revokePending, gs.currentShards, gs.targetShards = revoking, current, target
	gs.violations, gs.duplicates = len(violations), duplicates

	if len(violations) > 0 {
		m.violationsTotal.WithLabelValues(gs.key.StreamPrefix, gs.key.ConsumerGroup).Add(float64(len(violations)))
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
	}
	return gs
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
	gs.mu.Lock()
	gs.deleted = true
	gs.mu.Unlock()
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
