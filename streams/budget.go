package streams

import (
	"errors"
	"math"

	"github.com/redis/go-redis/v9"
)

// The read budget of one request that reads stream contents: a page of the
// message explorers (Observer.Page, Observer.Browse, Observer.Lookup) or of
// a dead-letter stream (Operator.DeadLetters). However the cursor is
// crafted, such a request reads at most MaxReadEntries entries and stops
// reading once the entries it read exceed MaxReadBytes (ids, field names
// and values), so that no request holds more than a few MiB of a stream
// in memory. Entries are read in chunks: the first asks for at most
// firstReadChunk entries a shard, the next ones for no more than the
// budget's remainder at the average entry size read so far, so a read
// overshoots MaxReadBytes by at most one chunk. docs/operations.md ("Read
// budget") describes what a client sees.
const (
	// MaxReadEntries bounds the stream entries one request reads from
	// Redis: ten maximal pages (MaxPageLimit), so that every single-shard
	// page and every page of a few shards fits.
	MaxReadEntries = 10 * MaxPageLimit
	// MaxReadBytes bounds the bytes of the entries one request reads from
	// Redis (4 MiB).
	MaxReadBytes = 4 << 20
	// firstReadChunk bounds the entries asked for per shard before the size
	// of the stream's entries is known: the default page (DefaultPageLimit
	// plus the entries around the cursor) fits in one read.
	firstReadChunk = 32
)

// ErrOverBudget is matched by errors about a page that cannot be read
// within the read budget (a tail page too far from both ends, a lookup
// over more shards than the budget allows); the HTTP layer maps it to 400
// INVALID_REQUEST. Pages that can be cut short are cut instead (Page.Truncated).
var ErrOverBudget = errors.New("beyond the read budget of one request")

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

// readBudget counts what one request has read. It is not safe for
// concurrent use (a request reads in one goroutine).
type readBudget struct {
	maxEntries int
	maxBytes   int64
	// entries and bytes are what was read so far.
	entries int
	bytes   int64
}

// left reports whether the request may read more.
func (b *readBudget) left() bool { return b.entries < b.maxEntries && b.bytes < b.maxBytes }

// allowance returns how many entries each of shards reads may ask for
// next: an equal share of the entries left, and of the bytes left at the
// average entry size so far (at most firstReadChunk before any entry was
// read); at least 1.
func (b *readBudget) allowance(shards int) int {
	shards = max(shards, 1)
	n := (b.maxEntries - b.entries) / shards
	if b.entries == 0 {
		n = min(n, firstReadChunk)
	} else {
		avg := max(b.bytes/int64(b.entries), 1)
		n = int(min(int64(n), max((b.maxBytes-b.bytes)/avg/int64(shards), 0)))
	}
	return max(n, 1)
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

// spend counts messages as read.
func (b *readBudget) spend(messages []redis.XMessage) {
	for _, m := range messages {
		b.entries++
		b.bytes = min(b.bytes+entrySize(m), math.MaxInt64/2)
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
