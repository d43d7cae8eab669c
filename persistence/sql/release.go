package sql

import (
	"context"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/persistence"
)

// releases batches concurrent Release calls: the calls made while a batch
// is in flight go out together as the next one, one statement per
// releasing coordinator run (q.ownerRelease takes arrays of keys), so that
// a coordinator handing its groups over on shutdown releases them in a
// few statements instead of one per group. A lone call goes out at once.
// The zero value is ready to use.
type releases struct {
	mu      sync.Mutex
	queue   []*releaseCall
	sending bool
}

// releaseCall is one caller's release; done receives its outcome.
type releaseCall struct {
	ctx  context.Context
	key  group.Key
	self persistence.Coordinator
	done chan error
}

// Release clears self's ownership of key, or deletes the row of a group
// that is not stored, in one statement with the releases other callers
// make at the same time (releases).
func (s *Store) Release(ctx context.Context, key group.Key, self persistence.Coordinator) error {
	s.fences.Drop(key)
	call := &releaseCall{ctx: ctx, key: key, self: self, done: make(chan error, 1)}
	r := &s.releases
	r.mu.Lock()
	r.queue = append(r.queue, call)
	start := !r.sending
	r.sending = true
	r.mu.Unlock()
	if start {
		go s.sendReleases()
	}
	select {
	case err := <-call.done:
		return err
	case <-ctx.Done():
		return readError("release", key)(ctx.Err())
	}
}

// sendReleases sends the queued releases, batch after batch, until none
// is queued. A call whose ctx ended before its batch was built is not
// sent; a batch runs until the latest deadline of its callers (without
// one when a caller has none).
func (s *Store) sendReleases() {
	r := &s.releases
	for {
		r.mu.Lock()
		queued := r.queue
		r.queue = nil
		if len(queued) == 0 {
			r.sending = false
			r.mu.Unlock()
			return
		}
		r.mu.Unlock()
		batches := map[persistence.Coordinator][]*releaseCall{}
		for _, c := range queued {
			if err := c.ctx.Err(); err != nil {
				c.done <- readError("release", c.key)(err)
				continue
			}
			batches[c.self] = append(batches[c.self], c)
		}
		for self, calls := range batches {
			err := s.releaseBatch(self, calls)
			for _, c := range calls {
				if err != nil {
					c.done <- readError("release", c.key)(err)
				} else {
					c.done <- nil
				}
			}
		}
	}
}

// releaseBatch runs q.ownerRelease for the keys of calls.
func (s *Store) releaseBatch(self persistence.Coordinator, calls []*releaseCall) error {
	ctx, cancel := latestDeadline(calls)
	defer cancel()
	prefixes, groups := make([]string, len(calls)), make([]string, len(calls))
	for i, c := range calls {
		prefixes[i], groups[i] = c.key.StreamPrefix, c.key.ConsumerGroup
	}
	return s.with(ctx, func(c *pgx.Conn) error {
		_, err := c.Exec(ctx, s.q.ownerRelease, prefixes, groups, self.ID, self.Token)
		return err
	}, func(err error) error { return err })
}

// latestDeadline is a context without the callers' values and
// cancellation that ends at the latest of their deadlines, or never when
// one has none.
func latestDeadline(calls []*releaseCall) (context.Context, context.CancelFunc) {
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
