package client

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-stream-coordinator/coordinator/streams"
)

// Message is one stream entry handed to a Handler.
type Message struct {
	// Shard is the shard index; Stream its key (P:Shard).
	Shard  int
	Stream string
	// ID is the entry id; Values its fields; Key the value of the
	// consumer's KeyField ("" when the entry has none).
	ID     string
	Values map[string]any
	Key    string
	// Deliveries counts how often the entry was delivered, this time
	// included (1 for a first read; more after a reclaim).
	Deliveries int64
}

// Handler handles one entry. A nil error acknowledges it (XACK); an error
// leaves it pending, to be delivered again after ClaimMinIdle, or moved to
// the dead-letter stream after MaxDeliveries deliveries.
type Handler func(ctx context.Context, msg Message) error

// ConsumerConfig configures a Consumer.
type ConsumerConfig struct {
	// Member configures the group membership. Its Hooks are the
	// consumer's own, except OnFenced, which is kept.
	Member MemberConfig
	// Redis is where the shard streams live (required).
	Redis redis.UniversalClient
	// Handler handles entries (required).
	Handler Handler
	// Workers is how many handlers run at once (default 4). Entries with
	// the same KeyField value in one shard go to the same worker, in
	// stream order.
	Workers int
	// KeyField is the field whose value keeps entries in order (default
	// "key"); entries without it are spread by id.
	KeyField string
	// BatchSize is the XREADGROUP / XAUTOCLAIM COUNT (default 100).
	BatchSize int64
	// Block is the XREADGROUP BLOCK time (default 500 ms): a revoked shard
	// stops fetching within it.
	Block time.Duration
	// ClaimMinIdle is the minimum idle time of pending entries the consumer
	// claims (XAUTOCLAIM): at takeover the entries the previous owner left
	// unacknowledged, later failed entries (default 5 s).
	ClaimMinIdle time.Duration
	// ClaimInterval is how often an owned shard is scanned for idle pending
	// entries (default ClaimMinIdle).
	ClaimInterval time.Duration
	// MaxDeliveries is how many deliveries a failing entry gets before it
	// moves to the dead-letter stream (default 5).
	MaxDeliveries int64
	// DeadLetterStream receives failed entries (default "<StreamPrefix>-dead-letter").
	DeadLetterStream string
	// OnShardStart and OnShardStop, when set, are called when the consumer
	// starts reading a shard and when it has stopped and handled
	// everything it read from it.
	OnShardStart, OnShardStop func(shard int)
}

// Consumer reads the shards its Member owns with XREADGROUP (consumer name
// = member id), hands entries to a pool of workers and acknowledges them
// once the Handler succeeded. On taking over a shard it first claims the
// entries the previous owner left pending (XAUTOCLAIM with ClaimMinIdle),
// counting deliveries; an entry delivered MaxDeliveries times without
// success is copied to the dead-letter stream (streams.DeadLetterFields:
// where it came from, the delivery count, the handler's last error and the
// consumer group) and acknowledged.
//
// A handler call starts only while the member owns the shard and its local
// lease is not about to lapse (Member.MayRead). When a shard is revoked
// the consumer stops fetching it and drops the entries it fetched but did
// not hand to a handler yet (they stay pending; the next owner claims
// them); the shard is reported DRAINING until the running handler calls
// return. Handler contexts are cancelled when the local lease is about to
// lapse, or when a leave outlasts LeaveTimeout.
type Consumer struct {
	cfg     ConsumerConfig
	member  *Member
	jobs    []chan job
	busy    atomic.Int64
	mu      sync.Mutex // guards readers, handlerCtx and cancelHandlers
	readers map[int]*shardReader
	runCtx  context.Context
	// handlerCtx is the context of handler calls; cancelHandlers ends it
	// (and a new one is made for later calls).
	handlerCtx     context.Context
	cancelHandlers context.CancelFunc
}

type job struct {
	r   *shardReader
	msg Message
}

// NewConsumer checks cfg and fills in its defaults.
func NewConsumer(cfg ConsumerConfig) (*Consumer, error) {
	if cfg.Redis == nil || cfg.Handler == nil {
		return nil, errors.New("client: ConsumerConfig needs Redis and Handler")
	}
	cfg.Workers = max(cfg.Workers, 0)
	if cfg.Workers == 0 {
		cfg.Workers = 4
	}
	cfg.KeyField = cmp.Or(cfg.KeyField, "key")
	cfg.BatchSize = cmp.Or(cfg.BatchSize, 100)
	cfg.Block = cmp.Or(cfg.Block, 500*time.Millisecond)
	cfg.ClaimMinIdle = cmp.Or(cfg.ClaimMinIdle, 5*time.Second)
	cfg.ClaimInterval = cmp.Or(cfg.ClaimInterval, cfg.ClaimMinIdle)
	cfg.MaxDeliveries = cmp.Or(cfg.MaxDeliveries, 5)
	cfg.DeadLetterStream = cmp.Or(cfg.DeadLetterStream, cfg.Member.StreamPrefix+"-dead-letter")
	c := &Consumer{cfg: cfg, readers: map[int]*shardReader{}}
	mc := cfg.Member
	mc.MaxConcurrency = cmp.Or(mc.MaxConcurrency, cfg.Workers)
	mc.Hooks = Hooks{
		OnAssigned:           c.assigned,
		OnRevoked:            c.revoked,
		InFlight:             c.inFlight,
		OnReleased:           c.released,
		CancelInFlight:       c.cancelInFlight,
		OnFenced:             cfg.Member.Hooks.OnFenced,
		OnLeft:               cfg.Member.Hooks.OnLeft,
		Progress:             c.progress,
		AvailableConcurrency: func() int { return max(0, cfg.Workers-int(c.busy.Load())) },
	}
	m, err := NewMember(mc)
	if err != nil {
		return nil, err
	}
	c.member = m
	return c, nil
}

// Consume runs a Consumer with the default settings (4 workers, KeyField
// "key", member id from host and process) of group g of stream prefix p
// until ctx is cancelled, creating the group when the coordinator does not
// know it; it returns what Consumer.Run returns.
func Consume(ctx context.Context, coord *Coordinator, rdb redis.UniversalClient, p, g string, h Handler) error {
	c, err := NewConsumer(ConsumerConfig{Member: MemberConfig{Coordinator: coord, StreamPrefix: p, Group: g, CreateGroup: true}, Redis: rdb, Handler: h})
	if err != nil {
		return err
	}
	return c.Run(ctx)
}

// Member is the consumer's group membership.
func (c *Consumer) Member() *Member { return c.member }

// Run consumes until ctx is cancelled, then stops reading, handles what it
// already read, leaves the group and returns (see Member.Run).
func (c *Consumer) Run(ctx context.Context) error {
	c.runCtx = context.WithoutCancel(ctx)
	c.handlerCtx, c.cancelHandlers = context.WithCancel(c.runCtx)
	var wg sync.WaitGroup
	c.jobs = make([]chan job, c.cfg.Workers)
	for i := range c.jobs {
		c.jobs[i] = make(chan job, c.cfg.BatchSize)
		wg.Add(1)
		go func(ch chan job) {
			defer wg.Done()
			for j := range ch {
				c.handle(j)
			}
		}(c.jobs[i])
	}
	err := c.member.Run(ctx)
	c.mu.Lock()
	for _, r := range c.readers { // only after a failed drain
		r.stop()
	}
	c.mu.Unlock()
	for _, ch := range c.jobs {
		close(ch)
	}
	wg.Wait()
	c.cancelHandlers()
	return err
}

// cancelInFlight cancels the contexts of the running handler calls.
func (c *Consumer) cancelInFlight() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cancelHandlers()
	c.handlerCtx, c.cancelHandlers = context.WithCancel(c.runCtx)
}

func (c *Consumer) handlerContext() context.Context {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.handlerCtx
}

func (c *Consumer) assigned(shard int) {
	r := &shardReader{c: c, shard: shard, key: streams.StreamKey(c.cfg.Member.StreamPrefix, shard),
		done: make(chan struct{}), active: map[string]bool{}}
	var ctx context.Context
	ctx, r.cancel = context.WithCancel(c.runCtx)
	c.mu.Lock()
	c.readers[shard] = r
	c.mu.Unlock()
	if f := c.cfg.OnShardStart; f != nil {
		f(shard)
	}
	go r.run(ctx)
}

func (c *Consumer) reader(shard int) *shardReader {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.readers[shard]
}

func (c *Consumer) revoked(shard int) {
	if r := c.reader(shard); r != nil {
		r.stop()
	}
}

func (c *Consumer) inFlight(shard int) int {
	if r := c.reader(shard); r != nil {
		return int(r.running.Load())
	}
	return 0
}

func (c *Consumer) released(shard int) {
	c.mu.Lock()
	delete(c.readers, shard)
	c.mu.Unlock()
	if f := c.cfg.OnShardStop; f != nil {
		f(shard)
	}
}

func (c *Consumer) progress(shard int) (ShardProgress, bool) {
	r := c.reader(shard)
	if r == nil {
		return ShardProgress{}, false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return ShardProgress{LastDeliveredID: r.lastDelivered, LastAckedID: r.lastAcked, PendingCount: int64(len(r.active))}, true
}

// handle runs the handler on one entry, if the shard may still be read,
// and acknowledges or dead-letters it.
func (c *Consumer) handle(j job) {
	r, msg := j.r, j.msg
	if !r.begin() {
		r.finish(msg.ID, false, false)
		return
	}
	c.busy.Add(1)
	defer c.busy.Add(-1)
	err := c.cfg.Handler(c.handlerContext(), msg)
	ctx, cancel := context.WithTimeout(c.runCtx, 10*time.Second)
	defer cancel()
	switch {
	case err == nil:
		err = c.cfg.Redis.XAck(ctx, msg.Stream, c.cfg.Member.Group, msg.ID).Err()
	case msg.Deliveries >= c.cfg.MaxDeliveries:
		values := streams.DeadLetterFields(msg.Stream, msg.ID, c.cfg.Member.Group, msg.Deliveries, err.Error(), msg.Values)
		if err = c.cfg.Redis.XAdd(ctx, &redis.XAddArgs{Stream: c.cfg.DeadLetterStream, Values: values}).Err(); err == nil {
			err = c.cfg.Redis.XAck(ctx, msg.Stream, c.cfg.Member.Group, msg.ID).Err()
		}
	default:
		c.member.log.Debug("handler failed; the entry stays pending", "stream", msg.Stream, "id", msg.ID, "deliveries", msg.Deliveries, "err", err)
		err = nil
	}
	if err != nil {
		c.member.log.Warn("acknowledge failed", "stream", msg.Stream, "id", msg.ID, "err", err)
	}
	r.finish(msg.ID, true, err == nil)
}

// shardReader fetches one owned shard.
type shardReader struct {
	c       *Consumer
	shard   int
	key     string
	cancel  context.CancelFunc
	done    chan struct{}
	running atomic.Int64 // handler calls under way

	mu                       sync.Mutex
	stopped                  bool            // revoked: no handler call starts
	active                   map[string]bool // ids handed to workers, not finished
	lastDelivered, lastAcked string
}

// stop ends fetching; queued entries are dropped by the workers.
func (r *shardReader) stop() {
	r.mu.Lock()
	r.stopped = true
	r.mu.Unlock()
	r.cancel()
	<-r.done
}

// begin reports whether a handler call for the shard may start, and counts
// it as running if so. While the member still owns the shard but its lease
// is about to lapse it waits (for a renewal or the revocation).
func (r *shardReader) begin() bool {
	for {
		r.mu.Lock()
		if r.stopped {
			r.mu.Unlock()
			return false
		}
		if r.c.member.MayRead(r.shard) {
			r.running.Add(1)
			r.mu.Unlock()
			return true
		}
		r.mu.Unlock()
		time.Sleep(10 * time.Millisecond)
	}
}

func (r *shardReader) run(ctx context.Context) {
	defer close(r.done)
	cfg := &r.c.cfg
	group, consumer := cfg.Member.Group, r.c.member.ID()
	var lastClaim time.Time
	for ctx.Err() == nil {
		if time.Since(lastClaim) >= cfg.ClaimInterval {
			if err := r.reclaim(ctx); err != nil {
				r.pause(ctx, err)
				continue
			}
			lastClaim = time.Now()
		}
		res, err := cfg.Redis.XReadGroup(ctx, &redis.XReadGroupArgs{
			Group: group, Consumer: consumer, Streams: []string{r.key, ">"}, Count: cfg.BatchSize, Block: cfg.Block,
		}).Result()
		if errors.Is(err, redis.Nil) {
			continue
		}
		if err != nil {
			r.pause(ctx, err)
			continue
		}
		for _, s := range res {
			for _, m := range s.Messages {
				r.dispatch(ctx, m, 1)
			}
		}
	}
}

// pause handles a Redis error: a missing group is created (from the
// start of the stream), anything else waits a little.
func (r *shardReader) pause(ctx context.Context, err error) {
	if ctx.Err() != nil {
		return
	}
	if strings.HasPrefix(err.Error(), "NOGROUP") {
		err = r.c.cfg.Redis.XGroupCreateMkStream(ctx, r.key, r.c.cfg.Member.Group, "0").Err()
		if err == nil || strings.HasPrefix(err.Error(), "BUSYGROUP") {
			return
		}
	}
	r.c.member.log.Warn("redis", "stream", r.key, "err", err)
	select {
	case <-ctx.Done():
	case <-time.After(200 * time.Millisecond):
	}
}

// reclaim claims the shard's pending entries idle for ClaimMinIdle (the
// previous owner's, or failed ones) and dispatches them with their
// delivery counts.
func (r *shardReader) reclaim(ctx context.Context) error {
	cfg := &r.c.cfg
	group, consumer := cfg.Member.Group, r.c.member.ID()
	start := "0-0"
	for ctx.Err() == nil {
		// Entries handed to workers before the claim are skipped even when
		// they finish meanwhile: the claim may have returned them just
		// before their acknowledgement.
		busy := r.activeIDs()
		msgs, next, err := cfg.Redis.XAutoClaim(ctx, &redis.XAutoClaimArgs{
			Stream: r.key, Group: group, Consumer: consumer, MinIdle: cfg.ClaimMinIdle, Start: start, Count: cfg.BatchSize,
		}).Result()
		if err != nil {
			return err
		}
		if len(msgs) > 0 {
			pending, err := cfg.Redis.XPendingExt(ctx, &redis.XPendingExtArgs{
				Stream: r.key, Group: group, Consumer: consumer, Start: msgs[0].ID, End: msgs[len(msgs)-1].ID, Count: int64(len(msgs)) * 2,
			}).Result()
			if err != nil {
				return err
			}
			counts := make(map[string]int64, len(pending))
			for _, p := range pending {
				counts[p.ID] = p.RetryCount
			}
			for _, m := range msgs {
				if m.Values == nil || busy[m.ID] || r.isActive(m.ID) {
					continue
				}
				r.dispatch(ctx, m, max(counts[m.ID], 1))
			}
		}
		if next == "0-0" || next == "" {
			return nil
		}
		start = next
	}
	return ctx.Err()
}

func (r *shardReader) activeIDs() map[string]bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return maps.Clone(r.active)
}

func (r *shardReader) isActive(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.active[id]
}

// dispatch hands an entry to the worker of its key.
func (r *shardReader) dispatch(ctx context.Context, m redis.XMessage, deliveries int64) {
	r.mu.Lock()
	r.active[m.ID] = true
	if deliveries == 1 { // a ">" read: ids only grow
		r.lastDelivered = m.ID
	}
	r.mu.Unlock()
	key, _ := m.Values[r.c.cfg.KeyField].(string)
	w := ShardFor(strconv.Itoa(r.shard)+"/"+cmp.Or(key, m.ID), len(r.c.jobs))
	select {
	case r.c.jobs[w] <- job{r: r, msg: Message{Shard: r.shard, Stream: r.key, ID: m.ID, Values: m.Values, Key: key, Deliveries: deliveries}}:
	case <-ctx.Done(): // revoked: the entry stays pending
		r.finish(m.ID, false, false)
	}
}

// finish ends an entry handed to a worker: handled says a handler call ran
// (begin counted it), acked that the entry was acknowledged.
func (r *shardReader) finish(id string, handled, acked bool) {
	r.mu.Lock()
	delete(r.active, id)
	if acked { // the latest acknowledged (workers finish out of order)
		r.lastAcked = id
	}
	r.mu.Unlock()
	if handled {
		r.running.Add(-1)
	}
}

// String describes the consumer.
func (c *Consumer) String() string {
	return fmt.Sprintf("consumer %s of %s/%s", c.member.ID(), c.cfg.Member.StreamPrefix, c.cfg.Member.Group)
}
