package metrics

import (
	"cmp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
)

// ShardSample is the observed state of one stream shard of a group (the
// scalars of a docs/protocol.md §2.6 StreamShardOffset), as computed by the monitoring code.
type ShardSample struct {
	Shard        int
	StreamKey    string
	StreamLength int64
	Pending      int64
	// Lag and MemoryUsageBytes are nil when unknown (exported as 0).
	Lag              *int64
	MemoryUsageBytes *int64
	// Stream entry ids "<ms>-<seq>"; nil or malformed when unknown
	// (exported as -1).
	LastRecordID         *string
	LastGeneratedID      *string
	GroupLastDeliveredID *string
	ConsumerLastAckedID  *string
	// ProducedPerSecond and ConsumedPerSecond are the observed rates; nil
	// when unknown (not exported).
	ProducedPerSecond *float64
	ConsumedPerSecond *float64
}

// ShardOffsets replaces the shard offset gauges of key with shards (one
// per shard index: the first of duplicates is kept): it keeps the lag and
// pending sums over every shard and the samples of the shards that get
// series (WithShardSeries), nothing more (SetShardOffsets). It is ignored
// for a group the metrics do not know, so that offsets of a deleted group
// cannot come back.
func (m *Metrics) ShardOffsets(key group.Key, shards []ShardSample) {
	sorted := slices.CompactFunc(slices.SortedStableFunc(slices.Values(shards), func(a, b ShardSample) int {
		return cmp.Compare(a.Shard, b.Shard)
	}), func(a, b ShardSample) bool { return a.Shard == b.Shard })
	var lag, pending int64
	for _, s := range sorted {
		if s.Lag != nil {
			lag += *s.Lag
		}
		pending += s.Pending
	}
	m.SetShardOffsets(key, lag, pending, sorted)
}

// ShardSeries is the number of shards per group that get series
// (WithShardSeries): SetShardOffsets keeps the samples of the shards whose
// index is below it.
func (m *Metrics) ShardSeries() int { return m.shardSeries }

// SetShardOffsets sets the shard offset gauges of key: lag and pending are
// the sums over every shard (group_lag, group_pending), shards samples in
// increasing shard order, one per index, of which those below ShardSeries
// are kept (a copy; shards may hold only those). It is ignored for a group
// the metrics do not know.
func (m *Metrics) SetShardOffsets(key group.Key, lag, pending int64, shards []ShardSample) {
	gs := m.lookup(key)
	if gs == nil {
		return
	}
	var kept []ShardSample
	if n, _ := slices.BinarySearchFunc(shards, m.shardSeries, func(s ShardSample, i int) int { return cmp.Compare(s.Shard, i) }); n > 0 {
		kept = slices.Clone(shards[:n])
	}
	gs.mu.Lock()
	defer gs.mu.Unlock()
	gs.shards, gs.lag, gs.pending = kept, lag, pending
}

// DeadLetters sets the dead_letter_entries gauge of key to n (its entries
// in its prefix's dead-letter stream). It is ignored for a group the
// metrics do not know.
func (m *Metrics) DeadLetters(key group.Key, n int64) {
	if gs := m.lookup(key); gs != nil {
		gs.mu.Lock()
		gs.deadLetters = n
		gs.mu.Unlock()
	}
}

// def is one gauge of the group collector and how to read it from T at a
// given time.
type def[T any] struct {
	desc  *prometheus.Desc
	value func(T, time.Time) float64
}

func newDef[T any](name, help string, labels []string, value func(T, time.Time) float64) def[T] {
	return def[T]{prometheus.NewDesc(prometheus.BuildFQName(Namespace, "", name), help, labels, nil), value}
}

var (
	// The group collector's label names end with coordinator, which it sets
	// itself (see New).
	groupLabelNames    = []string{"stream", "group", "coordinator"}
	memberLabelNames   = []string{"stream", "group", "member", "coordinator"}
	progressLabelNames = []string{"stream", "group", "member", "shard", "coordinator"}
	shardLabelNames    = []string{"stream", "group", "shard", "stream_key", "coordinator"}

	membersDesc = prometheus.NewDesc(prometheus.BuildFQName(Namespace, "", "members"),
		"Member records by state: total, active (ACTIVE or STARTING), expired.", []string{"stream", "group", "state", "coordinator"}, nil)

	shardRateDefs = []struct {
		desc  *prometheus.Desc
		value func(ShardSample) *float64
	}{
		{prometheus.NewDesc(prometheus.BuildFQName(Namespace, "", "shard_produced_per_second"),
			"Entries produced per second between the last two observations; absent when unknown.", shardLabelNames, nil),
			func(s ShardSample) *float64 { return s.ProducedPerSecond }},
		{prometheus.NewDesc(prometheus.BuildFQName(Namespace, "", "shard_consumed_per_second"),
			"Estimated entries consumed per second (length growth minus lag growth); absent when unknown.", shardLabelNames, nil),
			func(s ShardSample) *float64 { return s.ConsumedPerSecond }},
	}

	groupsDesc = prometheus.NewDesc(prometheus.BuildFQName(Namespace, "", "groups"),
		"Groups this coordinator knows.", []string{"coordinator"}, nil)
	groupsAggregatedDesc = prometheus.NewDesc(prometheus.BuildFQName(Namespace, "", "groups_aggregated"),
		"Known groups beyond monitoring.group-series: their series are added up into those labelled stream and group \"{other}\".", []string{"coordinator"}, nil)

	// epochDefs are only exported per group: a sum or maximum over groups
	// means nothing.
	epochDefs = []def[*groupState]{
		newDef("group_epoch", "Group epoch.", groupLabelNames, func(g *groupState, _ time.Time) float64 { return float64(g.stats.GroupEpoch) }),
		newDef("assignment_epoch", "Assignment epoch.", groupLabelNames, func(g *groupState, _ time.Time) float64 { return float64(g.stats.AssignmentEpoch) }),
	}

	// groupDefs are exported per group and, added up, for the groups
	// beyond the cap (see aggregate).
	groupDefs = []def[*groupState]{
		newDef("migration_active", "1 while a resharding migration is active.", groupLabelNames, func(g *groupState, _ time.Time) float64 { return boolValue(g.stats.MigrationSince != 0) }),
		newDef("migration_active_age_seconds", "Age of the active resharding migration; 0 when none.", groupLabelNames, func(g *groupState, now time.Time) float64 {
			if g.stats.MigrationSince == 0 {
				return 0
			}
			return secondsSince(g.stats.MigrationSince, now)
		}),
		newDef("revoke_pending", "Shards that owners are still revoking.", groupLabelNames, func(g *groupState, _ time.Time) float64 { return float64(g.stats.RevokePending) }),
		newDef("group_shards_paused", "Shards granted to nobody: paused by an operator or by a live offset reset under way.", groupLabelNames, func(g *groupState, _ time.Time) float64 { return float64(g.stats.Paused) }),
		newDef("invariant_violations", "Current invariant violations.", groupLabelNames, func(g *groupState, _ time.Time) float64 { return float64(g.stats.Violations) }),
		newDef("duplicate_owner_violations", "Shards currently owned by more than one member.", groupLabelNames, func(g *groupState, _ time.Time) float64 { return float64(g.stats.DuplicateOwners) }),
		newDef("target_assignment_shards", "Shards in the target assignment.", groupLabelNames, func(g *groupState, _ time.Time) float64 { return float64(g.stats.TargetShards) }),
		newDef("current_assignment_shards", "Shards live members report owning.", groupLabelNames, func(g *groupState, _ time.Time) float64 { return float64(g.stats.CurrentShards) }),
		newDef("actor_mailbox_depth", "Messages queued for the group actor, sampled at each flush.", groupLabelNames, func(g *groupState, _ time.Time) float64 { return float64(g.mailbox) }),
		newDef("group_lag", "Entries not yet delivered to the consumer group, summed over the shards, as last observed: the lag Redis reports or, where Redis cannot tell it (entries were deleted), the whole stream of a shard the group reads from its start (last-delivered-id 0-0 or below the first entry: a group that never read) or on which the consumer group does not exist yet (consumers that never started); shards whose lag is still unknown count 0.", groupLabelNames, func(g *groupState, _ time.Time) float64 { return float64(g.lag) }),
		newDef("group_pending", "Pending entries of the consumer group summed over the shards, as last observed.", groupLabelNames, func(g *groupState, _ time.Time) float64 { return float64(g.pending) }),
		newDef("dead_letter_entries", "The group's entries in the dead-letter stream <stream>-dead-letter (those naming it or no group), as last counted.", groupLabelNames, func(g *groupState, _ time.Time) float64 { return float64(g.deadLetters) }),
	}

	memberDefs = []def[*group.Member]{
		newDef("member_active", "1 while the member is ACTIVE or STARTING.", memberLabelNames, func(m *group.Member, _ time.Time) float64 { return boolValue(m.State.Live()) }),
		newDef("member_heartbeat_age_seconds", "Time since the member's last heartbeat.", memberLabelNames, func(m *group.Member, now time.Time) float64 { return secondsSince(m.LastHeartbeatAt, now) }),
		newDef("member_lease_remaining_seconds", "Time until the member's lease expires (negative once past).", memberLabelNames, func(m *group.Member, now time.Time) float64 { return -secondsSince(m.MemberLeaseExpiresAt, now) }),
		newDef("member_runtime_max_concurrency", "Reported runtime max concurrency.", memberLabelNames, func(m *group.Member, _ time.Time) float64 { return float64(m.RuntimeMaxConcurrency) }),
		newDef("member_active_workers", "Reported active consumer workers.", memberLabelNames, func(m *group.Member, _ time.Time) float64 { return float64(m.ActiveConsumerWorkers) }),
		newDef("member_current_shards", "Shards the member reports owning.", memberLabelNames, func(m *group.Member, _ time.Time) float64 { return float64(len(m.CurrentAssignment)) }),
		newDef("member_revoking_shards", "Shards the member is revoking.", memberLabelNames, func(m *group.Member, _ time.Time) float64 { return float64(len(m.Revoking)) }),
	}

	progressDefs = []def[contract.ShardProgress]{
		newDef("consumer_shard_last_delivered_ms", "Millisecond part of the last delivered id the member reported; -1 if unknown.", progressLabelNames, func(p contract.ShardProgress, _ time.Time) float64 { return idPart(p.LastDeliveredID, 0) }),
		newDef("consumer_shard_last_delivered_seq", "Sequence part of the last delivered id the member reported; -1 if unknown.", progressLabelNames, func(p contract.ShardProgress, _ time.Time) float64 { return idPart(p.LastDeliveredID, 1) }),
		newDef("consumer_shard_last_acked_ms", "Millisecond part of the last acked id the member reported; -1 if unknown.", progressLabelNames, func(p contract.ShardProgress, _ time.Time) float64 { return idPart(p.LastAckedID, 0) }),
		newDef("consumer_shard_last_acked_seq", "Sequence part of the last acked id the member reported; -1 if unknown.", progressLabelNames, func(p contract.ShardProgress, _ time.Time) float64 { return idPart(p.LastAckedID, 1) }),
		newDef("consumer_shard_pending", "Pending entries the member reported.", progressLabelNames, func(p contract.ShardProgress, _ time.Time) float64 { return float64(p.PendingCount) }),
		newDef("consumer_shard_progress_updated_at_seconds", "When the member last reported progress (Unix seconds).", progressLabelNames, func(p contract.ShardProgress, _ time.Time) float64 {
			return float64(p.UpdatedAt) / 1000
		}),
		newDef("consumer_shard_progress_age_seconds", "Time since the member last reported progress.", progressLabelNames, func(p contract.ShardProgress, now time.Time) float64 { return secondsSince(p.UpdatedAt, now) }),
	}

	shardDefs = []def[ShardSample]{
		newDef("shard_stream_length", "Stream length (XLEN).", shardLabelNames, func(s ShardSample, _ time.Time) float64 { return float64(s.StreamLength) }),
		newDef("shard_pending", "Pending entries of the consumer group.", shardLabelNames, func(s ShardSample, _ time.Time) float64 { return float64(s.Pending) }),
		newDef("shard_lag", "Entries not yet delivered to the consumer group, as group_lag counts them; 0 if unknown.", shardLabelNames, func(s ShardSample, _ time.Time) float64 { return orZero(s.Lag) }),
		newDef("shard_memory_usage_bytes", "MEMORY USAGE of the stream key; 0 if unknown.", shardLabelNames, func(s ShardSample, _ time.Time) float64 { return orZero(s.MemoryUsageBytes) }),
		newDef("shard_last_record_ms", "Millisecond part of the last entry id; -1 if unknown.", shardLabelNames, func(s ShardSample, _ time.Time) float64 { return idPart(s.LastRecordID, 0) }),
		newDef("shard_last_record_seq", "Sequence part of the last entry id; -1 if unknown.", shardLabelNames, func(s ShardSample, _ time.Time) float64 { return idPart(s.LastRecordID, 1) }),
		newDef("shard_last_generated_ms", "Millisecond part of the last generated id; -1 if unknown.", shardLabelNames, func(s ShardSample, _ time.Time) float64 { return idPart(s.LastGeneratedID, 0) }),
		newDef("shard_last_generated_seq", "Sequence part of the last generated id; -1 if unknown.", shardLabelNames, func(s ShardSample, _ time.Time) float64 { return idPart(s.LastGeneratedID, 1) }),
		newDef("shard_group_last_delivered_ms", "Millisecond part of the group's last delivered id; -1 if unknown.", shardLabelNames, func(s ShardSample, _ time.Time) float64 { return idPart(s.GroupLastDeliveredID, 0) }),
		newDef("shard_group_last_delivered_seq", "Sequence part of the group's last delivered id; -1 if unknown.", shardLabelNames, func(s ShardSample, _ time.Time) float64 { return idPart(s.GroupLastDeliveredID, 1) }),
		newDef("shard_consumer_last_acked_ms", "Millisecond part of the consumer's last acked id; -1 if unknown.", shardLabelNames, func(s ShardSample, _ time.Time) float64 { return idPart(s.ConsumerLastAckedID, 0) }),
		newDef("shard_consumer_last_acked_seq", "Sequence part of the consumer's last acked id; -1 if unknown.", shardLabelNames, func(s ShardSample, _ time.Time) float64 { return idPart(s.ConsumerLastAckedID, 1) }),
	}
)

// groupCollector exports the per-group, per-member, per-progress and
// per-shard gauges at scrape time: the group gauges from the stats of each
// group's last commit (O(1) per group), the member gauges, when on, from
// the group's committed snapshot (at most WithMemberSeries members per
// group); ages are computed against the clock when scraped, and a member
// or group that is gone is gone from the scrape (no stale series).
type groupCollector struct{ m *Metrics }

// Describe implements prometheus.Collector.
func (c groupCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- membersDesc
	ch <- groupsDesc
	ch <- groupsAggregatedDesc
	describe(ch, epochDefs)
	describe(ch, groupDefs)
	describe(ch, memberDefs)
	describe(ch, progressDefs)
	describe(ch, shardDefs)
	for _, d := range shardRateDefs {
		ch <- d.desc
	}
	for _, d := range healthDescs {
		ch <- d
	}
}

func describe[T any](ch chan<- *prometheus.Desc, defs []def[T]) {
	for _, d := range defs {
		ch <- d.desc
	}
}

// Collect implements prometheus.Collector: the series of the exported
// groups, the added-up ones of the others (when there are any) and the
// group counts. Each group is locked only while its values are copied
// out, never while reading its members or sending.
func (c groupCollector) Collect(ch chan<- prometheus.Metric) {
	now := c.m.now()
	exported, others := c.m.states()
	for i, gs := range exported {
		if i%collectYield == collectYield-1 {
			runtime.Gosched()
		}
		for _, metric := range gs.snapshot().metrics(now, c.m.coordinator, c.m.sampledMembers(gs.key), c.m.shardSeries) {
			ch <- metric
		}
	}
	if len(others) > 0 {
		for _, metric := range aggregate(others).metrics(now, c.m.coordinator, nil, 0) {
			ch <- metric
		}
	}
	ch <- prometheus.MustNewConstMetric(groupsDesc, prometheus.GaugeValue, float64(len(exported)+len(others)), c.m.coordinator)
	ch <- prometheus.MustNewConstMetric(groupsAggregatedDesc, prometheus.GaugeValue, float64(len(others)), c.m.coordinator)
}

// collectYield is how many groups Collect sends between two yields of
// the processor: a scrape of a thousand groups is a few hundred
// milliseconds of CPU, and Collect and the gatherer hand every series to
// each other, so without yielding they keep one P to themselves (the
// readied one inherits the time slice) while heartbeats queue behind them.
const collectYield = 25

// snapshot returns a copy of the values the gauges of gs are computed from.
func (gs *groupState) snapshot() *groupState {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	return &groupState{key: gs.key, stats: gs.stats, mailbox: gs.mailbox, shards: gs.shards, lag: gs.lag, pending: gs.pending, deadLetters: gs.deadLetters,
		health: gs.health, exported: true}
}

// aggregate returns the pseudo-group LabelOther/LabelOther whose gauges
// add up those of states: counts, lag, pending and dead letters summed,
// migration_active 1 and the migration age the oldest while any of them
// migrates (exported false: no epochs).
func aggregate(states []*groupState) *groupState {
	agg := &groupState{key: group.Key{StreamPrefix: LabelOther, ConsumerGroup: LabelOther}}
	for _, gs := range states {
		gs.mu.Lock()
		s := gs.stats
		if s.MigrationSince != 0 && (agg.stats.MigrationSince == 0 || s.MigrationSince < agg.stats.MigrationSince) {
			agg.stats.MigrationSince = s.MigrationSince
		}
		agg.stats.Members += s.Members
		agg.stats.Live += s.Live
		agg.stats.Expired += s.Expired
		agg.stats.RevokePending += s.RevokePending
		agg.stats.Paused += s.Paused
		agg.stats.TargetShards += s.TargetShards
		agg.stats.CurrentShards += s.CurrentShards
		agg.stats.Violations += s.Violations
		agg.stats.DuplicateOwners += s.DuplicateOwners
		agg.mailbox += gs.mailbox
		agg.deadLetters += gs.deadLetters
		agg.lag += gs.lag
		agg.pending += gs.pending
		gs.mu.Unlock()
	}
	return agg
}

// metrics returns every gauge of v (its epochs and status series only
// when exported), of its sampled members and of its first shardSeries
// shards (by index), at now, labelled with coordinator. v is not shared (snapshot, aggregate).
func (v *groupState) metrics(now time.Time, coordinator string, members []*group.Member, shardSeries int) []prometheus.Metric {
	p, g := v.key.StreamPrefix, v.key.ConsumerGroup
	out := make([]prometheus.Metric, 0, 3+len(epochDefs)+len(groupDefs)+len(members)*len(memberDefs)+min(len(v.shards), shardSeries)*len(shardDefs))
	for state, n := range map[string]int{"total": v.stats.Members, "active": v.stats.Live, "expired": v.stats.Expired} {
		out = append(out, prometheus.MustNewConstMetric(membersDesc, prometheus.GaugeValue, float64(n), p, g, state, coordinator))
	}
	if v.exported {
		out = appendGauges(out, epochDefs, v, now, p, g, coordinator)
	}
	out = v.appendHealth(out, coordinator)
	out = appendGauges(out, groupDefs, v, now, p, g, coordinator)
	for _, mem := range members {
		id := mem.MemberID
		out = appendGauges(out, memberDefs, mem, now, p, g, id, coordinator)
		seen := map[int]bool{}
		for _, pr := range slices.Backward(mem.ShardProgress) { // a shard reported twice: the last report wins
			if i := pr.Shard.ShardIndex; !seen[i] {
				seen[i] = true
				out = appendGauges(out, progressDefs, pr, now, p, g, id, strconv.Itoa(i), coordinator)
			}
		}
	}
	for _, s := range v.shards[:min(len(v.shards), shardSeries)] {
		labels := []string{p, g, strconv.Itoa(s.Shard), s.StreamKey, coordinator}
		out = appendGauges(out, shardDefs, s, now, labels...)
		for _, d := range shardRateDefs {
			if v := d.value(s); v != nil {
				out = append(out, prometheus.MustNewConstMetric(d.desc, prometheus.GaugeValue, *v, labels...))
			}
		}
	}
	return out
}

// appendGauges appends the gauges defs of v labelled with labels. The
// defs of a list have the same label names, so their series share one set
// of label pairs (prometheus.NewConstMetric would build and sort one per
// series: a third of what a scrape allocated).
func appendGauges[T any](out []prometheus.Metric, defs []def[T], v T, now time.Time, labels ...string) []prometheus.Metric {
	if len(defs) == 0 {
		return out
	}
	pairs := prometheus.MakeLabelPairs(defs[0].desc, labels)
	for _, d := range defs {
		out = append(out, sharedLabelsGauge{desc: d.desc, labels: pairs, value: d.value(v, now)})
	}
	return out
}

// sharedLabelsGauge is a gauge sample whose label pairs, sorted by name as
// prometheus.MakeLabelPairs returns them, are shared with other series of
// the same scrape; nothing writes to them.
type sharedLabelsGauge struct {
	desc   *prometheus.Desc
	labels []*dto.LabelPair
	value  float64
}

// Desc implements prometheus.Metric.
func (g sharedLabelsGauge) Desc() *prometheus.Desc { return g.desc }

// Write implements prometheus.Metric.
func (g sharedLabelsGauge) Write(out *dto.Metric) error {
	out.Label, out.Gauge = g.labels, &dto.Gauge{Value: &g.value}
	return nil
}

// idPart returns part 0 (milliseconds) or 1 (sequence) of a stream entry
// id "<ms>-<seq>", or -1 when the id is nil or malformed.
func idPart(id *string, part int) float64 {
	if id == nil {
		return -1
	}
	parts := strings.SplitN(*id, "-", 2)
	if len(parts) != 2 {
		return -1
	}
	n, err := strconv.ParseUint(parts[part], 10, 64)
	if err != nil {
		return -1
	}
	return float64(n)
}

// secondsSince returns the seconds from at to now.
func secondsSince(at contract.Instant, now time.Time) float64 {
	return float64(now.UnixMilli()-int64(at)) / 1000
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func orZero(v *int64) float64 {
	if v == nil {
		return 0
	}
	return float64(*v)
}
