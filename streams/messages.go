package streams

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis/go-redis/v9"
)

// Page size limits of the message explorer (docs/protocol.md §2.6).
const (
	DefaultPageLimit = 25
	MaxPageLimit     = 1000
)

// Cursor forms of the Grafana message explorer (docs/protocol.md §2.7) besides a plain entry
// id: the merged all-shard cursor "all:<i>=<id>,…" and the tail cursors
// "__rsc_last__" (the last page) and "__rsc_tail__:<n>" (n pages before it).
const (
	mergedCursorPrefix = "all:"
	LastPageCursor     = "__rsc_last__"
	TailCursorPrefix   = "__rsc_tail__:"
)

// ErrInvalidCursor is matched by errors about a malformed page cursor; the
// HTTP layer maps it to 400.
var ErrInvalidCursor = errors.New("invalid message cursor")

// Direction is the order in which a page lists stream entries.
type Direction string

const (
	// Forward lists oldest first (XRANGE).
	Forward Direction = Direction(contract.DirectionForward)
	// Backward lists newest first (XREVRANGE). It is the default; the zero
	// Direction means Backward.
	Backward Direction = Direction(contract.DirectionBackward)
)

// ParseDirection parses a direction query parameter: blank means Backward,
// otherwise FORWARD or BACKWARD in any case. Any other value is an error.
func ParseDirection(s string) (Direction, error) {
	switch d := Direction(strings.ToUpper(strings.TrimSpace(s))); d {
	case "":
		return Backward, nil
	case Forward, Backward:
		return d, nil
	}
	return "", fmt.Errorf("invalid direction %q: want FORWARD or BACKWARD", s)
}

func (d Direction) forward() bool { return d == Forward }

func (d Direction) normalized() Direction {
	if d.forward() {
		return Forward
	}
	return Backward
}

func (d Direction) opposite() Direction {
	if d.forward() {
		return Backward
	}
	return Forward
}

// ClampLimit clamps a requested page size to [1, MaxPageLimit].
func ClampLimit(limit int) int { return min(max(limit, 1), MaxPageLimit) }

// Shard names one shard of a sharded stream: its index and Redis key.
type Shard struct {
	Index int
	Key   string
}

// ShardsOf returns the shards 0..n-1 of the sharded stream prefix.
func ShardsOf(prefix string, n int) []Shard {
	shards := make([]Shard, n)
	for i := range shards {
		shards[i] = Shard{Index: i, Key: contract.StreamKey(prefix, i)}
	}
	return shards
}

// Record is one stream entry as the explorer shows it.
type Record struct {
	Shard     int
	StreamKey string
	ID        string
	Fields    map[string]string
	// Payload is Fields["payload"], or nil when the entry has no such field.
	Payload *string
	// TimestampMs is the millisecond part of ID.
	TimestampMs int64

	entry entryID
}

// Time is the entry's creation time (TimestampMs) in UTC.
func (r Record) Time() time.Time { return time.UnixMilli(r.TimestampMs).UTC() }

// Page is one page of the message explorer.
type Page struct {
	Direction Direction
	// Limit is the clamped page size.
	Limit   int
	Records []Record
	// NextCursor continues after this page; nil when nothing remained.
	NextCursor *string
	// Truncated: the read budget (MaxReadEntries, MaxReadBytes) ended the
	// page early. Records are still the entries that follow the cursor, in
	// order, but fewer than Limit, and NextCursor continues after them.
	Truncated bool
}

// Page reads one page of shard's entries (docs/protocol.md §2.6 /shards/{i}/messages) in
// direction dir, starting after cursor (an entry id of a previous page;
// blank = from the newest or oldest entry). It reads limit+1 entries after
// the cursor (XRANGE/XREVRANGE from the cursor, inclusive, dropping the
// entry equal to it) and keeps limit; NextCursor is the last kept id when
// more entries remained. Within the read budget: when it runs out first,
// the page is Truncated (fewer records, NextCursor after the last). As
// every read of stream contents, it waits for its share of
// MaxHeldReadBytes (ErrReadBusy when not given in time). A malformed
// cursor yields ErrInvalidCursor.
func (o *Observer) Page(ctx context.Context, shard Shard, dir Direction, cursor string, limit int) (Page, error) {
	dir, limit, cursor = dir.normalized(), ClampLimit(limit), strings.TrimSpace(cursor)
	if cursor != "" {
		if _, err := parseID(cursor); err != nil {
			return Page{}, fmt.Errorf("%w: %w", ErrInvalidCursor, err)
		}
	}
	b, err := o.limits.start(ctx, o.pool)
	if err != nil {
		return Page{}, err
	}
	defer b.done(ctx)
	read, cut, err := o.scan(ctx, []Shard{shard}, dir, map[int]string{shard.Index: cursor}, limit+1, false, b)
	if err != nil {
		return Page{}, err
	}
	return pageOf(dir, limit, read, cut, func(kept []Record) string { return kept[len(kept)-1].ID }), nil
}

// Browse reads one page of the Grafana message explorer (docs/protocol.md §2.7) over the
// selected shards, choosing the paging scheme from the cursor:
//
//   - LastPageCursor or TailCursorPrefix+n: page max(0, last−n) of the
//     ceil(T/limit) pages (T = TotalLength of shards) counted from the far
//     end — the newest entries for Forward, the oldest for Backward — listed
//     in dir order. NextCursor is TailCursorPrefix+(d−1) while the page's
//     distance d from the last page is positive. The page is read from the
//     nearer end of the merged shards: from the far end (the opposite of
//     dir) the entries up to the page's, or from the near end (dir) those
//     up to it, whichever are fewer; so the last page and the clamped far
//     pages cost at most about a page. A page more than the read budget
//     from both ends is refused (ErrInvalidCursor and ErrOverBudget), never
//     read by skipping.
//   - a merged cursor "all:<i>=<id>,…", or any cursor when more or fewer
//     than one shard is selected: the first limit+1 entries after the
//     shards' cursors (shards absent from the cursor start at the end dir
//     begins with; a cursor of another form is ignored), merged by (entry
//     id, shard index) in dir order, and limit are kept. NextCursor is the
//     old cursor map overlaid with each shard's last id on the page, when
//     more candidates remained. The shards are read in chunks (scan), each
//     shard only as far as it can still contribute to the page.
//   - otherwise (one shard, plain cursor): as Page.
//
// Every scheme stays within the read budget (MaxReadEntries,
// MaxReadBytes): a plain or merged page that would read more is
// Truncated, a tail page refused, and so is a merged page whose shards'
// first entries alone exceed it (ErrOverBudget). Every page first takes
// its share of what all requests may hold at once (MaxHeldReadBytes):
// ErrReadBusy when it is not given within readWait. A malformed cursor
// yields ErrInvalidCursor.
func (o *Observer) Browse(ctx context.Context, shards []Shard, dir Direction, cursor string, limit int) (Page, error) {
	dir, limit, cursor = dir.normalized(), ClampLimit(limit), strings.TrimSpace(cursor)
	distance, tail, err := parseTailCursor(cursor)
	switch {
	case err != nil:
		return Page{}, err
	case tail:
		return o.tailPage(ctx, shards, dir, distance, limit)
	case len(shards) == 1 && !strings.HasPrefix(cursor, mergedCursorPrefix):
		return o.Page(ctx, shards[0], dir, cursor, limit)
	}
	return o.mergedPage(ctx, shards, dir, cursor, limit)
}

// Lookup returns the entry with id recordID on each of shards (XRANGE key id
// id COUNT 1, in pipelines of at most observeBatch shards, sized as the
// chunks of a scan: firstReadChunk shards until an entry was found, then
// the bytes left at the average size found), ordered by shard index.
// A malformed id yields ErrInvalidID; ErrOverBudget when the entries found
// exhaust the read budget before every shard was looked at.
func (o *Observer) Lookup(ctx context.Context, shards []Shard, recordID string) ([]Record, error) {
	recordID = strings.TrimSpace(recordID)
	if _, err := parseID(recordID); err != nil {
		return nil, err
	}
	b, err := o.limits.start(ctx, o.pool)
	if err != nil {
		return nil, err
	}
	defer b.done(ctx)
	var found []Record
	for looked := 0; looked < len(shards); {
		if !b.left() {
			return nil, fmt.Errorf("%w: looking up %s: the entries found on the first %d of the %d shards exhaust it (at most %d entries and %d bytes); select one shard",
				ErrOverBudget, recordID, looked, len(shards), b.maxEntries, b.maxBytes)
		}
		batch := shards[looked:min(len(shards), looked+min(b.chunk(), observeBatch))]
		looked += len(batch)
		pipe := o.client.Pipeline()
		cmds := make([]*redis.XMessageSliceCmd, len(batch))
		for j, shard := range batch {
			cmds[j] = pipe.XRangeN(ctx, shard.Key, recordID, recordID, 1)
		}
		_, _ = pipe.Exec(ctx)
		for j, cmd := range cmds {
			if err := cmd.Err(); err != nil {
				return nil, fmt.Errorf("streams: looking up %s in %s: %w", recordID, batch[j].Key, err)
			}
			b.spend(cmd.Val())
			found = append(found, recordsOf(batch[j], cmd.Val())...)
		}
	}
	slices.SortStableFunc(found, func(a, b Record) int { return cmp.Compare(a.Shard, b.Shard) })
	return found, nil
}

// FirstAfter returns, in the order of shards, each shard's oldest entry
// whose id is above after[shard.Index] (from the shard's first entry when
// it has none there), nil where there is no such entry. It reads up to two
// entries a shard (XRANGE key <after> + COUNT 2), in pipelines of
// observeBatch shards.
func (o *Observer) FirstAfter(ctx context.Context, shards []Shard, after map[int]string) ([]*Record, error) {
	first := make([]*Record, 0, len(shards))
	for batch := range slices.Chunk(shards, observeBatch) {
		reads, err := o.readAfter(ctx, batch, Forward, after, 1)
		if err != nil {
			return nil, err
		}
		for _, records := range reads {
			var r *Record
			if len(records) > 0 {
				r = &records[0]
			}
			first = append(first, r)
		}
	}
	return first, nil
}

// TotalLength returns the summed length (XLEN) of shards, the explorer's
// total message count; a key that is missing or not a stream counts 0.
func (o *Observer) TotalLength(ctx context.Context, shards []Shard) (int64, error) {
	pipe := o.client.Pipeline()
	cmds := make([]*redis.IntCmd, len(shards))
	for j, shard := range shards {
		cmds[j] = pipe.XLen(ctx, shard.Key)
	}
	_, _ = pipe.Exec(ctx)
	var total int64
	for j, cmd := range cmds {
		if err := replyOrNil(cmd.Err()); err != nil {
			return 0, fmt.Errorf("streams: reading length of %s: %w", shards[j].Key, err)
		}
		total += cmd.Val()
	}
	return total, nil
}

func (o *Observer) mergedPage(ctx context.Context, shards []Shard, dir Direction, cursor string, limit int) (Page, error) {
	cursors, err := parseMergedCursor(cursor)
	if err != nil {
		return Page{}, err
	}
	b, err := o.limits.start(ctx, o.pool)
	if err != nil {
		return Page{}, err
	}
	defer b.done(ctx)
	merged, cut, err := o.scan(ctx, shards, dir, cursors, limit+1, false, b)
	if err != nil {
		return Page{}, err
	}
	return pageOf(dir, limit, merged, cut, func(kept []Record) string {
		next := maps.Clone(cursors)
		for _, r := range kept {
			next[r.Shard] = r.ID
		}
		return encodeMergedCursor(next)
	}), nil
}

func (o *Observer) tailPage(ctx context.Context, shards []Shard, dir Direction, distance, limit int) (Page, error) {
	total, err := o.TotalLength(ctx, shards)
	if err != nil {
		return Page{}, err
	}
	w := tailWindowOf(total, limit, distance)
	page := Page{Direction: dir, Limit: limit}
	if w.size == 0 {
		return page, nil
	}
	// The page holds the entries [skip, skip+size) counted from the far
	// end, that is [total−skip−size, total−skip) counted from the near end:
	// read the first n of the merge from the nearer end.
	fromFar, fromNear := int64(w.skip+w.size), total-int64(w.skip)
	n := min(fromFar, fromNear)
	if limits := o.limits.budget(); n > int64(limits.maxEntries) {
		return Page{}, tailOverBudget(distance, n, limits)
	}
	b, err := o.limits.start(ctx, o.pool)
	if err != nil {
		return Page{}, err
	}
	defer b.done(ctx)
	readDir := dir.opposite()
	if fromNear < fromFar {
		readDir = dir
	}
	read, cut, err := o.scan(ctx, shards, readDir, nil, int(n), true, b)
	switch {
	case err != nil:
		return Page{}, err
	case cut:
		return Page{}, tailOverBudget(distance, n, b)
	}
	lo, hi := w.skip, w.skip+w.size
	if readDir == dir {
		lo, hi = int(n)-w.size, int(n)
	}
	window := read[min(lo, len(read)):min(hi, len(read))]
	page.Records = sortedRecords(window, dir)
	if w.distance > 0 {
		next := TailCursorPrefix + strconv.Itoa(w.distance-1)
		page.NextCursor = &next
	}
	return page, nil
}

// tailOverBudget is the error of a tail page that needs the first n
// entries from the nearer end of the merged shards, more than b allows.
func tailOverBudget(distance int, n int64, b *readBudget) error {
	return fmt.Errorf("%w: %w: tail cursor %s%d: its page needs the first %d entries from the nearer end of the selected shards, "+
		"more than one request reads (at most %d entries and %d bytes); page from an end with a plain or merged cursor, or with a smaller limit",
		ErrInvalidCursor, ErrOverBudget, TailCursorPrefix, distance, n, b.maxEntries, b.maxBytes)
}

// pageOf keeps the first limit of candidates; when more remained it sets
// NextCursor to nextCursor(kept). cut says the candidates are a prefix
// that the read budget ended: the page is then Truncated and continues
// after what it kept.
func pageOf(dir Direction, limit int, candidates []Record, cut bool, nextCursor func(kept []Record) string) Page {
	page := Page{Direction: dir, Limit: limit, Records: candidates[:min(limit, len(candidates))]}
	switch {
	case len(candidates) > limit:
		next := nextCursor(page.Records)
		page.NextCursor = &next
	case cut:
		page.Truncated = true
		if len(page.Records) > 0 {
			next := nextCursor(page.Records)
			page.NextCursor = &next
		}
	}
	return page
}

// shardScan is one shard's progress in a scan.
type shardScan struct {
	shard Shard
	// cursor is where the shard's entries start (exclusive; "" = at the
	// end the scan's direction begins with).
	cursor string
	// next is the lower bound (XRANGE) or upper bound (XREVRANGE) of the
	// shard's next read; "" before the first.
	next string
	// records are the entries read, in the scan's direction.
	records []Record
	// exhausted: the shard has no entries beyond records.
	exhausted bool
	// rank counts the candidates (of every shard) up to and including the
	// last of records, in the scan's direction.
	rank int
}

// scan returns the first k entries, in direction dir, of the merge by
// (entry id, shard index) of shards' entries strictly after their cursors
// (from the end dir begins with for a shard without one), as a k-way merge
// that reads ahead in chunks. It reads in rounds and spends b; a round's
// reads go in chunks of one pipeline each (readRound), each asking for no
// more entries than the bytes left of b hold at the average size read so
// far, so that b is checked after every chunk however many shards are
// selected. The first round reads every shard's first entries (k spread
// over the shards, at most firstReadChunk each), unread shards first;
// when that is more than firstReadChunk entries in all, it starts with a
// probe of one entry of each of the first firstReadChunk shards, so that
// no more than firstReadChunk entries are read before their size is
// known. When b runs out before every shard was read, no entry can be
// confirmed, and the scan fails with ErrOverBudget. The entries up to the
// frontier, the earliest last entry read of the shards not read to their
// end, are confirmed: no unread entry precedes them. Each later round
// reads the shards that run dry within firstReadChunk entries of the
// frontier (the frontier's shard at least), sharing the entries still
// missing among them, each no more than it can contribute (k minus the
// entries that precede its last) nor than its share of what is left of b.
// So a shard whose entries come later than the page is not read beyond
// its first chunk, and the reads add up to about k when the shards
// interleave. When b runs out first, cut is true and the entries returned
// are the confirmed ones: fewer than k, but at least one.
//
// whole is for callers that need all k entries or none (tail pages): the
// scan gives up (cut, no entries) as soon as the entries still missing,
// at the average size read so far, would exceed what is left of b, rather
// than spending b first.
func (o *Observer) scan(ctx context.Context, shards []Shard, dir Direction, cursors map[int]string, k int, whole bool, b *readBudget) (merged []Record, cut bool, err error) {
	order := recordOrder(dir)
	states := make([]*shardScan, len(shards))
	for j, shard := range shards {
		states[j] = &shardScan{shard: shard, cursor: cursors[shard.Index]}
	}
	if len(states) == 0 {
		return nil, false, nil
	}
	// The first round: each shard's first min(k, share, firstReadChunk)
	// entries, unread shards first. When they are more than
	// firstReadChunk in all, a probe of one entry of each of the first
	// firstReadChunk shards comes first, so that the rest is sized from
	// the bytes of entries read.
	first := min(k, (k+len(states)-1)/len(states), firstReadChunk)
	if first*len(states) > firstReadChunk {
		probe := states[:min(len(states), firstReadChunk)]
		if err := o.readRound(ctx, probe, func(*shardScan) int { return 1 }, dir, b); err != nil {
			return nil, false, err
		}
	}
	var rest []*shardScan
	for _, s := range states {
		if !s.exhausted && s.next == "" {
			rest = append(rest, s)
		}
	}
	for _, s := range states {
		if !s.exhausted && s.next != "" && len(s.records) < first {
			rest = append(rest, s)
		}
	}
	if err := o.readRound(ctx, rest, func(s *shardScan) int { return first - len(s.records) }, dir, b); err != nil {
		return nil, false, err
	}
	for {
		var all []Record
		for _, s := range states {
			all = append(all, s.records...)
		}
		merged = slices.SortedFunc(slices.Values(all), order)
		confirmed := len(merged)
		var open []*shardScan
		for _, s := range states {
			if s.exhausted {
				continue
			}
			s.rank = 0
			if len(s.records) > 0 {
				i, _ := slices.BinarySearchFunc(merged, s.records[len(s.records)-1], order)
				s.rank = i + 1
			}
			confirmed = min(confirmed, s.rank)
			open = append(open, s)
		}
		switch {
		case confirmed >= k || len(open) == 0:
			return merged[:min(k, len(merged))], false, nil
		case whole && (!b.left() || !b.fits(k-confirmed)):
			return nil, true, nil
		case !b.left() && confirmed == 0:
			return nil, true, fmt.Errorf("%w: the first entries of the %d selected shards exceed it (at most %d entries and %d bytes) before each shard was read; select fewer shards",
				ErrOverBudget, len(shards), b.maxEntries, b.maxBytes)
		case !b.left():
			return merged[:confirmed], true, nil
		}
		open = slices.DeleteFunc(open, func(s *shardScan) bool { return s.rank >= confirmed+firstReadChunk })
		share := (k - confirmed + len(open) - 1) / len(open)
		if err := o.readRound(ctx, open, func(s *shardScan) int { return min(k-s.rank, share) }, dir, b); err != nil {
			return nil, false, err
		}
	}
}

// readRound reads todo in chunks, each in one pipeline, until every shard
// of todo was read or b is spent: a shard asks for want(s) entries, but no
// more than its share of what is left of b (readBudget.allowance), and at
// least one; a chunk asks for no more than b.chunk entries in all (at
// least one shard), so each is sized from the bytes the chunks before it
// returned.
func (o *Observer) readRound(ctx context.Context, todo []*shardScan, want func(*shardScan) int, dir Direction, b *readBudget) error {
	for len(todo) > 0 && b.left() {
		allowed, room := b.allowance(len(todo)), int64(b.chunk())
		var chunk []*shardScan
		var asked []int64
		var total int64
		for _, s := range todo {
			n := int64(max(min(want(s), allowed), 1))
			if len(chunk) > 0 && total+n > room {
				break
			}
			chunk, asked, total = append(chunk, s), append(asked, n), total+n
		}
		todo = todo[len(chunk):]
		if err := o.readChunk(ctx, chunk, asked, dir, b); err != nil {
			return err
		}
	}
	return nil
}

// readChunk reads, in one pipeline, up to asked[j] entries of each
// shard chunk[j] after what the scan read of it, and spends b.
func (o *Observer) readChunk(ctx context.Context, chunk []*shardScan, asked []int64, dir Direction, b *readBudget) error {
	pipe := o.client.Pipeline()
	cmds := make([]*redis.XMessageSliceCmd, len(chunk))
	for j, s := range chunk {
		n := asked[j]
		bound := s.next
		if bound == "" && s.cursor != "" {
			bound, n = s.cursor, n+1 // inclusive: the entry equal to the cursor is dropped
		}
		asked[j] = n
		if dir.forward() {
			cmds[j] = pipe.XRangeN(ctx, s.shard.Key, cmp.Or(bound, "-"), "+", n)
		} else {
			cmds[j] = pipe.XRevRangeN(ctx, s.shard.Key, cmp.Or(bound, "+"), "-", n)
		}
	}
	_, _ = pipe.Exec(ctx)
	for j, s := range chunk {
		messages, err := cmds[j].Result()
		if err != nil {
			return fmt.Errorf("streams: reading %s: %w", s.shard.Key, err)
		}
		b.spend(messages)
		first := s.next == ""
		if int64(len(messages)) < asked[j] {
			s.exhausted = true
		}
		if len(messages) > 0 {
			var ok bool
			if s.next, ok = beyond(messages[len(messages)-1].ID, dir); !ok {
				s.exhausted = true
			}
		}
		records := recordsOf(s.shard, messages)
		if first && s.cursor != "" {
			records = slices.DeleteFunc(records, func(r Record) bool { return r.ID == s.cursor })
		}
		s.records = append(s.records, records...)
	}
	return nil
}

// beyond returns the exclusive bound that continues a read in direction
// dir after the entry id; ok is false when no entry can follow it.
func beyond(id string, dir Direction) (bound string, ok bool) {
	e, err := parseID(id)
	switch {
	case err != nil:
		return "", false
	case dir.forward() && e.ms == math.MaxUint64 && e.seq == math.MaxUint64:
		return "", false
	case !dir.forward() && e.ms == 0 && e.seq == 0:
		return "", false
	}
	return "(" + id, true
}

// readAfter reads, in one pipeline, up to n entries of every shard strictly
// after that shard's cursor in direction dir (from the start when it has
// none): it fetches n+1 with a cursor and drops the entry equal to it. Only
// FirstAfter uses it (n = 1); pages read with scan, within a budget.
func (o *Observer) readAfter(ctx context.Context, shards []Shard, dir Direction, cursors map[int]string, n int) ([][]Record, error) {
	pipe := o.client.Pipeline()
	cmds := make([]*redis.XMessageSliceCmd, len(shards))
	for j, shard := range shards {
		cursor, count := cursors[shard.Index], int64(n)
		if cursor != "" {
			count++
		}
		if dir.forward() {
			cmds[j] = pipe.XRangeN(ctx, shard.Key, cmp.Or(cursor, "-"), "+", count)
		} else {
			cmds[j] = pipe.XRevRangeN(ctx, shard.Key, cmp.Or(cursor, "+"), "-", count)
		}
	}
	_, _ = pipe.Exec(ctx)
	reads := make([][]Record, len(shards))
	for j, shard := range shards {
		cmd := cmds[j]
		if err := cmd.Err(); err != nil {
			return nil, fmt.Errorf("streams: reading %s: %w", shard.Key, err)
		}
		cursor := cursors[shard.Index]
		records := slices.DeleteFunc(recordsOf(shard, cmd.Val()), func(r Record) bool { return r.ID == cursor })
		reads[j] = records[:min(n, len(records))]
	}
	return reads, nil
}

// valueString is a field value of an entry as a string: go-redis decodes
// them as strings, which are kept as they are (not copied).
func valueString(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return fmt.Sprint(v)
}

func recordsOf(shard Shard, messages []redis.XMessage) []Record {
	records := make([]Record, len(messages))
	for j, m := range messages {
		fields := make(map[string]string, len(m.Values))
		for name, value := range m.Values {
			fields[name] = valueString(value)
		}
		var payload *string
		if p, ok := fields["payload"]; ok {
			payload = &p
		}
		entry, _ := parseID(m.ID) // ids from Redis are well formed
		records[j] = Record{
			Shard:       shard.Index,
			StreamKey:   shard.Key,
			ID:          m.ID,
			Fields:      fields,
			Payload:     payload,
			TimestampMs: entry.timestampMs(),
			entry:       entry,
		}
	}
	return records
}

// sortedRecords sorts records in place in direction dir of the total order
// (entry id, shard index) and returns them. Reversing the whole order, ties
// included, makes a Backward listing the exact reverse of a Forward one, so
// tail pages (cut in one direction, listed in the other) never reorder
// entries with equal ids across a page boundary.
func sortedRecords(records []Record, dir Direction) []Record {
	slices.SortFunc(records, recordOrder(dir))
	return records
}

// recordOrder compares records in direction dir of the total order (entry
// id, shard index).
func recordOrder(dir Direction) func(a, b Record) int {
	return func(a, b Record) int {
		c := cmp.Or(a.entry.compare(b.entry), cmp.Compare(a.Shard, b.Shard))
		if !dir.forward() {
			c = -c
		}
		return c
	}
}

// parseTailCursor recognises the tail cursors: LastPageCursor is distance 0,
// TailCursorPrefix+n is distance max(0, n).
func parseTailCursor(cursor string) (distance int, ok bool, err error) {
	if cursor == LastPageCursor {
		return 0, true, nil
	}
	digits, found := strings.CutPrefix(cursor, TailCursorPrefix)
	if !found {
		return 0, false, nil
	}
	n, err := strconv.Atoi(digits)
	if err != nil {
		return 0, false, fmt.Errorf("%w: %q", ErrInvalidCursor, cursor)
	}
	return max(n, 0), true, nil
}

// parseMergedCursor parses "all:<i>=<id>,…" into shard index → id. A cursor
// without the "all:" prefix (blank, or a plain id from a single-shard view)
// means every shard starts from the beginning.
func parseMergedCursor(cursor string) (map[int]string, error) {
	cursors := map[int]string{}
	body, found := strings.CutPrefix(cursor, mergedCursorPrefix)
	if !found || body == "" {
		return cursors, nil
	}
	for token := range strings.SplitSeq(body, ",") {
		index, id, _ := strings.Cut(token, "=")
		i, err := strconv.Atoi(index)
		if err != nil {
			return nil, fmt.Errorf("%w: %q", ErrInvalidCursor, cursor)
		}
		if _, err := parseID(id); err != nil {
			return nil, fmt.Errorf("%w: %q: %w", ErrInvalidCursor, cursor, err)
		}
		cursors[i] = id
	}
	return cursors, nil
}

// encodeMergedCursor is the inverse of parseMergedCursor, shards ascending.
func encodeMergedCursor(cursors map[int]string) string {
	var b strings.Builder
	b.WriteString(mergedCursorPrefix)
	for j, i := range slices.Sorted(maps.Keys(cursors)) {
		if j > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(i) + "=" + cursors[i])
	}
	return b.String()
}

// tailWindow locates a tail page among the entries read from the far end:
// skip entries, then size entries; distance is the page's distance from the
// last page after clamping.
type tailWindow struct {
	distance, skip, size int
}

// tailWindowOf places page max(0, last−distance) of the ceil(total/limit)
// pages, counted from the far end, whose last page holds the remainder.
func tailWindowOf(total int64, limit, distance int) tailWindow {
	if total <= 0 {
		return tailWindow{}
	}
	lastPage := int((total - 1) / int64(limit))
	distance = min(max(distance, 0), lastPage)
	lastPageSize := int(total - int64(lastPage)*int64(limit))
	if distance == 0 {
		return tailWindow{size: lastPageSize}
	}
	return tailWindow{distance: distance, skip: lastPageSize + (distance-1)*limit, size: limit}
}
