package streams

import (
	"context"
	"fmt"
	"slices"

	"github.com/redis/go-redis/v9"
)

// Observer reads the state of sharded streams without changing it: offsets
// and lag, drain checks and the message explorer. It is safe for concurrent
// use.
type Observer struct {
	client redis.UniversalClient
}

// NewObserver returns an Observer over client (standalone or cluster).
func NewObserver(client redis.UniversalClient) *Observer {
	return &Observer{client: client}
}

// ShardOffset is the Redis-observed part of one StreamShardOffset of docs/protocol.md §2.6
// /offsets. The caller adds the group's names, owners and member-reported
// values (consumer ids, the pending fallback). Pointers are null on the wire.
type ShardOffset struct {
	Shard     int
	StreamKey string
	RedisSlot int
	// RedisNodeEndpoint ("host:port") and RedisNodeID name the master serving
	// RedisSlot, whose slot range is [RedisSlotRangeStart, RedisSlotRangeEnd]
	// (from CLUSTER SLOTS). On a standalone server the endpoint is the
	// client's address and the other three are nil.
	RedisNodeEndpoint   *string
	RedisNodeID         *string
	RedisSlotRangeStart *int
	RedisSlotRangeEnd   *int
	// From XINFO STREAM; 0 and nil when it fails (e.g. no such key).
	StreamLength    int64
	FirstRecordID   *string
	LastRecordID    *string
	LastGeneratedID *string
	// From the XINFO GROUPS entry of the consumer group; nil when the key or
	// the group does not exist. Lag is also nil when Redis cannot compute it.
	GroupLastDeliveredID *string
	GroupPending         *int64
	Lag                  *int64
	// From MEMORY USAGE; nil when unknown.
	MemoryUsageBytes *int64
}

// OffsetTotals sums ShardOffsets for the /offsets and Grafana group rows.
// Pending counts are summed by the caller, after the member-reported
// fallback.
type OffsetTotals struct {
	StreamLength int64
	// Lag is nil when any shard's lag is unknown.
	Lag *int64
	// MemoryUsageBytes sums the known values; MemoryUsageKnown reports
	// whether every shard's value was known.
	MemoryUsageBytes int64
	MemoryUsageKnown bool
}

// Totals sums shards.
func Totals(shards []ShardOffset) OffsetTotals {
	var totals OffsetTotals
	var lag int64
	lagKnown, memoryKnown := true, true
	for _, s := range shards {
		totals.StreamLength += s.StreamLength
		if s.Lag == nil {
			lagKnown = false
		} else {
			lag += *s.Lag
		}
		if s.MemoryUsageBytes == nil {
			memoryKnown = false
		} else {
			totals.MemoryUsageBytes += *s.MemoryUsageBytes
		}
	}
	if lagKnown {
		totals.Lag = &lag
	}
	totals.MemoryUsageKnown = memoryKnown
	return totals
}

// observeBatch is how many shards one pipeline of Offsets observes: the
// replies of a batch are decoded before the next is sent, so a group of
// many shards holds at most one batch of commands in memory and never
// queues more than 3 × observeBatch commands ahead of other clients.
const observeBatch = 1000

// Offsets observes shards 0..shardCount-1 of prefix for consumer group
// group: XINFO STREAM, XINFO GROUPS and MEMORY USAGE of every shard, in
// pipelines of observeBatch shards, plus one CLUSTER SLOTS when client is a
// cluster client. Error replies become zeros and nils; a transport failure
// is returned.
func (o *Observer) Offsets(ctx context.Context, prefix, group string, shardCount int) ([]ShardOffset, error) {
	nodes, err := o.nodeLocator(ctx)
	if err != nil {
		return nil, err
	}
	shards := ShardsOf(prefix, shardCount)
	offsets := make([]ShardOffset, 0, len(shards))
	for batch := range slices.Chunk(shards, observeBatch) {
		if offsets, err = o.observe(ctx, batch, group, nodes, offsets); err != nil {
			return nil, err
		}
	}
	return offsets, nil
}

// observe appends the offsets of shards to offsets, read in one pipeline.
func (o *Observer) observe(ctx context.Context, shards []Shard, group string, nodes func(*ShardOffset), offsets []ShardOffset) ([]ShardOffset, error) {
	pipe := o.client.Pipeline()
	streams := make([]*redis.XInfoStreamCmd, len(shards))
	groups := make([]*redis.XInfoGroupsCmd, len(shards))
	memory := make([]*redis.IntCmd, len(shards))
	for j, shard := range shards {
		streams[j] = pipe.XInfoStream(ctx, shard.Key)
		groups[j] = pipe.XInfoGroups(ctx, shard.Key)
		memory[j] = pipe.MemoryUsage(ctx, shard.Key)
	}
	_, _ = pipe.Exec(ctx)

	for j, shard := range shards {
		for _, cmd := range []redis.Cmder{streams[j], groups[j], memory[j]} {
			if err := replyOrNil(cmd.Err()); err != nil {
				return nil, fmt.Errorf("streams: observing %s: %w", shard.Key, err)
			}
		}
		offset := ShardOffset{Shard: shard.Index, StreamKey: shard.Key, RedisSlot: Slot(shard.Key)}
		nodes(&offset)
		if streams[j].Err() == nil {
			info := streams[j].Val()
			offset.StreamLength = info.Length
			offset.FirstRecordID = nonEmpty(info.FirstEntry.ID)
			offset.LastRecordID = nonEmpty(info.LastEntry.ID)
			offset.LastGeneratedID = nonEmpty(info.LastGeneratedID)
		}
		for _, g := range groups[j].Val() {
			if g.Name == group {
				offset.GroupLastDeliveredID = nonEmpty(g.LastDeliveredID)
				offset.GroupPending = &g.Pending
				offset.Lag = knownLag(g)
			}
		}
		if bytes, err := memory[j].Result(); err == nil {
			offset.MemoryUsageBytes = &bytes
		}
		offsets = append(offsets, offset)
	}
	return offsets, nil
}

// nodeLocator returns a function that fills the node fields of an offset
// from its RedisSlot: from CLUSTER SLOTS for a cluster client, the client's
// address for a standalone one (nothing for other clients).
func (o *Observer) nodeLocator(ctx context.Context) (func(*ShardOffset), error) {
	switch c := o.client.(type) {
	case *redis.ClusterClient:
		// CLUSTER SLOTS as the contract names it (docs/protocol.md §2.6);
		// CLUSTER SHARDS would need Redis 7.
		//lint:ignore SA1019 the contract's source, and it works before Redis 7
		ranges, err := c.ClusterSlots(ctx).Result()
		if err != nil {
			return nil, fmt.Errorf("streams: reading cluster slots: %w", err)
		}
		return func(offset *ShardOffset) { locateSlot(ranges, offset) }, nil
	case *redis.Client:
		addr := c.Options().Addr
		return func(offset *ShardOffset) { offset.RedisNodeEndpoint = &addr }, nil
	}
	return func(*ShardOffset) {}, nil
}

// locateSlot fills offset's node fields from the slot range containing its
// RedisSlot and that range's master (the first node); it leaves them nil
// when no range covers the slot.
func locateSlot(ranges []redis.ClusterSlot, offset *ShardOffset) {
	for _, r := range ranges {
		if offset.RedisSlot < r.Start || offset.RedisSlot > r.End || len(r.Nodes) == 0 {
			continue
		}
		master := r.Nodes[0]
		offset.RedisNodeEndpoint = nonEmpty(master.Addr)
		offset.RedisNodeID = nonEmpty(master.ID)
		offset.RedisSlotRangeStart, offset.RedisSlotRangeEnd = &r.Start, &r.End
		return
	}
}

// knownLag is the group's lag, nil when Redis reports it as unknown (which
// go-redis decodes as -1).
func knownLag(g redis.XInfoGroup) *int64 {
	if g.Lag < 0 {
		return nil
	}
	return &g.Lag
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
