package monitoring

import (
	"context"
	"slices"
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/streams"
)

// Observation is one reading of a group's shards from Redis with the rates
// since the previous reading of each shard.
type Observation struct {
	Shards []ObservedShard
}

// ObservedShard is one shard of an Observation.
type ObservedShard struct {
	streams.ShardOffset
	Produced, Consumed *float64
}

// Reader observes groups' shards in Redis and tracks their rates. It is
// safe for concurrent use. The embedded Observer serves the message
// explorer.
type Reader struct {
	*streams.Observer
	rates *streams.RateTracker
	now   func() time.Time
	// cache holds the observations behind CachedGroupOffsets, packed.
	cache *streams.Cache[group.Key, packed]
}

// NewReader returns a Reader over observer whose rates and offset cache
// ages are measured with now (nil: time.Now). CachedGroupOffsets reuses an
// observation for cacheTTL (≤ 0: never).
func NewReader(observer *streams.Observer, now func() time.Time, cacheTTL time.Duration) *Reader {
	if now == nil {
		now = time.Now
	}
	return &Reader{Observer: observer, rates: streams.NewRateTracker(), now: now,
		cache: streams.NewCache[group.Key, packed](cacheTTL, now)}
}

// Observe reads shards 0..shardCount-1 of key from Redis and feeds every
// shard's length and lag to the rate tracker. Every call is a rate sample:
// the rates compare it with the previous call for the same shard, whichever
// endpoint made it. A shard's lag is the one Redis reports or, when Redis
// does not report one (entries were deleted after the group's position,
// or the consumer group does not exist on the shard yet), its backlog
// where that is known (see backlog).
func (r *Reader) Observe(ctx context.Context, key group.Key, shardCount int) (Observation, error) {
	offsets, err := r.Observer.Offsets(ctx, key.StreamPrefix, key.ConsumerGroup, shardCount)
	if err != nil {
		return Observation{}, err
	}
	return r.sample(key, offsets, r.now()), nil
}

// sample turns key's offsets, read at at, into an Observation: the lag
// falls back to the backlog, and every shard is a rate sample.
func (r *Reader) sample(key group.Key, offsets []streams.ShardOffset, at time.Time) Observation {
	o := Observation{Shards: make([]ObservedShard, len(offsets))}
	for i, s := range offsets {
		if s.Lag == nil {
			s.Lag = backlog(s)
		}
		rk := streams.RateKey{Prefix: key.StreamPrefix, Group: key.ConsumerGroup, Shard: s.Shard}
		produced, consumed := r.rates.Observe(rk, at, s.StreamLength, s.Lag)
		o.Shards[i] = ObservedShard{ShardOffset: s, Produced: produced, Consumed: consumed}
	}
	return o
}

// backlog is the lag of a shard whose lag Redis does not report: the
// stream's length when every entry is unread, because the group reads it
// from its start (readsFromStart) or does not exist on the stream yet
// (neverStarted), otherwise unknown (nil).
func backlog(s streams.ShardOffset) *int64 {
	if !readsFromStart(s) && !neverStarted(s) {
		return nil
	}
	n := s.StreamLength
	return &n
}

// neverStarted reports whether s's stream exists and its consumer group
// does not (provisioning off and no consumer started yet): its consumers
// will read the whole stream, as the Go client creates the group at the
// stream's beginning.
func neverStarted(s streams.ShardOffset) bool {
	return !s.Missing && s.GroupLastDeliveredID == nil
}

// readsFromStart reports whether s's consumer group exists and has every
// entry of the stream still to read: its last-delivered-id is below the
// stream's first entry (a group that never read, at 0-0, or one whose
// position was trimmed away), or the stream is empty.
func readsFromStart(s streams.ShardOffset) bool {
	return s.GroupLastDeliveredID != nil &&
		(s.FirstRecordID == nil || parsePacked(*s.GroupLastDeliveredID).compare(parsePacked(*s.FirstRecordID)) < 0)
}

// GroupOffsets observes g's shards and projects them onto g (see Project),
// with the age of each shard's oldest unread entry (unreadAges).
func (r *Reader) GroupOffsets(ctx context.Context, g *group.Group) (contract.Offsets, error) {
	o, err := r.Observe(ctx, g.Meta.Key(), g.ShardCount)
	if err != nil {
		return contract.Offsets{}, err
	}
	ages, err := r.unreadAges(ctx, o)
	if err != nil {
		return contract.Offsets{}, err
	}
	out := Project(g, o)
	for i, age := range ages {
		out.Shards[i].OldestUnreadAgeSeconds = age
		if age != nil && (out.OldestUnreadAgeSeconds == nil || *age > *out.OldestUnreadAgeSeconds) {
			out.OldestUnreadAgeSeconds = age
		}
	}
	return out, nil
}

// unreadAges returns, by position in o, each shard's
// OldestUnreadAgeSeconds at r.now(): 0 when its lag is 0; from its first
// entry when the group reads from the start (readsFromStart) or has not
// started on the stream (neverStarted); else from the entry after the
// last-delivered-id, read with FirstAfter for those shards only (0 when
// there is none); nil where the stream does not exist.
func (r *Reader) unreadAges(ctx context.Context, o Observation) ([]*float64, error) {
	now := float64(r.now().UnixMilli())
	age := func(ms float64) *float64 {
		a := max(now-ms, 0) / 1000
		return &a
	}
	ages := make([]*float64, len(o.Shards))
	var read []streams.Shard
	var at []int
	after := map[int]string{}
	for i, s := range o.Shards {
		switch {
		case s.Lag != nil && *s.Lag == 0:
			ages[i] = new(float64)
		case s.FirstRecordID != nil && (readsFromStart(s.ShardOffset) || neverStarted(s.ShardOffset)):
			ages[i] = age(float64(parsePacked(*s.FirstRecordID).ms))
		case s.GroupLastDeliveredID == nil:
		default:
			read, at = append(read, streams.Shard{Index: s.Shard, Key: s.StreamKey}), append(at, i)
			after[s.Shard] = *s.GroupLastDeliveredID
		}
	}
	if len(read) == 0 {
		return ages, nil
	}
	first, err := r.FirstAfter(ctx, read, after)
	if err != nil {
		return nil, err
	}
	for j, rec := range first {
		if rec == nil {
			ages[at[j]] = new(float64)
		} else {
			ages[at[j]] = age(float64(rec.TimestampMs))
		}
	}
	return ages, nil
}

// Project merges an observation of g's shards with g: owners are g's live
// members whose current assignment holds the shard; consumer ids and the
// pending fallback come from the newest progress any member reported for
// the shard. The observation is of g's shards (Observe with g.ShardCount).
func Project(g *group.Group, o Observation) contract.Offsets {
	key := g.Meta.Key()
	out := contract.Offsets{StreamPrefix: key.StreamPrefix, ConsumerGroup: key.ConsumerGroup, Shards: []contract.ShardOffset{}}
	owners, progress := owners(g), newestProgress(g)
	var raw []streams.ShardOffset
	var produced, consumed []*float64
	for _, s := range o.Shards {
		row := shardRow(key, s, owners[s.Shard], progress[s.Shard])
		out.Shards = append(out.Shards, row)
		out.TotalPendingCount += row.PendingCount
		raw = append(raw, s.ShardOffset)
		produced, consumed = append(produced, s.Produced), append(consumed, s.Consumed)
	}
	totals := streams.Totals(raw)
	out.TotalStreamLength, out.TotalLag = totals.StreamLength, totals.Lag
	out.TotalMemoryUsageBytes, out.MemoryUsageKnown = totals.MemoryUsageBytes, totals.MemoryUsageKnown
	out.ProducedPerSecond, out.ConsumedPerSecond = streams.SumKnown(produced...), streams.SumKnown(consumed...)
	return out
}

// shardRow builds one StreamShardOffset; p is nil when no member reported
// progress for the shard.
func shardRow(key group.Key, s ObservedShard, owners []string, p *contract.ShardProgress) contract.ShardOffset {
	row := contract.ShardOffset{
		StreamPrefix:  key.StreamPrefix,
		ConsumerGroup: key.ConsumerGroup,
		Shard:         contract.Shard{ShardIndex: s.Shard},
		StreamPosition: contract.StreamPosition{
			StreamKey:            s.StreamKey,
			RedisSlot:            s.RedisSlot,
			RedisNodeEndpoint:    s.RedisNodeEndpoint,
			RedisNodeID:          s.RedisNodeID,
			RedisSlotRangeStart:  s.RedisSlotRangeStart,
			RedisSlotRangeEnd:    s.RedisSlotRangeEnd,
			StreamLength:         s.StreamLength,
			FirstRecordID:        s.FirstRecordID,
			LastRecordID:         s.LastRecordID,
			LastGeneratedID:      s.LastGeneratedID,
			GroupLastDeliveredID: s.GroupLastDeliveredID,
			Lag:                  s.Lag,
			MemoryUsageBytes:     s.MemoryUsageBytes,
		},
		OwnerMemberIDs:    owners,
		ProducedPerSecond: s.Produced,
		ConsumedPerSecond: s.Consumed,
	}
	if row.OwnerMemberIDs == nil {
		row.OwnerMemberIDs = []string{}
	}
	if p != nil {
		row.ConsumerLastDeliveredID, row.ConsumerLastAckedID = p.LastDeliveredID, p.LastAckedID
	}
	row.PendingCount = pendingOf(s, p)
	return row
}

// pendingOf is a shard's pending count: the consumer group's, else the
// one in p (the newest member report, nil when none), else 0.
func pendingOf(s ObservedShard, p *contract.ShardProgress) int64 {
	switch {
	case s.GroupPending != nil:
		return *s.GroupPending
	case p != nil:
		return p.PendingCount
	}
	return 0
}

// ShardGauges is what the metrics' shard gauges take from an observation
// projected onto its group (Project), without building every shard's row.
type ShardGauges struct {
	// Lag sums the known lags of every shard; Pending the pending counts
	// (pendingOf) of every shard.
	Lag, Pending int64
	// Rows are the rows of the shards whose index is below the limit
	// given to Gauges, as Project builds them (without owners).
	Rows []contract.ShardOffset
}

// Gauges returns the ShardGauges of o projected onto g, with the rows of
// the shards whose index is below rows. Member progress is read only when
// a shard needs it (a row, or a pending count the consumer group does not
// report).
func Gauges(g *group.Group, o Observation, rows int) ShardGauges {
	key := g.Meta.Key()
	var out ShardGauges
	var progress map[int]*contract.ShardProgress
	for _, s := range o.Shards {
		if s.Lag != nil {
			out.Lag += *s.Lag
		}
		row := s.Shard < rows
		if progress == nil && (row || s.GroupPending == nil) {
			progress = newestProgress(g)
		}
		if row {
			out.Rows = append(out.Rows, shardRow(key, s, nil, progress[s.Shard]))
		}
		out.Pending += pendingOf(s, progress[s.Shard])
	}
	return out
}

// owners maps each shard to the live members whose current assignment
// holds it, sorted.
func owners(g *group.Group) map[int][]string {
	out := map[int][]string{}
	for _, id := range g.LiveMemberIDs() {
		for _, s := range g.Members[id].CurrentAssignment {
			out[s] = append(out[s], id)
		}
	}
	return out
}

// newestProgress maps each shard to the progress report with the latest
// UpdatedAt among all member records (ties: the lowest member id).
func newestProgress(g *group.Group) map[int]*contract.ShardProgress {
	out := map[int]*contract.ShardProgress{}
	ids := make([]string, 0, len(g.Members))
	for id := range g.Members {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		for i := range g.Members[id].ShardProgress {
			p := &g.Members[id].ShardProgress[i]
			if cur, ok := out[p.Shard.ShardIndex]; !ok || p.UpdatedAt > cur.UpdatedAt {
				out[p.Shard.ShardIndex] = p
			}
		}
	}
	return out
}
