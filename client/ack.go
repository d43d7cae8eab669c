package client

// The consumer's acknowledgements: the loop that sends, in one pipeline,
// what every shard has waiting (acknowledgements, restored delivery
// counts), and each shard's part of a send.

import (
	"context"
	"slices"
	"time"

	"github.com/redis/go-redis/v9"
)

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

// ackSend is what one flush sends for a shard.
type ackSend struct {
	r        *shardReader
	acks     []string
	ack      *redis.IntCmd
	unrun    []Message
	restores []*redis.StringSliceCmd
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
