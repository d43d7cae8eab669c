package streams

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

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
	Forward Direction = "FORWARD"
	// Backward lists newest first (XREVRANGE). It is the default; the zero
	// Direction means Backward.
	Backward Direction = "BACKWARD"
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
		shards[i] = Shard{Index: i, Key: StreamKey(prefix, i)}
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
}

// Page reads one page of shard's entries (docs/protocol.md §2.6 /shards/{i}/messages) in
// direction dir, starting after cursor (an entry id of a previous page;
// blank = from the newest or oldest entry). It fetches limit+1 entries
// (limit+2 with a cursor), drops the entry equal to the cursor and keeps
// limit; NextCursor is the last kept id when more entries remained. A
// malformed cursor yields ErrInvalidCursor.
func (o *Observer) Page(ctx context.Context, shard Shard, dir Direction, cursor string, limit int) (Page, error) {
	dir, limit, cursor = dir.normalized(), ClampLimit(limit), strings.TrimSpace(cursor)
	if cursor != "" {
		if _, err := parseID(cursor); err != nil {
			return Page{}, fmt.Errorf("%w: %w", ErrInvalidCursor, err)
		}
	}
	reads, err := o.readAfter(ctx, []Shard{shard}, dir, map[int]string{shard.Index: cursor}, limit+1)
	if err != nil {
		return Page{}, err
	}
	return pageOf(dir, limit, reads[0], func(kept []Record) string { return kept[len(kept)-1].ID }), nil
}

// Browse reads one page of the Grafana message explorer (docs/protocol.md §2.7) over the
// selected shards, choosing the paging scheme from the cursor:
//
//   - LastPageCursor or TailCursorPrefix+n: page max(0, last−n) of the
//     ceil(T/limit) pages (T = TotalLength of shards) counted from the far
//     end — the newest entries for Forward, the oldest for Backward — listed
//     in dir order. NextCursor is TailCursorPrefix+(d−1) while the page's
//     distance d from the last page is positive. The cost grows with n: each
//     shard reads up to (n+1)·limit entries.
//   - a merged cursor "all:<i>=<id>,…", or any cursor when more or fewer
//     than one shard is selected: every shard reads limit+1 entries after its
//     own cursor (shards absent from the cursor start at the end dir begins
//     with; a cursor of another form is ignored), the candidates are merged
//     by (entry id, shard index) in dir order, and limit are kept.
//     NextCursor is the old cursor map overlaid with each shard's last id on
//     the page, when more candidates remained.
//   - otherwise (one shard, plain cursor): as Page.
//
// A malformed cursor yields ErrInvalidCursor.
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
// id COUNT 1, pipelined), ordered by shard index. A malformed id yields
// ErrInvalidID.
func (o *Observer) Lookup(ctx context.Context, shards []Shard, recordID string) ([]Record, error) {
	recordID = strings.TrimSpace(recordID)
	if _, err := parseID(recordID); err != nil {
		return nil, err
	}
	pipe := o.client.Pipeline()
	cmds := make([]*redis.XMessageSliceCmd, len(shards))
	for j, shard := range shards {
		cmds[j] = pipe.XRangeN(ctx, shard.Key, recordID, recordID, 1)
	}
	_, _ = pipe.Exec(ctx)
	var found []Record
	for j, cmd := range cmds {
		if err := cmd.Err(); err != nil {
			return nil, fmt.Errorf("streams: looking up %s in %s: %w", recordID, shards[j].Key, err)
		}
		found = append(found, recordsOf(shards[j], cmd.Val())...)
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
	reads, err := o.readAfter(ctx, shards, dir, cursors, limit+1)
	if err != nil {
		return Page{}, err
	}
	merged := sortedRecords(slices.Concat(reads...), dir)
	return pageOf(dir, limit, merged, func(kept []Record) string {
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
	reads, err := o.readAfter(ctx, shards, dir.opposite(), nil, w.skip+w.size)
	if err != nil {
		return Page{}, err
	}
	fromFarEnd := sortedRecords(slices.Concat(reads...), dir.opposite())
	window := fromFarEnd[min(w.skip, len(fromFarEnd)):min(w.skip+w.size, len(fromFarEnd))]
	page.Records = sortedRecords(window, dir)
	if w.distance > 0 {
		next := TailCursorPrefix + strconv.Itoa(w.distance-1)
		page.NextCursor = &next
	}
	return page, nil
}

// pageOf keeps the first limit of candidates; when more remained it sets
// NextCursor to nextCursor(kept).
func pageOf(dir Direction, limit int, candidates []Record, nextCursor func(kept []Record) string) Page {
	page := Page{Direction: dir, Limit: limit, Records: candidates[:min(limit, len(candidates))]}
	if len(candidates) > limit {
		next := nextCursor(page.Records)
		page.NextCursor = &next
	}
	return page
}

// readAfter reads, in one pipeline, up to n entries of every shard strictly
// after that shard's cursor in direction dir (from the start when it has
// none): it fetches n+1 with a cursor and drops the entry equal to it.
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

func recordsOf(shard Shard, messages []redis.XMessage) []Record {
	records := make([]Record, len(messages))
	for j, m := range messages {
		fields := make(map[string]string, len(m.Values))
		for name, value := range m.Values {
			fields[name] = fmt.Sprint(value)
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
	slices.SortFunc(records, func(a, b Record) int {
		c := cmp.Or(a.entry.compare(b.entry), cmp.Compare(a.Shard, b.Shard))
		if !dir.forward() {
			c = -c
		}
		return c
	})
	return records
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
