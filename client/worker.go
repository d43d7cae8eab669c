package client

// The consumer's workers: they run the handler on the batches the shard
// readers dispatch to them, a worker per key hash, and handle its failures.

import (
	"context"
	"errors"
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis/go-redis/v9"
	"github.com/twmb/murmur3"
)

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

// work runs the handler on the batches of one worker; a batch ends early
// when its shard is revoked.
func (c *Consumer) work(ch <-chan *batch) {
	for b := range ch {
		c.busy.Add(1)
		c.runBatch(b)
		c.busy.Add(-1)
	}
}

// runBatch runs the handler on the entries of b. With HoldFailedKeys an
// entry of a held key waits behind the key's failed head instead, and
// the entries that waited behind a head run right after it succeeds or
// is dead-lettered.
func (c *Consumer) runBatch(b *batch) {
	holds := c.holdsKeys()
	for _, msg := range b.msgs {
		if !b.r.begin(b) {
			break
		}
		if holds && msg.Key != "" && b.r.holdBehind(msg) {
			b.r.finish(b, msg.ID, false)
			continue
		}
		err := c.cfg.Handler(b.r.handlerCtx(), msg)
		if err != nil && c.cfg.Ordered && !errors.Is(err, ErrFenced) {
			msg, err = c.retryInPlace(b.r, msg, err)
		}
		switch {
		case errors.Is(err, ErrFenced):
			b.r.halt("a sink refused a write by the shard's fence: the shard is handled no more", err)
		case err != nil:
			err = c.failed(msg, err)
			if err != nil && c.cfg.Ordered {
				b.r.halt("an entry failed and is still pending: the shard's later entries wait for its owner", err)
			}
		}
		var released *batch
		switch {
		case !holds || msg.Key == "":
		case err != nil:
			b.r.holdKey(msg)
		default:
			released = b.r.release(msg)
		}
		b.r.finish(b, msg.ID, err == nil)
		if released != nil {
			c.runBatch(released)
		}
	}
}

// retryInPlace runs a failed entry of an Ordered consumer again, each
// time RetryBackoff after its failure, until a run succeeds, fails with
// ErrFenced, or is its MaxDeliveries-th; while the local lease is about
// to lapse it waits for a renewal. It returns the entry as last run and
// its last error. A revoked shard ends the retries with the entry pending
// (the shard's later entries are not run: begin refuses them).
func (c *Consumer) retryInPlace(r *shardReader, msg Message, err error) (Message, error) {
	for err != nil && !errors.Is(err, ErrFenced) && msg.Deliveries < c.cfg.MaxDeliveries {
		time.Sleep(c.cfg.RetryBackoff)
		for !r.mayRun() {
			if r.isStopped() {
				return msg, err
			}
			time.Sleep(10 * time.Millisecond)
		}
		msg.Deliveries++
		err = c.cfg.Handler(r.handlerCtx(), msg)
	}
	return msg, err
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
