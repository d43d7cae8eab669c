package streams

import (
	"context"
	"fmt"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis/go-redis/v9"
)

// Observer reads the state of sharded streams without changing it: offsets
// and lag, drain checks and the message explorer. It is safe for concurrent
// use.
type Observer struct {
	client redis.UniversalClient
	// limits bound what one page of the message explorer may read (zero:
	// MaxReadEntries, MaxReadBytes); pool is where the pages take their
	// share of the bytes all requests hold at once (nil: the process's).
	limits readLimits
	pool   *readPool
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
	// Missing: XINFO STREAM found no stream (or it was not read because
	// the stream is known not to exist, ShardRead.Skip).
	Missing bool
	// From XINFO STREAM; 0 and nil when it fails (e.g. no such key).
	// EntriesAdded counts every entry ever added to the stream (Redis 7's
	// entries-added; 0 on older servers): the consumption status samples
	// read it (monitoring.Statuses); the offset cache does not keep it.
	StreamLength    int64
	EntriesAdded    int64
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

// observeBatch is how many shards one pipeline observes: the replies of a
// batch are decoded before the next is sent, so a read of many shards
// holds at most one batch of commands in memory and never queues more
// than 3 × observeBatch commands ahead of other clients.
const observeBatch = 1000

// Offsets observes shards 0..shardCount-1 of prefix for consumer group
// group: XINFO STREAM, XINFO GROUPS and MEMORY USAGE of every shard, in
// pipelines of observeBatch shards, plus one CLUSTER SLOTS when client is a
// cluster client. Error replies become zeros and nils; a transport failure
// is returned.
func (o *Observer) Offsets(ctx context.Context, prefix, group string, shardCount int) ([]ShardOffset, error) {
	shards := ShardsOf(prefix, shardCount)
	reads := make([]ShardRead, len(shards))
	for i, s := range shards {
		reads[i] = ShardRead{Shard: s, Group: group}
	}
	offsets, _, err := o.ObserveShards(ctx, reads)
	return offsets, err
}

// ShardRead is one shard stream to observe and the consumer group whose
// position on it is read. Skip: the stream is known not to exist, so
// nothing is sent for it.
type ShardRead struct {
	Shard
	Group string
	Skip  bool
}

// Cost is what a read sent to Redis: commands and round trips
// (pipelines count as one).
type Cost struct {
	Commands, RoundTrips int
}

// Add returns the sum of c and d.
func (c Cost) Add(d Cost) Cost {
	return Cost{Commands: c.Commands + d.Commands, RoundTrips: c.RoundTrips + d.RoundTrips}
}

// ObserveShards observes reads, of any prefixes and groups, as Offsets
// does (the offsets in the order of reads), in pipelines of observeBatch
// shards that are not skipped. A skipped shard's offset is that of a
// stream that does not exist (Missing, zeros and nils) with its key, slot
// and node; so is a shard whose XINFO STREAM found no key. It returns
// what it sent.
func (o *Observer) ObserveShards(ctx context.Context, reads []ShardRead) ([]ShardOffset, Cost, error) {
	nodes, cost, err := o.nodeLocator(ctx)
	if err != nil {
		return nil, cost, err
	}
	offsets := make([]ShardOffset, len(reads))
	var sent []int // positions in reads of the shards to send
	flush := func() error {
		if len(sent) == 0 {
			return nil
		}
		cost = cost.Add(Cost{Commands: 3 * len(sent), RoundTrips: 1})
		err := o.observe(ctx, reads, sent, offsets)
		sent = sent[:0]
		return err
	}
	for i, r := range reads {
		offsets[i] = ShardOffset{Shard: r.Index, StreamKey: r.Key, RedisSlot: contract.Slot(r.Key), Missing: true}
		nodes(&offsets[i])
		if r.Skip {
			continue
		}
		if sent = append(sent, i); len(sent) == observeBatch {
			if err := flush(); err != nil {
				return nil, cost, err
			}
		}
	}
	if err := flush(); err != nil {
		return nil, cost, err
	}
	return offsets, cost, nil
}

// observe reads the shards of reads at positions at, in one pipeline,
// into the same positions of offsets (prepared by ObserveShards).
func (o *Observer) observe(ctx context.Context, reads []ShardRead, at []int, offsets []ShardOffset) error {
	pipe := o.client.Pipeline()
	streams := make([]*redis.XInfoStreamCmd, len(at))
	groups := make([]*redis.XInfoGroupsCmd, len(at))
	memory := make([]*redis.IntCmd, len(at))
	for j, i := range at {
		streams[j] = pipe.XInfoStream(ctx, reads[i].Key)
		groups[j] = pipe.XInfoGroups(ctx, reads[i].Key)
		memory[j] = pipe.MemoryUsage(ctx, reads[i].Key)
	}
	_, _ = pipe.Exec(ctx)

	for j, i := range at {
		for _, cmd := range []redis.Cmder{streams[j], groups[j], memory[j]} {
			if err := replyOrNil(cmd.Err()); err != nil {
				return fmt.Errorf("streams: observing %s: %w", reads[i].Key, err)
			}
		}
		offset := &offsets[i]
		if streams[j].Err() == nil {
			info := streams[j].Val()
			offset.Missing = false
			offset.StreamLength = info.Length
			offset.EntriesAdded = info.EntriesAdded
			offset.FirstRecordID = nonEmpty(info.FirstEntry.ID)
			offset.LastRecordID = nonEmpty(info.LastEntry.ID)
			offset.LastGeneratedID = nonEmpty(info.LastGeneratedID)
		}
		for _, g := range groups[j].Val() {
			if g.Name == reads[i].Group {
				offset.GroupLastDeliveredID = nonEmpty(g.LastDeliveredID)
				offset.GroupPending = &g.Pending
				offset.Lag = knownLag(g)
			}
		}
		if bytes, err := memory[j].Result(); err == nil {
			offset.MemoryUsageBytes = &bytes
		}
	}
	return nil
}

// existsBatch is how many keys one pipeline of Existing checks.
const existsBatch = 1000

// Existing reports which of keys exist, by position: one EXISTS per key,
// in pipelines of existsBatch. It returns what it sent.
func (o *Observer) Existing(ctx context.Context, keys []string) ([]bool, Cost, error) {
	found := make([]bool, len(keys))
	var cost Cost
	for start := 0; start < len(keys); start += existsBatch {
		batch := keys[start:min(start+existsBatch, len(keys))]
		pipe := o.client.Pipeline()
		cmds := make([]*redis.IntCmd, len(batch))
		for j, k := range batch {
			cmds[j] = pipe.Exists(ctx, k)
		}
		cost = cost.Add(Cost{Commands: len(batch), RoundTrips: 1})
		if _, err := pipe.Exec(ctx); err != nil {
			return nil, cost, fmt.Errorf("streams: checking which streams exist: %w", err)
		}
		for j, c := range cmds {
			found[start+j] = c.Val() > 0
		}
	}
	return found, cost, nil
}

// nodeLocator returns a function that fills the node fields of an offset
// from its RedisSlot: from CLUSTER SLOTS for a cluster client, the client's
// address for a standalone one (nothing for other clients).
func (o *Observer) nodeLocator(ctx context.Context) (func(*ShardOffset), Cost, error) {
	switch c := o.client.(type) {
	case *redis.ClusterClient:
		// CLUSTER SLOTS as the contract names it (docs/protocol.md §2.6);
		// CLUSTER SHARDS would need Redis 7.
		//lint:ignore SA1019 the contract's source, and it works before Redis 7
		ranges, err := c.ClusterSlots(ctx).Result()
		cost := Cost{Commands: 1, RoundTrips: 1}
		if err != nil {
			return nil, cost, fmt.Errorf("streams: reading cluster slots: %w", err)
		}
		return func(offset *ShardOffset) { locateSlot(ranges, offset) }, cost, nil
	case *redis.Client:
		addr := c.Options().Addr
		return func(offset *ShardOffset) { offset.RedisNodeEndpoint = &addr }, Cost{}, nil
	}
	return func(*ShardOffset) {}, Cost{}, nil
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
