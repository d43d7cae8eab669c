package sql

import (
	"context"
	"sync"
	"time"

	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/persistence"
)

// maxBatch bounds the keys of one batched statement.
const maxBatch = 1000

// batcher sends concurrent calls of one kind (an acquire, a release) in
// batches: the calls made while a batch is in flight go out together as
// the next ones, one send per calling coordinator run and at most maxBatch
// keys, so that a coordinator handing its groups over, or taking them
// over, does so in a few statements instead of one transaction per group.
// A lone call goes out at once. The zero value is ready to use once send
// is set.
type batcher[R any] struct {
	// send runs one batch: self's call on each of keys (which may repeat
	// a key), and returns each key's outcome, or one error for them all.
	send func(ctx context.Context, self persistence.Peer, keys []group.Key) ([]R, []error, error)

	mu      sync.Mutex
	queue   []*batchCall[R]
	sending bool
}

// batchCall is one caller's call; done is closed once out and err hold
// its outcome.
type batchCall[R any] struct {
	ctx  context.Context
	key  group.Key
	self persistence.Peer
	out  R
	err  error
	done chan struct{}
}

// do makes self's call on key in the next batch and returns its outcome,
// or ctx's error when ctx ends first (the call is then not sent if its
// batch was not built yet, and may take effect otherwise).
func (b *batcher[R]) do(ctx context.Context, key group.Key, self persistence.Peer) (R, error) {
	c := &batchCall[R]{ctx: ctx, key: key, self: self, done: make(chan struct{})}
	b.mu.Lock()
	b.queue = append(b.queue, c)
	start := !b.sending
	b.sending = true
	b.mu.Unlock()
	if start {
		go b.run()
	}
	select {
	case <-c.done:
		return c.out, c.err
	case <-ctx.Done():
		var zero R
		return zero, ctx.Err()
	}
}

// run sends the queued calls, batch after batch, until none is queued. A
// call whose ctx ended before its batch was built is not sent; a batch
// runs until the latest deadline of its callers (without one when a caller
// has none).
func (b *batcher[R]) run() {
	for {
		b.mu.Lock()
		queued := b.queue
		b.queue = nil
		if len(queued) == 0 {
			b.sending = false
			b.mu.Unlock()
			return
		}
		b.mu.Unlock()
		batches := map[persistence.Peer][]*batchCall[R]{}
		for _, c := range queued {
			if err := c.ctx.Err(); err != nil {
				c.err = err
				close(c.done)
				continue
			}
			batches[c.self] = append(batches[c.self], c)
		}
		for self, calls := range batches {
			for len(calls) > 0 {
				n := min(len(calls), maxBatch)
				b.sendBatch(self, calls[:n])
				calls = calls[n:]
			}
		}
	}
}

// sendBatch sends calls, all self's, and completes each.
func (b *batcher[R]) sendBatch(self persistence.Peer, calls []*batchCall[R]) {
	ctx, cancel := latestDeadline(calls)
	defer cancel()
	keys := make([]group.Key, len(calls))
	for i, c := range calls {
		keys[i] = c.key
	}
	outs, errs, err := b.send(ctx, self, keys)
	for i, c := range calls {
		if err != nil {
			c.err = err
		} else {
			c.out, c.err = outs[i], errs[i]
		}
		close(c.done)
	}
}

// latestDeadline is a context without the callers' values and
// cancellation that ends at the latest of their deadlines, or never when
// one has none.
func latestDeadline[R any](calls []*batchCall[R]) (context.Context, context.CancelFunc) {
	var latest time.Time
	for _, c := range calls {
		d, ok := c.ctx.Deadline()
		if !ok {
			return context.WithCancel(context.Background())
		}
		if d.After(latest) {
			latest = d
		}
	}
	return context.WithDeadline(context.Background(), latest)
}

// keyArrays are keys as the parallel arrays of prefixes and groups the
// batched statements take.
func keyArrays(keys []group.Key) (prefixes, groups []string) {
	prefixes, groups = make([]string, len(keys)), make([]string, len(keys))
	for i, k := range keys {
		prefixes[i], groups[i] = k.StreamPrefix, k.ConsumerGroup
	}
	return prefixes, groups
}
