package client

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis/go-redis/v9"
)

// Message is one stream entry handed to a Handler.
type Message struct {
	// Shard is the shard index; Stream its key (P:Shard).
	Shard  int
	Stream string
	// ID is the entry id, unique within Stream only (the shards' streams
	// number their entries independently: entries of two shards may have
	// the same id); Values its fields; Key the value of the consumer's
	// KeyField ("" when the entry has none).
	ID     string
	Values map[string]any
	Key    string
	// Deliveries counts the handler runs of the entry, this one included
	// (1 for a first run). It is the entry's delivery counter in Redis,
	// which the consumer keeps equal to the handler runs (see Consumer);
	// only the entries a consumer fetched and never ran before it crashed
	// count one run more than they got (and an Ordered consumer's runs
	// again in place count in Deliveries, not in Redis).
	Deliveries int64
	// Fence is the shard and the fencing token of the grant under which
	// the entry was read, which sinks check (see Fence).
	Fence Fence
}

// Handler handles one entry. A nil error acknowledges it (XACK, batched);
// an error leaves it pending, to be run again once it has been idle for
// ClaimMinIdle since its delivery (an Ordered consumer runs it again in
// place), or moved to the dead-letter stream after its MaxDeliveries-th
// run. An error wrapping ErrFenced stops the shard (see ErrFenced). ctx is
// cancelled when the coordinator revokes the entry's shard, when the local
// lease is about to lapse, and when a leave outlasts LeaveTimeout.
type Handler func(ctx context.Context, msg Message) error

// Start positions of a consumer group the consumer creates
// (ConsumerConfig.StartAt); an entry id is the third choice.
const (
	// StartEarliest: every entry the stream holds.
	StartEarliest = "0"
	// StartLatest: only the entries added after the group was created.
	StartLatest = "$"
)

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
	// BatchSize is the XREADGROUP and XPENDING COUNT (default 100).
	BatchSize int64
	// Block is the XREADGROUP BLOCK time (default 500 ms): a revoked shard
	// stops fetching within it.
	Block time.Duration
	// ClaimMinIdle is the minimum idle time of pending entries the consumer
	// claims (XCLAIM): at takeover the entries the previous owner left
	// unacknowledged, later failed entries (default 5 s).
	ClaimMinIdle time.Duration
	// ClaimInterval is how often an owned shard is scanned for idle pending
	// entries (default ClaimMinIdle).
	ClaimInterval time.Duration
	// MaxDeliveries is how many handler runs a failing entry gets before it
	// moves to the dead-letter stream (default 5).
	MaxDeliveries int64
	// DeadLetterStream receives failed entries (default "<StreamPrefix>-dead-letter").
	DeadLetterStream string
	// AckBatch is the most acknowledgements of one shard that wait to be
	// sent (default BatchSize): they go out in one XACK as soon as that
	// many wait, and a handler that would add one more first waits for
	// them to be sent.
	AckBatch int
	// AckInterval is the longest an acknowledgement waits for a full
	// batch (default 20 ms).
	AckInterval time.Duration
	// StartAt is where the consumer group starts on a shard stream when
	// the consumer creates it (XGROUP CREATE … MKSTREAM, when a shard it
	// reads has no group): StartEarliest (the default, as a group created
	// at "0": every entry the stream holds), StartLatest (the entries
	// added after the group was created, shard by shard) or an entry id
	// (the entries after it). A group that exists keeps its position;
	// with streams.provisioning-enabled the coordinator creates the
	// groups, at the end of each stream.
	StartAt string
	// Ordered runs the entries of a shard one at a time, in stream order,
	// on one worker (the shards spread over the workers), and a failed
	// entry is run again in place, RetryBackoff after its failure, before
	// any later entry of its shard, until it succeeds or its
	// MaxDeliveries-th run moves it to the dead-letter stream. On taking
	// over a shard the consumer first claims every pending entry up to the
	// group's last-delivered id, whatever its idle time, and handles them
	// before reading new ones; Message.Fence.From is set. The sinks
	// (client/sink/...) need it: they keep one applied position per shard.
	Ordered bool
	// RetryBackoff is the pause before an Ordered consumer runs a failed
	// entry again (default 100 ms).
	RetryBackoff time.Duration
	// HoldFailedKeys keeps each key's order on a shard through failures
	// (not with Ordered, which holds the whole shard): once an entry of a
	// key fails, the later entries of that key on the shard wait behind
	// it, in stream order, while the other keys flow on; the failed entry
	// runs again once idle for ClaimMinIdle, as any failed entry, and when
	// it succeeds or is dead-lettered the entries that waited run, in
	// order. Held entries stay pending in Redis. At most HeldMax of a
	// shard wait in memory (default 1000); the ones beyond wait in the
	// Redis list "{<stream>}:held:<group>:<member id>" (read back when
	// their key is released, emptied when the shard is revoked). Entries
	// without a KeyField value are never held. Held lists the held keys.
	HoldFailedKeys bool
	HeldMax        int
	// OnShardStart and OnShardStop, when set, are called when the consumer
	// starts reading a shard and when it has stopped, handled everything
	// it read from it and sent its acknowledgements.
	OnShardStart, OnShardStop func(shard int)
}

// entryID matches an entry id given as StartAt: milliseconds, optionally
// followed by -sequence.
var entryID = regexp.MustCompile(`^[0-9]+(-[0-9]+)?$`)

// redisTimeout bounds one Redis call of the consumer outside the reads.
const redisTimeout = 10 * time.Second

// Consumer reads the shards its Member owns with XREADGROUP (consumer name
// = member id), hands entries to a pool of workers and acknowledges them
// once the Handler succeeded. On taking over a shard, and every
// ClaimInterval, it claims the pending entries idle for ClaimMinIdle (those
// the previous owner left, and failed ones); an entry whose MaxDeliveries-th
// handler run fails is copied to the dead-letter stream
// (contract.DeadLetterFields: where it came from, the delivery count, the
// handler's last error and the consumer group) and acknowledged.
//
// Acknowledgements are batched: a shard's go out in one XACK, in the
// pipeline of the shard's next read while it has a backlog (the read
// before filled a batch), else in one pipeline with the other shards'
// when AckBatch of a shard wait or AckInterval after the first; and
// always before a revoked shard is reported REVOKED.
// A crash therefore delivers again, per shard, the entries whose handler
// was running or queued and at most AckBatch handled ones whose
// acknowledgement was not sent (2 × AckBatch while Redis refuses
// acknowledgements, which are then retried).
//
// Delivery counts are handler runs. Redis adds one to an entry's counter
// when XREADGROUP or XCLAIM delivers it, so the consumer delivers an
// entry only to run it: it lists idle entries with XPENDING, which counts
// nothing, and claims only those it does not hold (an entry waiting in a
// worker's queue or for its acknowledgement is idle in Redis too); and
// when a revoked shard drops entries it fetched but did not run, it sets
// their counters back (XCLAIM … RETRYCOUNT JUSTID, which also makes them
// idle for ClaimMinIdle, so that the next owner claims them at once).
//
// A handler call starts only while the member owns the shard and its local
// lease is not about to lapse (Member.MayRead). When a shard is revoked
// the consumer stops fetching it and drops the entries it fetched but did
// not hand to a handler yet (they stay pending; the next owner claims
// them); the shard is reported DRAINING until the running handler calls
// have returned and its acknowledgements and restored counters are sent.
// What a revoked shard cannot send is abandoned (it is delivered again)
// once the local lease is in its last tenth, once handler calls are
// cancelled, or when Run ends. Handler contexts are cancelled when the
// local lease is about to lapse, or when a leave outlasts LeaveTimeout.
type Consumer struct {
	cfg     ConsumerConfig
	member  *Member
	workers []chan *batch
	busy    atomic.Int64 // workers handling a batch
	mu      sync.Mutex   // guards readers
	readers map[int]*shardReader
	runCtx  context.Context
	stopCtx context.Context // Run's context: cancelled when the consumer stops on its own
	scope   atomic.Pointer[handlerScope]
	ackWake chan struct{} // wakes the acknowledgement loop
	closing atomic.Bool   // Run is ending: what fails to be sent is abandoned
	// onReclaim, when set (by tests), is called after every scan of a
	// shard for idle pending entries.
	onReclaim func(shard int)
}

// handlerScope is the context of handler calls, and of the drains of the
// shards revoked under it; cancelInFlight ends it and starts another.
type handlerScope struct {
	ctx    context.Context
	cancel context.CancelFunc
}

// NewConsumer checks cfg and fills in its defaults.
func NewConsumer(cfg ConsumerConfig) (*Consumer, error) {
	if cfg.Redis == nil || cfg.Handler == nil {
		return nil, errors.New("client: ConsumerConfig needs Redis and Handler")
	}
	cfg.StartAt = cmp.Or(cfg.StartAt, StartEarliest)
	if cfg.StartAt != StartLatest && !entryID.MatchString(cfg.StartAt) {
		return nil, fmt.Errorf("client: StartAt %q: want StartEarliest, StartLatest or an entry id", cfg.StartAt)
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
	cfg.AckBatch = cmp.Or(max(cfg.AckBatch, 0), int(min(cfg.BatchSize, 1<<20)))
	cfg.AckInterval = cmp.Or(cfg.AckInterval, 20*time.Millisecond)
	cfg.RetryBackoff = cmp.Or(cfg.RetryBackoff, 100*time.Millisecond)
	cfg.HeldMax = cmp.Or(max(cfg.HeldMax, 0), 1000)
	c := &Consumer{cfg: cfg, readers: map[int]*shardReader{}, ackWake: make(chan struct{}, 1)}
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
// already read, sends its acknowledgements, leaves the group and returns
// (see Member.Run).
func (c *Consumer) Run(ctx context.Context) error {
	c.runCtx, c.stopCtx = context.WithoutCancel(ctx), ctx
	c.newScope()
	var wg sync.WaitGroup
	c.workers = make([]chan *batch, c.cfg.Workers)
	for i := range c.workers {
		ch := make(chan *batch, 1)
		c.workers[i] = ch
		wg.Go(func() { c.work(ch) })
	}
	stopAcks, acksDone := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(acksDone)
		c.ackLoop(stopAcks)
	}()
	err := c.member.Run(ctx)
	c.closing.Store(true)
	c.mu.Lock()
	left := slices.Collect(maps.Values(c.readers)) // only after a failed drain
	c.mu.Unlock()
	for _, r := range left {
		r.stop()
	}
	for _, ch := range c.workers {
		close(ch)
	}
	wg.Wait()
	close(stopAcks)
	<-acksDone
	c.scope.Load().cancel()
	return err
}

// newScope starts a handler scope and returns the one it replaces (nil at
// the start).
func (c *Consumer) newScope() *handlerScope {
	s := &handlerScope{}
	s.ctx, s.cancel = context.WithCancel(c.runCtx)
	return c.scope.Swap(s)
}

// cancelInFlight cancels the contexts of the running handler calls, and
// the drains that began under them.
func (c *Consumer) cancelInFlight() {
	c.newScope().cancel()
	c.wake()
}

func (c *Consumer) assigned(shard int) {
	r := &shardReader{c: c, shard: shard, key: contract.StreamKey(c.cfg.Member.StreamPrefix, shard),
		token: c.member.token(shard), done: make(chan struct{})}
	r.room.L = &r.mu
	r.revoked, r.revoke = context.WithCancel(context.Background())
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

// readerList returns the shards' readers, stopped ones included.
func (c *Consumer) readerList() []*shardReader {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Collect(maps.Values(c.readers))
}

// revoked stops the shard's reader; when the coordinator revoked the
// shard (the consumer is not stopping on its own), the contexts of its
// running handler calls are cancelled too.
func (c *Consumer) revoked(shard int) {
	if r := c.reader(shard); r != nil {
		if c.stopCtx.Err() == nil {
			r.revoke()
		}
		r.stop()
	}
}

// inFlight is what a revoked shard still has under way: its running
// handler calls, or 1 while its acknowledgements or restored delivery
// counts are not sent.
func (c *Consumer) inFlight(shard int) int {
	if r := c.reader(shard); r != nil {
		return r.inFlight()
	}
	return 0
}

func (c *Consumer) released(shard int) {
	c.mu.Lock()
	r := c.readers[shard]
	delete(c.readers, shard)
	c.mu.Unlock()
	if r != nil {
		r.revoke() // nothing runs any more: frees the handler context
	}
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
	return ShardProgress{LastDeliveredID: r.lastDelivered, LastAckedID: r.lastAcked, PendingCount: int64(r.heldCount())}, true
}

// String describes the consumer.
func (c *Consumer) String() string {
	return fmt.Sprintf("consumer %s of %s/%s", c.member.ID(), c.cfg.Member.StreamPrefix, c.cfg.Member.Group)
}
