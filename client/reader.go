package client

// A shardReader reads one owned shard: it fetches and reclaims its
// entries, dispatches them to the workers and keeps the state of the
// entries it delivered.

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// shardReader fetches one owned shard and keeps the state of the entries
// it delivered.
type shardReader struct {
	c      *Consumer
	shard  int
	key    string
	cancel context.CancelFunc
	done   chan struct{}
	// token is the fencing token of the grant the reader reads under;
	// from (Ordered only) the group's last-delivered id when it began,
	// written by run before its first dispatch.
	token int64
	from  string
	// revoked ends when the coordinator revoked the shard (revoke), and
	// with it the handler contexts of the shard.
	revoked context.Context
	revoke  context.CancelFunc

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
	// holds are the shard's held keys (HoldFailedKeys, hold.go); heldMem
	// counts their entries in memory, spilledAll those in the spill list.
	holds               map[string]*hold
	heldMem, spilledAll int
	// hscope is the handler scope hctx was derived from: hctx ends with
	// it or with revoked.
	hscope *handlerScope
	hctx   context.Context
	// Scratch of dispatch (the reader's goroutine only).
	keys     []string
	workerOf []int
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
	r.dropHolds()
	r.mu.Unlock()
	r.c.wake()
}

// adoptLocked returns a batch of msgs (entries released from a hold)
// counted as the shard's, or nil when there are none; a stopped shard's
// join those whose delivery counters are set back. The caller holds r.mu.
func (r *shardReader) adoptLocked(msgs []Message) *batch {
	if len(msgs) == 0 {
		return nil
	}
	if r.stopped {
		r.unrun = append(r.unrun, msgs...)
		return nil
	}
	b := &batch{r: r, msgs: msgs}
	r.inflight = append(r.inflight, b)
	return b
}

// handlerCtx returns the context of the shard's handler calls: the
// consumer's handler scope, ended also when the shard is revoked.
func (r *shardReader) handlerCtx() context.Context {
	s := r.c.scope.Load()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.hscope != s {
		ctx, cancel := context.WithCancel(s.ctx)
		context.AfterFunc(r.revoked, cancel)
		r.hscope, r.hctx = s, ctx
	}
	return r.hctx
}

// halt stops the shard's handler calls and fetches on the consumer's own
// account: a sink refused a write (ErrFenced: this process lost the shard
// without knowing it yet), or an Ordered shard's entry failed and could
// not be dead-lettered. What it holds stays pending; the member keeps the
// shard until the coordinator revokes it.
func (r *shardReader) halt(why string, err error) {
	r.mu.Lock()
	first := !r.stopped
	if first {
		r.stopped, r.drainCtx = true, r.c.scope.Load().ctx
	}
	r.mu.Unlock()
	if first {
		r.c.member.log.Warn(why, "shard", r.shard, "token", r.token, "err", err)
	}
	r.cancel()
}

// isStopped reports whether the shard's handler calls have ended.
func (r *shardReader) isStopped() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stopped
}

// heldCount is how many entries the shard holds.
func (r *shardReader) heldCount() int {
	n := len(r.acks) + r.heldMem + r.spilledAll
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

// mayRun reports whether a handler call of the shard may start now.
func (r *shardReader) mayRun() bool {
	return !r.isStopped() && r.c.member.MayRead(r.shard)
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

func (r *shardReader) run(ctx context.Context) {
	defer close(r.done)
	cfg := &r.c.cfg
	args := &redis.XReadGroupArgs{
		Group: cfg.Member.Group, Consumer: r.c.member.ID(), Streams: []string{r.key, ">"}, Count: cfg.BatchSize, Block: cfg.Block,
	}
	var lastClaim time.Time
	if cfg.Ordered {
		if !r.takeOver(ctx) {
			return
		}
	}
	full := false // the last read filled a batch: the next one will not block
	for ctx.Err() == nil {
		if !r.c.member.MayRead(r.shard) { // a lease about to lapse: no read until renewed or revoked
			r.wait(ctx, 10*time.Millisecond)
			continue
		}
		if !cfg.Ordered && time.Since(lastClaim) >= cfg.ClaimInterval {
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
	r.wait(ctx, 200*time.Millisecond)
}

// wait returns after d or once ctx ends.
func (r *shardReader) wait(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// takeOver starts an Ordered reader: it reads the group's last-delivered
// id (creating the group at StartAt when it does not exist), then claims
// and dispatches, in stream order, every pending entry up to it whatever
// its idle time (the coordinator granted the shard once no other member
// could read it; a zombie's late writes are refused by the sinks'
// fences). Entries pending above it (a live reset moved the group back)
// are delivered again by the reads. It reports false when ctx ended.
func (r *shardReader) takeOver(ctx context.Context) bool {
	cfg := &r.c.cfg
	for ctx.Err() == nil {
		from, err := groupPosition(ctx, cfg.Redis, r.key, cfg.Member.Group)
		if err == nil && from == "" {
			err = errors.New("NOGROUP the consumer group does not exist")
		}
		if err != nil {
			r.pause(ctx, err)
			continue
		}
		r.from = from
		if err := r.claimUpTo(ctx, from); err != nil {
			r.pause(ctx, err)
			continue
		}
		return true
	}
	return false
}

// claimUpTo claims, in stream order, the shard's pending entries up to id
// end that the reader does not hold, and dispatches them.
func (r *shardReader) claimUpTo(ctx context.Context, end string) error {
	cfg := &r.c.cfg
	start := "-"
	for ctx.Err() == nil {
		pending, err := cfg.Redis.XPendingExt(ctx, &redis.XPendingExtArgs{
			Stream: r.key, Group: cfg.Member.Group, Start: start, End: end, Count: cfg.BatchSize,
		}).Result()
		if err != nil {
			return err
		}
		ids, counts := r.notHeld(pending)
		if len(ids) > 0 {
			msgs, err := cfg.Redis.XClaim(ctx, &redis.XClaimArgs{
				Stream: r.key, Group: cfg.Member.Group, Consumer: r.c.member.ID(), Messages: ids,
			}).Result()
			if err != nil {
				return err
			}
			r.dispatch(ctx, msgs, counts)
		}
		if int64(len(pending)) < cfg.BatchSize {
			return nil
		}
		start = "(" + pending[len(pending)-1].ID
	}
	return ctx.Err()
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
		if spilled := r.spilledIDs(ctx); spilled != nil {
			ids = slices.DeleteFunc(ids, func(id string) bool { return spilled[id] })
		}
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
	for _, h := range r.holds {
		for _, m := range h.queue {
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
		w := r.shard % len(r.c.workers) // Ordered: the shard's one worker
		if !r.c.cfg.Ordered {
			w = r.c.workerFor(r.shard, cmp.Or(key, m.ID))
		}
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
		b.msgs = append(b.msgs, Message{Shard: r.shard, Stream: r.key, ID: m.ID, Values: m.Values, Key: r.keys[i], Deliveries: counts[m.ID] + 1,
			Fence: Fence{Shard: r.shard, Token: r.token, From: r.from}})
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
