package streams

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis/go-redis/v9"
)

// readCounter is a go-redis hook that counts the XRANGE and XREVRANGE
// commands sent through a client and the entries and bytes they returned:
// what a request read from Redis.
type readCounter struct {
	mu sync.Mutex
	readCount
}

// readCount is what a readCounter counted.
type readCount struct {
	commands         int
	entries, largest int // largest: entries of the largest single read
	bytes            int64
	counts           []int64 // the COUNT of each command
	// chunks is the COUNTs of each pipeline (or single command) of reads
	// added up, in the order they were sent.
	chunks []int64
}

func (c *readCounter) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) { return next(ctx, network, addr) }
}

func (c *readCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		c.chunk(c.count(cmd))
		return err
	}
}

func (c *readCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		var asked int64
		for _, cmd := range cmds {
			asked += c.count(cmd)
		}
		c.chunk(asked)
		return err
	}
}

// count counts cmd when it is a read and returns its COUNT (0 for none).
func (c *readCounter) count(cmd redis.Cmder) int64 {
	read, ok := cmd.(*redis.XMessageSliceCmd)
	if name := strings.ToLower(cmd.Name()); !ok || (name != "xrange" && name != "xrevrange") {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.commands++
	c.entries += len(read.Val())
	c.largest = max(c.largest, len(read.Val()))
	for _, m := range read.Val() {
		c.bytes += entrySize(m)
	}
	var n int64
	if args := cmd.Args(); len(args) == 6 {
		n, _ = strconv.ParseInt(fmt.Sprint(args[5]), 10, 64)
		c.counts = append(c.counts, n)
	}
	return n
}

// chunk records the COUNTs of one pipeline of reads.
func (c *readCounter) chunk(asked int64) {
	if asked == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.chunks = append(c.chunks, asked)
}

// reset returns what was counted since the last reset and starts again.
func (c *readCounter) reset() readCount {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.readCount
	c.readCount = readCount{}
	return out
}

// countedObserver returns an Observer over its own client, whose XRANGE and
// XREVRANGE reads the returned counter counts.
func countedObserver(t *testing.T) (*Observer, *readCounter) {
	t.Helper()
	client := newTestClient(t)
	counter := &readCounter{}
	client.AddHook(counter)
	return NewObserver(client), counter
}

// fill appends n entries of a size-byte payload to key, in pipelines of
// 2,000, and returns their ids.
func fill(t *testing.T, client *redis.Client, key string, n, size int) []string {
	t.Helper()
	payload := strings.Repeat("x", size)
	ids := make([]string, 0, n)
	for done := 0; done < n; {
		pipe := client.Pipeline()
		batch := min(2000, n-done)
		cmds := make([]*redis.StringCmd, batch)
		for j := range cmds {
			cmds[j] = pipe.XAdd(t.Context(), &redis.XAddArgs{Stream: key, Values: []any{"payload", payload}})
		}
		if _, err := pipe.Exec(t.Context()); err != nil {
			t.Fatal(err)
		}
		for _, cmd := range cmds {
			ids = append(ids, cmd.Val())
		}
		done += batch
	}
	return ids
}

// The attack of issue 42 item 2: a far tail cursor over big shards. The
// clamped page (the first of the listing) is read from its own end with
// COUNT-bounded reads, one entry a shard for limit 1, never by reading the
// stream up to it and skipping; the answer is still exactly the page the
// protocol defines, and its next cursor walks on.
func TestFarTailCursorIsReadFromTheNearerEnd(t *testing.T) {
	client := newTestClient(t)
	prefix := testPrefix(t, client)
	shards := ShardsOf(prefix, 4)
	const perShard = 20000
	var oldest, newest []string // each shard's first and last id
	for _, s := range shards {
		ids := fill(t, client, s.Key, perShard, 16)
		oldest, newest = append(oldest, ids[0]), append(newest, ids[len(ids)-1])
	}
	obs, reads := countedObserver(t)
	const far = TailCursorPrefix + "999999999"

	// FORWARD lists oldest first: the clamped page is the oldest entry.
	page, err := obs.Browse(t.Context(), shards, Forward, far, 1)
	if err != nil {
		t.Fatal(err)
	}
	got := reads.reset()
	if len(page.Records) != 1 || page.Records[0].Shard != 0 || page.Records[0].ID != oldest[0] || page.Truncated {
		t.Fatalf("far tail page FORWARD = %v (truncated %v), want shard 0's oldest %s", labels(page.Records), page.Truncated, oldest[0])
	}
	if want := TailCursorPrefix + strconv.Itoa(4*perShard-2); page.NextCursor == nil || *page.NextCursor != want {
		t.Fatalf("next cursor %v, want %s", page.NextCursor, want)
	}
	if got.entries > len(shards) || got.commands > len(shards) || slices.Max(got.counts) > 1 {
		t.Fatalf("far tail page of limit 1 read %d entries in %d commands (COUNTs %v), want at most one a shard", got.entries, got.commands, got.counts)
	}

	// BACKWARD lists newest first: the clamped page is the newest entry
	// (shard 3's: the shards were filled one after the other).
	page, err = obs.Browse(t.Context(), shards, Backward, far, 1)
	if err != nil {
		t.Fatal(err)
	}
	got = reads.reset()
	if len(page.Records) != 1 || page.Records[0].ID != newest[3] {
		t.Fatalf("far tail page BACKWARD = %v, want %s", labels(page.Records), newest[3])
	}
	if got.entries > len(shards) {
		t.Fatalf("far tail page BACKWARD read %d entries", got.entries)
	}

	// A full page of 1000: the first 1000 entries of the merge, about
	// that many read (not 4 × 1000, not 80,000).
	page, err = obs.Browse(t.Context(), shards, Forward, far, MaxPageLimit)
	if err != nil {
		t.Fatal(err)
	}
	got = reads.reset()
	if len(page.Records) != MaxPageLimit || page.Records[0].ID != oldest[0] || page.Records[MaxPageLimit-1].Shard != 0 {
		t.Fatalf("far tail page of 1000: %d records, first %v", len(page.Records), labels(page.Records[:1]))
	}
	if bound := MaxPageLimit + len(shards)*firstReadChunk; got.entries > bound {
		t.Fatalf("far tail page of 1000 read %d entries, want at most %d", got.entries, bound)
	}

	// The last page is read from its end too.
	page, err = obs.Browse(t.Context(), shards, Forward, LastPageCursor, 7)
	if err != nil {
		t.Fatal(err)
	}
	got = reads.reset()
	if last := page.Records[len(page.Records)-1]; last.ID != newest[3] || got.entries > 7+len(shards)*firstReadChunk {
		t.Fatalf("last page ends with %s (want %s), read %d entries", last.ID, newest[3], got.entries)
	}
}

// A tail page too far from both ends for the budget is refused without
// reading anything; a nearer one is served.
func TestMiddleTailPageIsRefused(t *testing.T) {
	client := newTestClient(t)
	shards := ShardsOf(testPrefix(t, client), 1)
	fill(t, client, shards[0].Key, 3*MaxReadEntries, 1)
	obs, reads := countedObserver(t)

	middle := TailCursorPrefix + strconv.Itoa(3*MaxReadEntries/2)
	_, err := obs.Browse(t.Context(), shards, Forward, middle, 1)
	if !errors.Is(err, ErrOverBudget) || !errors.Is(err, ErrInvalidCursor) {
		t.Fatalf("middle tail page: %v, want ErrOverBudget and ErrInvalidCursor", err)
	}
	if got := reads.reset(); got.entries != 0 {
		t.Fatalf("the refused page read %d entries", got.entries)
	}
	// Within the budget from the newest end: served, read from there.
	page, err := obs.Browse(t.Context(), shards, Forward, TailCursorPrefix+strconv.Itoa(MaxReadEntries/2), 1)
	if err != nil || len(page.Records) != 1 {
		t.Fatalf("tail page %d from the end: %+v, %v", MaxReadEntries/2, page, err)
	}
	if got := reads.reset(); got.entries > MaxReadEntries {
		t.Fatalf("tail page read %d entries, more than the budget", got.entries)
	}
}

// With a small bytes budget, a single-shard page of entries larger than
// the budget allows is Truncated: fewer records, a next cursor after the
// last; walking those cursors still lists every entry once, in order, and
// no request reads much beyond the budget.
func TestPageTruncatedByTheBytesBudget(t *testing.T) {
	client := newTestClient(t)
	shard := ShardsOf(testPrefix(t, client), 1)[0]
	ids := fill(t, client, shard.Key, 300, 1000)
	obs, reads := countedObserver(t)
	obs.limits = readLimits{bytes: 20 << 10}

	for _, dir := range []Direction{Forward, Backward} {
		want := slices.Clone(ids)
		if dir == Backward {
			slices.Reverse(want)
		}
		var seen []string
		truncated := 0
		for cursor, pages := "", 0; ; pages++ {
			if pages > 100 {
				t.Fatal("paging does not terminate")
			}
			page, err := obs.Page(t.Context(), shard, dir, cursor, 100)
			if err != nil {
				t.Fatal(err)
			}
			got := reads.reset()
			if got.bytes > 2*(20<<10) {
				t.Fatalf("%s page after %q read %d bytes for a budget of %d", dir, cursor, got.bytes, 20<<10)
			}
			for _, r := range page.Records {
				seen = append(seen, r.ID)
			}
			if page.Truncated {
				truncated++
				if len(page.Records) == 0 || len(page.Records) >= 100 || page.NextCursor == nil {
					t.Fatalf("truncated page: %d records, next %v", len(page.Records), page.NextCursor)
				}
			}
			if page.NextCursor == nil {
				break
			}
			cursor = *page.NextCursor
		}
		if !slices.Equal(seen, want) {
			t.Fatalf("%s walk of truncated pages: %d ids, want the %d in order", dir, len(seen), len(want))
		}
		if truncated == 0 {
			t.Fatalf("%s: no page was truncated", dir)
		}
	}
}

// Merged pages cut by the budget (entries or bytes) keep the merge's
// order: a truncated page holds only entries that no unread one precedes,
// so walking the cursors lists every entry of every shard once, in order.
func TestMergedPagesWithinTheBudget(t *testing.T) {
	obs, shards, want := mergeFixture(t)
	counter := &readCounter{}
	obs.client.AddHook(counter)
	for _, limits := range []readLimits{{entries: 20}, {bytes: 600}} {
		obs.limits = limits
		for _, dir := range []Direction{Forward, Backward} {
			wantDir := slices.Clone(want)
			if dir == Backward {
				slices.Reverse(wantDir)
			}
			var seen []string
			for cursor, pages := "", 0; ; pages++ {
				if pages > 1000 {
					t.Fatal("paging does not terminate")
				}
				page, err := obs.Browse(t.Context(), shards, dir, cursor, 37)
				if err != nil {
					t.Fatal(err)
				}
				if got := counter.reset(); limits.entries > 0 && got.entries > limits.entries+2*len(shards) {
					t.Fatalf("%+v %s: a page read %d entries", limits, dir, got.entries)
				}
				seen = append(seen, labels(page.Records)...)
				if page.Truncated && len(page.Records) == 0 {
					t.Fatalf("%+v %s: empty truncated page after %q", limits, dir, cursor)
				}
				if page.NextCursor == nil {
					break
				}
				cursor = *page.NextCursor
			}
			if !slices.Equal(seen, wantDir) {
				t.Fatalf("%+v %s merge:\n got %v\nwant %v", limits, dir, seen, wantDir)
			}
		}
	}
}

// Dead-letter pages stop at the bytes budget too, with a cursor that
// continues; every entry is listed once.
func TestDeadLettersWithinTheBytesBudget(t *testing.T) {
	client := newTestClient(t)
	ops := NewOperator(client)
	ops.limits = readLimits{bytes: 8 << 10}
	prefix := testPrefix(t, client)
	dlq := prefix + ":dead-letter"
	var want []string
	for range 60 {
		id, err := client.XAdd(t.Context(), &redis.XAddArgs{Stream: dlq,
			Values: contract.DeadLetterFields(contract.StreamKey(prefix, 0), "1-1", "billing", 5, "boom", map[string]any{"payload": strings.Repeat("p", 500)})}).Result()
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, id)
	}
	slices.Reverse(want)
	var seen []string
	truncated := false
	for cursor, pages := "", 0; ; pages++ {
		if pages > 100 {
			t.Fatal("paging does not terminate")
		}
		page, err := ops.DeadLetters(t.Context(), dlq, prefix, "billing", cursor, 50)
		if err != nil {
			t.Fatal(err)
		}
		truncated = truncated || page.Truncated
		for _, d := range page.Entries {
			seen = append(seen, d.ID)
		}
		if page.NextCursor == nil {
			break
		}
		cursor = *page.NextCursor
	}
	if !slices.Equal(seen, want) || !truncated {
		t.Fatalf("dead letters: %d listed (truncated %v), want the %d newest first", len(seen), truncated, len(want))
	}
}

func TestReadBudgetAllowance(t *testing.T) {
	b := readLimits{entries: 100, bytes: 1000}.budget()
	if got := b.allowance(1); got != firstReadChunk {
		t.Fatalf("first allowance %d, want %d", got, firstReadChunk)
	}
	if got := b.allowance(1000); got != 1 {
		t.Fatalf("allowance over more shards than entries: %d, want 1", got)
	}
	b.spend([]redis.XMessage{{ID: "1-0", Values: map[string]any{"k": strings.Repeat("v", 96)}}}) // 100 bytes
	if got := b.allowance(3); got != 3 {
		t.Fatalf("allowance after 100 of 1000 bytes over 3 shards: %d, want 3", got)
	}
	b.spend([]redis.XMessage{{ID: "2-0", Values: map[string]any{"k": strings.Repeat("v", 896)}}})
	if b.left() {
		t.Fatal("budget left after 1000 bytes")
	}
	if d := (readLimits{}).budget(); d.maxEntries != MaxReadEntries || d.maxBytes != MaxReadBytes {
		t.Fatalf("default limits %d, %d", d.maxEntries, d.maxBytes)
	}
}

// scan is a k-way merge: for shards of random lengths and interleavings,
// random cursors and k, it returns exactly the first k entries of the full
// merge, and under a small budget a non-empty prefix of them.
func TestScanMatchesAFullMerge(t *testing.T) {
	client := newTestClient(t)
	obs, reads := countedObserver(t)
	rng := rand.New(rand.NewPCG(42, uint64(len(t.Name()))))
	cuts := 0
	for trial := range 30 {
		shards := ShardsOf(testPrefix(t, client), 1+rng.IntN(5))
		var all []Record
		for _, s := range shards {
			n, ms, step := rng.IntN(120), 1+rng.IntN(50), 1+rng.IntN(4)
			if n == 0 {
				continue
			}
			ids := make([]string, n)
			for j := range ids {
				ms += rng.IntN(step) // equal ids across shards happen
				ids[j] = fmt.Sprintf("%d-%d", ms, j)
			}
			xadd(t, client, s.Key, ids...)
			for _, id := range ids {
				e, _ := parseID(id)
				all = append(all, Record{Shard: s.Index, ID: id, entry: e})
			}
		}
		for _, dir := range []Direction{Forward, Backward} {
			full := sortedRecords(slices.Clone(all), dir)
			cursors := map[int]string{}
			if len(full) > 0 && rng.IntN(2) == 0 {
				for _, s := range shards {
					if rng.IntN(2) == 0 {
						cursors[s.Index] = full[rng.IntN(len(full))].ID
					}
				}
			}
			var after []Record // the full merge past each shard's cursor
			for _, r := range full {
				c, ok := cursors[r.Shard]
				if !ok {
					after = append(after, r)
					continue
				}
				e, _ := parseID(c)
				if cmpDir := r.entry.compare(e); (dir == Forward && cmpDir > 0) || (dir == Backward && cmpDir < 0) {
					after = append(after, r)
				}
			}
			k := 1 + rng.IntN(150)
			for _, limits := range []readLimits{{}, {entries: 1 + rng.IntN(40)}, {bytes: 100 + int64(rng.IntN(2000))}} {
				got, cut, err := obs.scan(t.Context(), shards, dir, cursors, k, false, limits.budget())
				if err != nil {
					t.Fatal(err)
				}
				want := labels(after[:min(k, len(after))])
				switch {
				case !cut && !slices.Equal(labels(got), want):
					t.Fatalf("trial %d %s k=%d %+v cursors %v:\n got %v\nwant %v", trial, dir, k, limits, cursors, labels(got), want)
				case cut && (len(got) == 0 || len(got) >= k || !slices.Equal(labels(got), want[:len(got)])):
					t.Fatalf("trial %d %s k=%d %+v cut: got %v, want a non-empty prefix of %v", trial, dir, k, limits, labels(got), want)
				case cut && limits == (readLimits{}):
					t.Fatalf("trial %d: cut without a small budget", trial)
				}
				if r := reads.reset(); limits.entries > 0 && r.entries > limits.entries+2*len(shards) {
					t.Fatalf("trial %d %+v: read %d entries", trial, limits, r.entries)
				}
				if cut {
					cuts++
				}
			}
		}
	}
	if cuts == 0 {
		t.Fatal("no scan was cut by its budget: the budgets are too large for the test")
	}
	t.Logf("%d scans cut by their budget", cuts)
}

// A tail page whose entries will not fit in the bytes budget is refused as
// soon as the first chunk shows their size, not after spending the budget.
func TestTailPageOverTheBytesBudgetIsRefusedEarly(t *testing.T) {
	client := newTestClient(t)
	shards := ShardsOf(testPrefix(t, client), 1)
	fill(t, client, shards[0].Key, 1000, 1000)
	obs, reads := countedObserver(t)
	obs.limits = readLimits{bytes: 100 << 10} // about 100 entries

	// Page 3 from the end with limit 100: the newest 400 entries, or the
	// oldest 700; 400 KB do not fit.
	_, err := obs.Browse(t.Context(), shards, Forward, TailCursorPrefix+"3", 100)
	if !errors.Is(err, ErrOverBudget) {
		t.Fatalf("tail page over the bytes budget: %v, want ErrOverBudget", err)
	}
	if got := reads.reset(); got.entries > firstReadChunk {
		t.Fatalf("the refused tail page read %d entries, want only the first chunk (%d)", got.entries, firstReadChunk)
	}
	// One that fits is served: the newest 50 (the last page of 1000/100
	// pages holds 100; limit 50: the last page's 50).
	page, err := obs.Browse(t.Context(), shards, Forward, LastPageCursor, 50)
	if err != nil || len(page.Records) != 50 {
		t.Fatalf("last page within the budget: %d records, %v", len(page.Records), err)
	}
}

// The first chunk of a read over many shards is bounded in entries, and
// every chunk's bytes count: a merged page over 64 shards of 64 KB
// entries (Grafana's shardIndex=all) reads no more than firstReadChunk
// entries before their size is known, then stops at the bytes budget
// (one entry beyond at most), with a page cut short but not empty. With a
// budget too small for every shard's first entry the page is refused
// (ErrOverBudget) after the first chunk; so is a lookup whose finds
// exceed the budget, after reading no more than the first chunk.
func TestFirstChunkOverManyShardsIsBounded(t *testing.T) {
	client := newTestClient(t)
	const size = 64 << 10
	shards := ShardsOf(testPrefix(t, client), 64)
	for _, s := range shards {
		fill(t, client, s.Key, 3, size)
	}
	obs, reads := countedObserver(t)

	page, err := obs.Browse(t.Context(), shards, Forward, "", MaxPageLimit)
	if err != nil {
		t.Fatal(err)
	}
	got := reads.reset()
	entry := got.bytes / int64(got.entries)
	t.Logf("a merged page of %d over %d shards of %d-byte entries read %d entries (%d bytes) in chunks of %v: %d records, truncated %v",
		MaxPageLimit, len(shards), entry, got.entries, got.bytes, got.chunks, len(page.Records), page.Truncated)
	if got.chunks[0] > firstReadChunk {
		t.Fatalf("the first chunk asked for %d entries, want at most %d", got.chunks[0], firstReadChunk)
	}
	if got.bytes > MaxReadBytes+entry {
		t.Fatalf("the page read %d bytes, want at most the budget %d and one entry", got.bytes, MaxReadBytes)
	}
	if !page.Truncated || len(page.Records) == 0 || !slices.IsSortedFunc(page.Records, recordOrder(Forward)) {
		t.Fatalf("page of %d records, truncated %v: want a non-empty page cut short, in order", len(page.Records), page.Truncated)
	}

	obs.limits = readLimits{bytes: 16 * size}
	_, err = obs.Browse(t.Context(), shards, Forward, "", MaxPageLimit)
	if !errors.Is(err, ErrOverBudget) {
		t.Fatalf("merged page over a budget smaller than the shards' first entries: %v, want ErrOverBudget", err)
	}
	if got := reads.reset(); got.entries > firstReadChunk || got.chunks[0] > firstReadChunk {
		t.Fatalf("the refused page read %d entries in chunks of %v, want only the first chunk (%d)", got.entries, got.chunks, firstReadChunk)
	}

	// The same id on every shard: a lookup finds it everywhere.
	same := ShardsOf(testPrefix(t, client), 64)
	blob := strings.Repeat("x", size)
	for _, s := range same {
		if err := client.XAdd(t.Context(), &redis.XAddArgs{Stream: s.Key, ID: "7-1", Values: []any{"payload", blob}}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	_, err = obs.Lookup(t.Context(), same, "7-1")
	if !errors.Is(err, ErrOverBudget) {
		t.Fatalf("lookup whose finds exceed the budget: %v, want ErrOverBudget", err)
	}
	if got := reads.reset(); got.entries > firstReadChunk || got.chunks[0] > firstReadChunk {
		t.Fatalf("the refused lookup read %d entries in chunks of %v, want only the first chunk (%d)", got.entries, got.chunks, firstReadChunk)
	}
	obs.limits = readLimits{}
	found, err := obs.Lookup(t.Context(), same, "7-1")
	if err != nil || len(found) != len(same) {
		t.Fatalf("lookup within the budget: %d found, %v", len(found), err)
	}
	if got := reads.reset(); got.chunks[0] > firstReadChunk {
		t.Fatalf("the lookup's first chunk asked for %d entries", got.chunks[0])
	}
}

// Parallel reads hold no more than their pool at once: 16 readers of
// merged pages over 4 shards of 64 KB entries, each page reading its
// whole bytes budget, through a pool of two budgets. The bytes read and
// not yet given back never exceed the pool by more than one entry a
// holder, while the readers read many times the pool in all.
func TestParallelReadsShareThePool(t *testing.T) {
	client := newTestClient(t)
	const size = 64 << 10
	shards := ShardsOf(testPrefix(t, client), 4)
	for _, s := range shards {
		fill(t, client, s.Key, 40, size)
	}
	obs, reads := countedObserver(t)
	obs.limits = readLimits{bytes: 8 * size}
	// The wait only turns a hang into a failure.
	obs.pool = newReadPool(2*obs.limits.bytes, time.Minute)

	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for range 16 {
		wg.Go(func() {
			for cursor, pages := "", 0; pages < 3; pages++ {
				page, err := obs.Browse(t.Context(), shards, Forward, cursor, MaxPageLimit)
				if err == nil && (!page.Truncated || len(page.Records) == 0 || page.NextCursor == nil) {
					err = fmt.Errorf("page %d: %d records, truncated %v: want a page cut short by the budget", pages, len(page.Records), page.Truncated)
				}
				if err != nil {
					errs <- err
					return
				}
				cursor = *page.NextCursor
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	got := reads.reset()
	entry := got.bytes / int64(got.entries)
	pool := obs.pool
	holders := pool.capacity / obs.limits.bytes
	peak := pool.peak.Load()
	t.Logf("16 readers read %d bytes in all; at most %d were held at once (pool %d, %d holders)", got.bytes, peak, pool.capacity, holders)
	if bound := pool.capacity + holders*entry; peak > bound {
		t.Fatalf("%d bytes were held at once, want at most the pool's %d and one entry a holder (%d)", peak, pool.capacity, bound)
	}
	if got.bytes < 8*pool.capacity {
		t.Fatalf("the readers read %d bytes in all: too little to show the pool's bound", got.bytes)
	}
	if n := pool.inFlight.Load(); n != 0 || !pool.sem.TryAcquire(pool.capacity) {
		t.Fatalf("after the reads: %d bytes still counted, or the pool not all given back", n)
	}
}

// A read made for an HTTP request keeps the bytes it read until the
// request ends (its handler writes the answer from them) and gives the
// rest of its share back when it returns; any other read gives everything
// back when it returns. A read that does not get its share in time is
// refused with ErrReadBusy, which is also contract.ErrShed (503 with
// Retry-After).
func TestReadsHoldWhatTheyReadUntilTheRequestEnds(t *testing.T) {
	client := newTestClient(t)
	shard := ShardsOf(testPrefix(t, client), 1)[0]
	fill(t, client, shard.Key, 10, 1000)
	obs := NewObserver(client)
	obs.limits = readLimits{bytes: 64 << 10}
	pool := newReadPool(obs.limits.bytes, time.Millisecond)
	obs.pool = pool

	request, end := context.WithCancel(context.WithValue(t.Context(), http.ServerContextKey, &http.Server{}))
	defer end()
	if page, err := obs.Page(request, shard, Forward, "", 5); err != nil || len(page.Records) != 5 {
		t.Fatalf("page: %d records, %v", len(page.Records), err)
	}
	read := pool.inFlight.Load()
	if read <= 5*1000 || read >= pool.capacity {
		t.Fatalf("%d bytes counted after a page of 5 entries of 1000 bytes", read)
	}
	if pool.sem.TryAcquire(pool.capacity - read + 1) {
		t.Fatal("the bytes read were given back before the request ended")
	}
	if !pool.sem.TryAcquire(pool.capacity - read) {
		t.Fatal("the unused share was not given back")
	}
	// The pool is full now: another read waits in vain.
	_, err := obs.Page(t.Context(), shard, Forward, "", 5)
	if !errors.Is(err, ErrReadBusy) || !errors.Is(err, contract.ErrShed) {
		t.Fatalf("read while the pool is full: %v, want ErrReadBusy and contract.ErrShed", err)
	}
	pool.sem.Release(pool.capacity - read)

	end()
	for deadline := time.Now().Add(time.Minute); pool.inFlight.Load() != 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) { // a hang guard
			t.Fatal("the bytes read were not given back when the request ended")
		}
	}
	if !pool.sem.TryAcquire(pool.capacity) {
		t.Fatal("the share was not given back when the request ended")
	}
	pool.sem.Release(pool.capacity)

	// Not an HTTP request's: everything is back when the read returns.
	if _, err := obs.Page(t.Context(), shard, Backward, "", 5); err != nil {
		t.Fatal(err)
	}
	if n := pool.inFlight.Load(); n != 0 || !pool.sem.TryAcquire(pool.capacity) {
		t.Fatalf("after a read for no request: %d bytes still counted, or the share not given back", n)
	}
}
