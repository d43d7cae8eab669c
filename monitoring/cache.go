package monitoring

import (
	"context"
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/streams"
)

// CachedGroupOffsets is GroupOffsets through the offset cache of the
// Grafana rows (docs/protocol.md §2.7): one observation per group key, reused while it is
// younger than the cache TTL and discarded when g's shard count differs
// from the one it was read with. An expired observation is still answered
// while a single background read refreshes it (streams.Cache), so only a
// group's first read, or its first after a shard count change, waits for
// Redis. The observation is projected onto g at every call: owners and
// member-reported progress are always g's. Rates are those computed when
// the observation was read; every read, cached or not, is a rate sample
// shared with GroupOffsets.
func (r *Reader) CachedGroupOffsets(ctx context.Context, g *group.Group) (contract.Offsets, error) {
	key := g.Meta.Key()
	p, err := r.cache.Get(ctx, key, g.ShardCount, func(ctx context.Context) (packed, error) {
		o, err := r.Observe(ctx, key, g.ShardCount)
		return pack(key.StreamPrefix, o), err
	})
	if err != nil {
		return contract.Offsets{}, err
	}
	return Project(g, p.unpack()), nil
}

// RefreshAll observes the shards of groups now (a rate sample, as every
// read is) and returns the observations by position in groups, and what
// it sent. The shards are read together in pipelines that span groups
// (streams.Observer.ObserveShards), except those whose stream key missing
// reports as known not to exist, observed as missing without a command.
// For each group whose offsets were read through CachedGroupOffsets
// before, it also stores the observation in the offset cache as a fresh
// one, so that those reads answer from it until it expires. A background
// refresher calls it once per cache TTL: the groups someone reads find
// fresh observations instead of each starting a read of its own, and the
// cache holds only those groups (the others' observations feed gauges and
// are dropped).
func (r *Reader) RefreshAll(ctx context.Context, groups []*group.Group, missing func(streamKey string) bool) ([]Observation, streams.Cost, error) {
	var reads []streams.ShardRead
	for _, g := range groups {
		for _, s := range streams.ShardsOf(g.Meta.StreamPrefix, g.ShardCount) {
			reads = append(reads, streams.ShardRead{Shard: s, Group: g.Meta.ConsumerGroup, Skip: missing(s.Key)})
		}
	}
	offsets, cost, err := r.Observer.ObserveShards(ctx, reads)
	if err != nil {
		return nil, cost, err
	}
	at := r.now()
	out := make([]Observation, len(groups))
	for i, g := range groups {
		key := g.Meta.Key()
		o := r.sample(key, offsets[:g.ShardCount:g.ShardCount], at)
		offsets = offsets[g.ShardCount:]
		r.cache.Update(key, g.ShardCount, func() packed { return pack(key.StreamPrefix, o) })
		out[i] = o
	}
	return out, cost, nil
}

// Forget drops the rate samples and the cached observations of the groups
// not observed since before (streams.RateTracker.Forget,
// streams.Cache.Forget): a deleted group's, or one this coordinator no
// longer reads, are not kept for good.
func (r *Reader) Forget(before time.Time) {
	r.rates.Forget(before)
	r.cache.Forget(before)
}

// Unobserved is an observation of shards 0..shardCount-1 of prefix whose
// Redis state is unknown (no Redis, or a failed read): each shard has its
// key and slot, zero length, and nil ids, lag, pending and memory, so that
// Project falls back to what members reported.
func Unobserved(prefix string, shardCount int) Observation {
	shards := streams.ShardsOf(prefix, shardCount)
	o := Observation{Shards: make([]ObservedShard, len(shards))}
	for i, s := range shards {
		o.Shards[i].ShardOffset = streams.ShardOffset{Shard: s.Index, StreamKey: s.Key, RedisSlot: contract.Slot(s.Key)}
	}
	return o
}
