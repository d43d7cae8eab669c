package client

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis/go-redis/v9"
	"github.com/twmb/murmur3"
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
	// Deliveries counts the handler runs of the entry, this one included
	// (1 for a first run). It is the entry's delivery counter in Redis,
	// which the consumer keeps equal to the handler runs (see Consumer);
	// only the entries a consumer fetched and never ran before it crashed
	// count one run more than they got.
	Deliveries int64
}

// Handler handles one entry. A nil error acknowledges it (XACK, batched);
// an error leaves it pending, to be run again once it has been idle for
// ClaimMinIdle since its delivery, or moved to the dead-letter stream
// after its MaxDeliveries-th run.
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

// batch is entries of one shard for one worker, in stream order.
type batch struct {
	r    *shardReader
	msgs []Message
	// next is the index of the first entry no handler call began for;
	// running says that the entry before it is being handled. Both are
	// guarded by r.mu.
	next    int
	running bool
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
	c.runCtx = context.WithoutCancel(ctx)
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
		done: make(chan struct{})}
	r.room.L = &r.mu
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

func (c *Consumer) revoked(shard int) {
	if r := c.reader(shard); r != nil {
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
	return ShardProgress{LastDeliveredID: r.lastDelivered, LastAckedID: r.lastAcked, PendingCount: int64(r.heldCount())}, true
}

// work runs the handler on the batches of one worker; a batch ends early
// when its shard is revoked.
func (c *Consumer) work(ch <-chan *batch) {
	for b := range ch {
		c.busy.Add(1)
		for _, msg := range b.msgs {
			if !b.r.begin(b) {
				break
			}
			err := c.cfg.Handler(c.scope.Load().ctx, msg)
			if err != nil {
				err = c.failed(msg, err)
			}
			b.r.finish(b, msg.ID, err == nil)
		}
		c.busy.Add(-1)
	}
}

// failed handles a failed handler run: after the MaxDeliveries-th the
// entry is copied to the dead-letter stream and failed returns nil (the
// entry is then acknowledged); otherwise it stays pending.
func (c *Consumer) failed(msg Message, err error) error {
	if msg.Deliveries < c.cfg.MaxDeliveries {
		c.member.log.Debug("handler failed; the entry stays pending", "stream", msg.Stream, "id", msg.ID, "deliveries", msg.Deliveries, "err", err)
		return err
	}
	ctx, cancel := context.WithTimeout(c.runCtx, redisTimeout)
	defer cancel()
	values := contract.DeadLetterFields(msg.Stream, msg.ID, c.cfg.Member.Group, msg.Deliveries, err.Error(), msg.Values)
	if err := c.cfg.Redis.XAdd(ctx, &redis.XAddArgs{Stream: c.cfg.DeadLetterStream, Values: values}).Err(); err != nil {
		c.member.log.Warn("dead-lettering failed; the entry stays pending", "stream", msg.Stream, "id", msg.ID, "err", err)
		return err
	}
	return nil
}

// workerFor is the worker of the entries of shard with key s: a hash of s
// seeded with the shard, so that the keys of one shard spread over the
// workers although the producer routed them all to that shard.
func (c *Consumer) workerFor(shard int, s string) int {
	n := len(c.workers)
	if n == 1 {
		return 0
	}
	// #nosec G115 -- a shard index and the worker count are small non-negative ints
	return int(murmur3.SeedStringSum32(uint32(shard), s) % uint32(n))
}

// wake tells the acknowledgement loop that something waits.
func (c *Consumer) wake() {
	select {
	case c.ackWake <- struct{}{}:
	default:
	}
}

// ackLoop sends the acknowledgements: when a shard has AckBatch waiting or
// a revoked shard waits for them, else AckInterval after the first; a
// failed send is retried after a pause. When stop closes it sends once
// more what waits and returns.
func (c *Consumer) ackLoop(stop <-chan struct{}) {
	timer := time.NewTimer(c.cfg.AckInterval)
	timer.Stop()
	for {
		select {
		case <-c.ackWake:
		case <-stop:
			c.flush()
			return
		}
		timer.Reset(c.cfg.AckInterval)
		c.awaitDue(timer.C, stop)
		timer.Stop()
		if !c.flush() {
			timer.Reset(ackRetryPause)
			select {
			case <-timer.C:
			case <-stop:
			}
		}
		if c.ackWaiting() {
			c.wake()
		}
	}
}

// ackRetryPause is the pause after a failed send of acknowledgements.
const ackRetryPause = 200 * time.Millisecond

// awaitDue returns once the acknowledgements are due: a shard has a full
// batch or is revoked, tick fires, or stop closes.
func (c *Consumer) awaitDue(tick <-chan time.Time, stop <-chan struct{}) {
	for !c.ackDue() {
		select {
		case <-c.ackWake:
		case <-tick:
			return
		case <-stop:
			return
		}
	}
}

func (c *Consumer) ackDue() bool {
	return slices.ContainsFunc(c.readerList(), func(r *shardReader) bool { return r.due() })
}

func (c *Consumer) ackWaiting() bool {
	return slices.ContainsFunc(c.readerList(), func(r *shardReader) bool { return r.waiting() })
}

// flush sends, in one pipeline, the acknowledgements every shard has
// waiting and the restored delivery counts of revoked shards, and reports
// whether the pipeline went through.
func (c *Consumer) flush() bool {
	live := c.member.leaseLive()
	ctx, cancel := context.WithTimeout(c.runCtx, redisTimeout)
	defer cancel()
	pipe := c.cfg.Redis.Pipeline()
	var sends []*ackSend
	for _, r := range c.readerList() {
		if s := r.take(ctx, pipe, live); s != nil {
			sends = append(sends, s)
		}
	}
	if len(sends) == 0 {
		return true
	}
	_, err := pipe.Exec(ctx)
	for _, s := range sends {
		s.r.settle(s, live)
	}
	if err != nil {
		c.member.log.Warn("sending acknowledgements failed; retrying", "err", err)
	}
	return err == nil
}

// shardReader fetches one owned shard and keeps the state of the entries
// it delivered.
type shardReader struct {
	c      *Consumer
	shard  int
	key    string
	cancel context.CancelFunc
	done   chan struct{}

	mu       sync.Mutex
	room     sync.Cond // signalled when acks were taken or dropped
	stopped  bool      // revoked: no handler call starts
	drainCtx context.Context
	// The entries the shard holds: delivered, and neither failed nor
	// acknowledged in Redis. inflight are the batches handed to workers
	// and not finished; acks the acknowledged entries to be sent; sends
	// what is being sent (by the acknowledgement loop, or by the reader
	// in the pipeline of its next read).
	inflight []*batch
	running  int // handler calls under way
	acks     []string
	sends    []*ackSend
	// unrun are the entries a revocation dropped before any handler ran
	// them, whose delivery counters are to be set back.
	unrun                    []Message
	lastDelivered, lastAcked string
	// Scratch of dispatch (the reader's goroutine only).
	keys     []string
	workerOf []int
}

// ackSend is what one flush sends for a shard.
type ackSend struct {
	r        *shardReader
	acks     []string
	ack      *redis.IntCmd
	unrun    []Message
	restores []*redis.StringSliceCmd
}

// stop ends fetching; the entries delivered and not handed to a handler
// are dropped, to have their delivery counters set back.
func (r *shardReader) stop() {
	r.mu.Lock()
	if !r.stopped {
		r.stopped, r.drainCtx = true, r.c.scope.Load().ctx
	}
	r.mu.Unlock()
	r.cancel()
	<-r.done
	r.mu.Lock()
	for _, b := range r.inflight {
		r.unrun = append(r.unrun, b.msgs[b.next:]...)
		b.next = len(b.msgs)
	}
	r.inflight = slices.DeleteFunc(r.inflight, func(b *batch) bool { return !b.running })
	r.mu.Unlock()
	r.c.wake()
}

// heldCount is how many entries the shard holds.
func (r *shardReader) heldCount() int {
	n := len(r.acks)
	for _, s := range r.sends {
		n += len(s.acks)
	}
	for _, b := range r.inflight {
		n += len(b.msgs) - b.next
		if b.running {
			n++
		}
	}
	return n
}

// inFlight is the handler calls under way, or 1 while acknowledgements
// or restores of the shard wait or are being sent.
func (r *shardReader) inFlight() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.running == 0 && (len(r.acks) > 0 || len(r.unrun) > 0 || len(r.sends) > 0) {
		return 1
	}
	return r.running
}

// due reports whether the shard's acknowledgements are to be sent now.
func (r *shardReader) due() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.acks) >= r.c.cfg.AckBatch || (r.stopped && (len(r.acks) > 0 || len(r.unrun) > 0))
}

// waiting reports whether anything of the shard waits to be sent.
func (r *shardReader) waiting() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.acks) > 0 || (r.stopped && len(r.unrun) > 0)
}

// begin reports whether a handler call for the next entry of b may start,
// and counts it as running if so. While the member still owns the shard
// but its lease is about to lapse it waits (for a renewal or the
// revocation).
func (r *shardReader) begin(b *batch) bool {
	for {
		r.mu.Lock()
		if r.stopped {
			r.mu.Unlock()
			return false
		}
		if r.c.member.MayRead(r.shard) {
			b.next++
			b.running = true
			r.running++
			r.mu.Unlock()
			return true
		}
		r.mu.Unlock()
		time.Sleep(10 * time.Millisecond)
	}
}

// finish ends the handler call of entry id of b: an acknowledged entry
// joins the shard's batch of acknowledgements (waiting while AckBatch wait
// already), a failed one stays pending in Redis and is no longer held.
func (r *shardReader) finish(b *batch, id string, acked bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.running--
	b.running = false
	if b.next == len(b.msgs) {
		r.inflight = slices.DeleteFunc(r.inflight, func(x *batch) bool { return x == b })
	}
	if !acked {
		return
	}
	for len(r.acks) >= r.c.cfg.AckBatch {
		r.room.Wait()
	}
	r.acks = append(r.acks, id)
	if n := len(r.acks); n == 1 || n == r.c.cfg.AckBatch || r.stopped {
		r.c.wake()
	}
}

// take queues on pipe what the shard has to send: its acknowledgements
// and, for a revoked shard while the lease is live, the XCLAIM commands
// that set back the delivery counters of the entries it dropped (grouped
// by count). Without a live lease those are abandoned: the shard may have
// a new owner, whose claims they would undo.
func (r *shardReader) take(ctx context.Context, pipe redis.Pipeliner, live bool) *ackSend {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := &ackSend{r: r, acks: r.acks}
	r.acks = nil
	r.room.Broadcast()
	if r.stopped && len(r.unrun) > 0 {
		if live {
			s.unrun = r.unrun
		} else {
			r.abandon("delivery counters not set back", len(r.unrun))
		}
		r.unrun = nil
	}
	if len(s.acks) == 0 && len(s.unrun) == 0 {
		return nil
	}
	r.sends = append(r.sends, s)
	group := r.c.cfg.Member.Group
	if len(s.acks) > 0 {
		s.ack = pipe.XAck(ctx, r.key, group, s.acks...)
	}
	byCount := map[int64][]string{}
	for _, m := range s.unrun {
		byCount[m.Deliveries-1] = append(byCount[m.Deliveries-1], m.ID)
	}
	for n, ids := range byCount {
		args := []any{"xclaim", r.key, group, r.c.member.ID(), 0}
		for _, id := range ids {
			args = append(args, id)
		}
		args = append(args, "idle", r.c.cfg.ClaimMinIdle.Milliseconds(), "retrycount", n, "justid")
		cmd := redis.NewStringSliceCmd(ctx, args...)
		_ = pipe.Process(ctx, cmd)
		s.restores = append(s.restores, cmd)
	}
	return s
}

// settle records the outcome of a send: what went through is no longer
// held; what failed waits to be sent again, unless the shard is revoked
// and may no longer wait (the lease is not live, its drain was cancelled,
// or Run is ending): then it is abandoned, and delivered again later.
func (r *shardReader) settle(s *ackSend, live bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sends = slices.DeleteFunc(r.sends, func(x *ackSend) bool { return x == s })
	defer r.room.Broadcast()
	giveUp := r.stopped && (!live || r.drainCtx.Err() != nil || r.c.closing.Load())
	switch {
	case s.ack == nil:
	case s.ack.Err() == nil:
		r.lastAcked = s.acks[len(s.acks)-1]
	case giveUp:
		r.abandon("acknowledgements not sent", len(s.acks))
	default:
		r.acks = append(s.acks, r.acks...)
	}
	for _, cmd := range s.restores {
		if cmd.Err() != nil {
			if giveUp {
				r.abandon("delivery counters not set back", len(s.unrun))
			} else {
				r.unrun = append(s.unrun, r.unrun...)
			}
			return
		}
	}
}

// abandon logs that what was not sent for n entries of the revoked shard
// is given up.
func (r *shardReader) abandon(what string, n int) {
	r.c.member.log.Warn("revoked shard: "+what+"; the entries will be delivered again", "shard", r.shard, "entries", n)
}

func (r *shardReader) run(ctx context.Context) {
	defer close(r.done)
	cfg := &r.c.cfg
	args := &redis.XReadGroupArgs{
		Group: cfg.Member.Group, Consumer: r.c.member.ID(), Streams: []string{r.key, ">"}, Count: cfg.BatchSize, Block: cfg.Block,
	}
	var lastClaim time.Time
	full := false // the last read filled a batch: the next one will not block
	for ctx.Err() == nil {
		if time.Since(lastClaim) >= cfg.ClaimInterval {
			if err := r.reclaim(ctx); err != nil {
				r.pause(ctx, err)
				continue
			}
			lastClaim = time.Now()
		}
		res, err := r.read(ctx, args, full)
		full = false
		if errors.Is(err, redis.Nil) {
			continue
		}
		if err != nil {
			r.pause(ctx, err)
			continue
		}
		for _, s := range res {
			full = int64(len(s.Messages)) == cfg.BatchSize
			r.dispatch(ctx, s.Messages, nil)
		}
	}
}

// read sends XREADGROUP; with ackFirst, the shard's waiting
// acknowledgements go in the same pipeline before it, as a loop that
// reads and acknowledges in turn does (one round trip for both while the
// shard has a backlog; a read that may block is sent alone, so that no
// acknowledgement waits for its answer).
func (r *shardReader) read(ctx context.Context, args *redis.XReadGroupArgs, ackFirst bool) ([]redis.XStream, error) {
	if !ackFirst {
		return r.c.cfg.Redis.XReadGroup(ctx, args).Result()
	}
	pipe := r.c.cfg.Redis.Pipeline()
	s := r.take(ctx, pipe, true)
	cmd := pipe.XReadGroup(ctx, args)
	_, _ = pipe.Exec(ctx) // each command's error is its own
	if s != nil {
		r.settle(s, true)
	}
	return cmd.Result()
}

// pause handles a Redis error: a missing group is created (at StartAt),
// anything else waits a little.
func (r *shardReader) pause(ctx context.Context, err error) {
	if ctx.Err() != nil {
		return
	}
	if strings.HasPrefix(err.Error(), "NOGROUP") {
		err = r.c.cfg.Redis.XGroupCreateMkStream(ctx, r.key, r.c.cfg.Member.Group, r.c.cfg.StartAt).Err()
		if err == nil {
			r.c.member.log.Info("created the consumer group on the shard stream", "stream", r.key, "startAt", r.c.cfg.StartAt)
			return
		}
		if strings.HasPrefix(err.Error(), "BUSYGROUP") {
			return
		}
	}
	r.c.member.log.Warn("redis", "stream", r.key, "err", err)
	select {
	case <-ctx.Done():
	case <-time.After(200 * time.Millisecond):
	}
}

// reclaim claims the shard's pending entries idle for ClaimMinIdle that
// the consumer does not hold (the previous owner's, or failed ones) and
// dispatches them with their delivery counts. XPENDING lists them without
// counting a delivery; XCLAIM then delivers only the ones not held here
// (an entry queued for a worker or waiting for its acknowledgement is idle
// in Redis too), adding the one delivery their handler run will be. An
// entry that stops being held between the two was either acknowledged
// before the XCLAIM (which then skips it) or failed (and is due).
func (r *shardReader) reclaim(ctx context.Context) error {
	cfg := &r.c.cfg
	start := "-"
	for ctx.Err() == nil {
		pending, err := cfg.Redis.XPendingExt(ctx, &redis.XPendingExtArgs{
			Stream: r.key, Group: cfg.Member.Group, Idle: cfg.ClaimMinIdle, Start: start, End: "+", Count: cfg.BatchSize,
		}).Result()
		if err != nil {
			return err
		}
		ids, counts := r.notHeld(pending)
		if len(ids) > 0 {
			msgs, err := cfg.Redis.XClaim(ctx, &redis.XClaimArgs{
				Stream: r.key, Group: cfg.Member.Group, Consumer: r.c.member.ID(), MinIdle: cfg.ClaimMinIdle, Messages: ids,
			}).Result()
			if err != nil {
				return err
			}
			r.dispatch(ctx, msgs, counts)
		}
		if int64(len(pending)) < cfg.BatchSize {
			if f := r.c.onReclaim; f != nil {
				f(r.shard)
			}
			return nil
		}
		start = "(" + pending[len(pending)-1].ID
	}
	return ctx.Err()
}

// notHeld returns, in stream order, the pending entries the shard does
// not hold, and their delivery counts.
func (r *shardReader) notHeld(pending []redis.XPendingExt) ([]string, map[string]int64) {
	r.mu.Lock()
	held := map[string]bool{}
	for _, id := range r.acks {
		held[id] = true
	}
	for _, s := range r.sends {
		for _, id := range s.acks {
			held[id] = true
		}
	}
	for _, b := range r.inflight {
		from := b.next
		if b.running {
			from--
		}
		for _, m := range b.msgs[from:] {
			held[m.ID] = true
		}
	}
	r.mu.Unlock()
	var ids []string
	counts := map[string]int64{}
	for _, p := range pending {
		if !held[p.ID] {
			ids = append(ids, p.ID)
			counts[p.ID] = p.RetryCount
		}
	}
	return ids, counts
}

// dispatch hands entries to the workers of their keys, a batch per worker.
// counts are the delivery counts before a claim (nil: a ">" read, the
// first delivery).
func (r *shardReader) dispatch(ctx context.Context, msgs []redis.XMessage, counts map[string]int64) {
	if len(msgs) == 0 {
		return
	}
	r.keys = slices.Grow(r.keys[:0], len(msgs))
	r.workerOf = slices.Grow(r.workerOf[:0], len(msgs))
	size := make([]int, len(r.c.workers))
	for _, m := range msgs {
		key, _ := m.Values[r.c.cfg.KeyField].(string)
		w := r.c.workerFor(r.shard, cmp.Or(key, m.ID))
		r.keys, r.workerOf = append(r.keys, key), append(r.workerOf, w)
		size[w]++
	}
	// One array holds every batch, each with room for its entries.
	all := make([]Message, len(msgs))
	batches := make([]*batch, len(r.c.workers))
	from := 0
	for w, k := range size {
		if k > 0 {
			batches[w] = &batch{r: r, msgs: all[from : from : from+k]}
			from += k
		}
	}
	for i, m := range msgs {
		b := batches[r.workerOf[i]]
		b.msgs = append(b.msgs, Message{Shard: r.shard, Stream: r.key, ID: m.ID, Values: m.Values, Key: r.keys[i], Deliveries: counts[m.ID] + 1})
	}
	r.mu.Lock()
	for _, b := range batches {
		if b != nil {
			r.inflight = append(r.inflight, b)
		}
	}
	if counts == nil { // a ">" read: ids only grow
		r.lastDelivered = msgs[len(msgs)-1].ID
	}
	r.mu.Unlock()
	for w, b := range batches {
		if b == nil {
			continue
		}
		select {
		case r.c.workers[w] <- b:
		case <-ctx.Done(): // revoked: stop sets back what was not run
			return
		}
	}
}

// String describes the consumer.
func (c *Consumer) String() string {
	return fmt.Sprintf("consumer %s of %s/%s", c.member.ID(), c.cfg.Member.StreamPrefix, c.cfg.Member.Group)
}
