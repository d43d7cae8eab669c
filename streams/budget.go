package streams

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"golang.org/x/sync/semaphore"

	"github.com/redis-stream-coordinator/coordinator/contract"
)

// The read budget of one request that reads stream contents: a page of the
// message explorers (Observer.Page, Observer.Browse, Observer.Lookup) or of
// a dead-letter stream (Operator.DeadLetters). However the cursor is
// crafted, such a request reads at most MaxReadEntries entries and stops
// reading once the entries it read exceed MaxReadBytes (ids, field names
// and values), so that no request holds more than a few MiB of a stream
// in memory. Entries are read in chunks: the first asks for at most
// firstReadChunk entries in all (however many shards are read), the next
// ones for no more than the budget's remainder at the average entry size
// read so far, and the bytes of every chunk are counted, so a read
// overshoots MaxReadBytes by at most one chunk (by one entry when the
// entries are of one size). docs/operations.md ("Read budget") describes
// what a client sees.
//
// All requests of the process together hold at most MaxHeldReadBytes:
// a request takes its MaxReadBytes from a process-wide pool before it
// reads (waiting at most readWait, else ErrReadBusy), gives back what it
// did not read when its read ends, and what it read when its answer is
// written (readPool, readBudget.done).
const (
	// MaxReadEntries bounds the stream entries one request reads from
	// Redis: ten maximal pages (MaxPageLimit), so that every single-shard
	// page and every page of a few shards fits.
	MaxReadEntries = 10 * MaxPageLimit
	// MaxReadBytes bounds the bytes of the entries one request reads from
	// Redis (4 MiB).
	MaxReadBytes = 4 << 20
	// firstReadChunk bounds the entries a request asks for before the size
	// of the stream's entries is known, in all: the first chunk reads at
	// most firstReadChunk entries (over more shards than that, one entry
	// of each of the first firstReadChunk), and the next ones are sized
	// from the bytes it returned. The default page of one shard (DefaultPageLimit plus
	// the entries around the cursor) fits in one read.
	firstReadChunk = 32
	// MaxHeldReadBytes bounds the bytes of stream entries that all the
	// requests of a coordinator hold at once (6 MiB): one request's
	// MaxReadBytes, and half as much again for the entries of requests
	// still writing their answers, so that small answers being written do
	// not keep the next request from reading. It is small because a
	// request holds more than the entries it read: the answer built from
	// them (records, JSON) takes a few times as much again, and the
	// garbage collector lets the heap grow to about twice what is live.
	// Measured with 64 parallel pages of 64 KB entries
	// over 4 shards (docs/operations.md "Read budget"), a coordinator's
	// RSS grew by 16–20 MiB with this bound, by 26–33 MiB with 8 MiB and
	// by 44–54 MiB with 16 MiB.
	MaxHeldReadBytes = MaxReadBytes + MaxReadBytes/2
	// readWait bounds how long a request waits for its share of
	// MaxHeldReadBytes before it is refused with ErrReadBusy.
	readWait = 5 * time.Second
)

// ErrOverBudget is matched by errors about a page that cannot be read
// within the read budget (a tail page too far from both ends, a lookup
// over more shards than the budget allows); the HTTP layer maps it to 400
// INVALID_REQUEST. Pages that can be cut short are cut instead (Page.Truncated).
var ErrOverBudget = errors.New("beyond the read budget of one request")

// ErrReadBusy is matched by the errors of a read refused because the
// requests in flight hold all of MaxHeldReadBytes and did not give enough
// back within readWait. Such an error also matches contract.ErrShed, which
// the HTTP layer answers with 503 REQUEST_TIMEOUT and Retry-After: the
// request may be sent again as it is.
var ErrReadBusy = errors.New("the coordinator's read budget is in use by other requests")

// readLimits are the budget's limits; the zero value means MaxReadEntries
// and MaxReadBytes (tests set smaller ones).
type readLimits struct {
	entries int
	bytes   int64
}

// budget starts a request's budget.
func (l readLimits) budget() *readBudget {
	b := &readBudget{maxEntries: l.entries, maxBytes: l.bytes}
	if b.maxEntries <= 0 {
		b.maxEntries = MaxReadEntries
	}
	if b.maxBytes <= 0 {
		b.maxBytes = MaxReadBytes
	}
	return b
}

// start starts a request's budget and takes its share of pool (nil: the
// process's), waiting at most the pool's wait for it. The caller ends the
// read with done.
func (l readLimits) start(ctx context.Context, pool *readPool) (*readBudget, error) {
	b := l.budget()
	if pool == nil {
		pool = processReads
	}
	n := min(b.maxBytes, pool.capacity)
	if err := pool.acquire(ctx, n); err != nil {
		return nil, err
	}
	b.pool, b.held = pool, n
	return b, nil
}

// readBudget counts what one request has read. It is not safe for
// concurrent use (a request reads in one goroutine).
type readBudget struct {
	maxEntries int
	maxBytes   int64
	// entries and bytes are what was read so far.
	entries int
	bytes   int64
	// pool is where the request's share was taken from (nil: none, or the
	// read has ended); held is the share.
	pool *readPool
	held int64
}

// left reports whether the request may read more.
func (b *readBudget) left() bool { return b.entries < b.maxEntries && b.bytes < b.maxBytes }

// allowance returns how many entries each of shards reads may ask for
// next: an equal share of the entries left, and of the bytes left at the
// average entry size so far (before any entry was read, an equal share of
// firstReadChunk); at least 1.
func (b *readBudget) allowance(shards int) int {
	shards = max(shards, 1)
	n := (b.maxEntries - b.entries) / shards
	if b.entries == 0 {
		n = min(n, firstReadChunk/shards)
	} else {
		avg := max(b.bytes/int64(b.entries), 1)
		n = int(min(int64(n), max((b.maxBytes-b.bytes)/avg/int64(shards), 0)))
	}
	return max(n, 1)
}

// chunk returns how many entries the next read (one pipeline) may ask for
// in all: firstReadChunk before any entry was read, then the bytes left at
// the average entry size so far; at least 1, so that a read continues
// while left.
func (b *readBudget) chunk() int {
	if b.entries == 0 {
		return firstReadChunk
	}
	avg := max(b.bytes/int64(b.entries), 1)
	return int(max(min((b.maxBytes-b.bytes)/avg, int64(b.maxEntries-b.entries)), 1))
}

// fits reports whether n more entries, at the average size read so far,
// fit in what is left (true before anything was read).
func (b *readBudget) fits(n int) bool {
	if b.entries == 0 {
		return n <= b.maxEntries
	}
	avg := max(b.bytes/int64(b.entries), 1)
	return b.entries+n <= b.maxEntries && b.bytes+int64(n)*avg <= b.maxBytes
}

// spend counts messages as read, and their bytes as held in the pool.
func (b *readBudget) spend(messages []redis.XMessage) {
	var n int64
	for _, m := range messages {
		b.entries++
		n = min(n+entrySize(m), math.MaxInt64/4)
	}
	b.bytes = min(b.bytes+n, math.MaxInt64/4)
	if b.pool != nil {
		b.pool.read(n)
	}
}

// done ends the read. When ctx is an HTTP request's (it carries
// http.ServerContextKey, as every request's context of a net/http server
// does, and can end), the bytes read stay held until the request ends:
// its handler builds and writes the answer from them; the rest of the
// share is given back now. Otherwise, everything is given back now.
func (b *readBudget) done(ctx context.Context) {
	p := b.pool
	if p == nil {
		return
	}
	b.pool = nil
	read, held := b.bytes, b.held
	if ctx.Done() == nil || ctx.Value(http.ServerContextKey) == nil {
		p.release(held, read)
		return
	}
	keep := min(read, held)
	p.release(held-keep, 0)
	context.AfterFunc(ctx, func() { p.release(keep, read) })
}

// readPool bounds the bytes of stream entries held by the requests of a
// process: a weighted semaphore of capacity bytes, of which each request
// takes its MaxReadBytes before it reads (readLimits.start).
type readPool struct {
	sem      *semaphore.Weighted
	capacity int64
	// wait bounds how long a request waits for its share.
	wait time.Duration
	// inFlight is the bytes read by the requests holding a share, until
	// they give it back; peak is its maximum so far (for tests: the
	// semaphore bounds the shares, inFlight what was actually read).
	inFlight, peak atomic.Int64
}

// processReads is the pool of every Observer and Operator that sets none.
var processReads = newReadPool(MaxHeldReadBytes, readWait)

func newReadPool(capacity int64, wait time.Duration) *readPool {
	return &readPool{sem: semaphore.NewWeighted(capacity), capacity: capacity, wait: wait}
}

// acquire takes n bytes of the pool, waiting at most p.wait: ErrReadBusy
// (and contract.ErrShed) when they were not given back in time, ctx's
// error when ctx ended first.
func (p *readPool) acquire(ctx context.Context, n int64) error {
	if p.sem.TryAcquire(n) {
		return nil
	}
	wait, cancel := context.WithTimeout(ctx, p.wait)
	defer cancel()
	if err := p.sem.Acquire(wait, n); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("streams: waiting for the read budget: %w", ctx.Err())
		}
		return fmt.Errorf("%w: %w: the requests in flight hold the %d bytes of stream entries that a coordinator holds at once, "+
			"and did not give back the %d this one needs within %s; retry the request", ErrReadBusy, contract.ErrShed, p.capacity, n, p.wait)
	}
	return nil
}

// read counts n bytes read by a request holding a share.
func (p *readPool) read(n int64) {
	now := p.inFlight.Add(n)
	for {
		peak := p.peak.Load()
		if now <= peak || p.peak.CompareAndSwap(peak, now) {
			return
		}
	}
}

// release gives back share bytes of the semaphore and read bytes of
// inFlight.
func (p *readPool) release(share, read int64) {
	if read != 0 {
		p.inFlight.Add(-read)
	}
	if share > 0 {
		p.sem.Release(share)
	}
}

// entrySize is the bytes of an entry as Redis sends them, without framing:
// its id, field names and values.
func entrySize(m redis.XMessage) int64 {
	n := int64(len(m.ID))
	for k, v := range m.Values {
		n += int64(len(k))
		switch v := v.(type) {
		case string:
			n += int64(len(v))
		case []byte:
			n += int64(len(v))
		default:
			n += 8
		}
	}
	return n
}
