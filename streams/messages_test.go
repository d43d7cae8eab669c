package streams

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// walk follows NextCursor from cursor until it is nil and returns every
// record as "shard/id" in page order.
func walk(t *testing.T, cursor string, read func(cursor string) (Page, error)) []string {
	t.Helper()
	var seen []string
	for pages := 0; ; pages++ {
		if pages > 10000 {
			t.Fatal("paging does not terminate")
		}
		page, err := read(cursor)
		if err != nil {
			t.Fatalf("page after %q: %v", cursor, err)
		}
		seen = append(seen, labels(page.Records)...)
		if page.NextCursor == nil {
			return seen
		}
		if len(page.Records) != page.Limit {
			t.Fatalf("page after %q has %d records and a next cursor, limit %d", cursor, len(page.Records), page.Limit)
		}
		cursor = *page.NextCursor
	}
}

// labels returns records as "shard/id".
func labels(records []Record) []string {
	out := make([]string, len(records))
	for j, r := range records {
		out[j] = fmt.Sprintf("%d/%s", r.Shard, r.ID)
	}
	return out
}

func labelled(shard int, ids []string) []string {
	out := make([]string, len(ids))
	for j, id := range ids {
		out[j] = fmt.Sprintf("%d/%s", shard, id)
	}
	return out
}

func TestPageWalksEveryEntryOnceInOrder(t *testing.T) {
	client := newTestClient(t)
	obs := NewObserver(client)
	shard := ShardsOf(testPrefix(t, client), 1)[0]
	ids := xaddN(t, client, shard.Key, 1000)

	forward := walk(t, "", func(cursor string) (Page, error) {
		return obs.Page(t.Context(), shard, Forward, cursor, 37)
	})
	if want := labelled(0, ids); !slices.Equal(forward, want) {
		t.Fatalf("FORWARD walk: %d records, want the %d ids in order", len(forward), len(want))
	}
	backward := walk(t, "", func(cursor string) (Page, error) {
		return obs.Page(t.Context(), shard, Backward, cursor, 37)
	})
	want := labelled(0, ids)
	slices.Reverse(want)
	if !slices.Equal(backward, want) {
		t.Fatalf("BACKWARD walk: %d records, want the %d ids in reverse order", len(backward), len(want))
	}
}

func TestPageRecordsAndEdges(t *testing.T) {
	client := newTestClient(t)
	obs := NewObserver(client)
	shards := ShardsOf(testPrefix(t, client), 2)
	if err := client.XAdd(t.Context(), &redis.XAddArgs{Stream: shards[1].Key, ID: "1700000000123-4", Values: []any{"other", "x"}}).Err(); err != nil {
		t.Fatal(err)
	}
	xadd(t, client, shards[1].Key, "1700000000124-0")

	page, err := obs.Page(t.Context(), shards[1], "", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if page.Direction != Backward || page.Limit != 1 || len(page.Records) != 1 || page.NextCursor == nil || *page.NextCursor != "1700000000124-0" {
		t.Fatalf("default page = %+v", page)
	}
	r := page.Records[0]
	if r.Shard != 1 || r.StreamKey != shards[1].Key || r.ID != "1700000000124-0" || r.Payload == nil || *r.Payload != "message-0" ||
		r.Fields["payload"] != "message-0" || r.TimestampMs != 1700000000124 || !r.Time().Equal(time.UnixMilli(1700000000124)) || r.Time().Location() != time.UTC {
		t.Fatalf("record = %+v", r)
	}

	page, err = obs.Page(t.Context(), shards[1], Backward, *page.NextCursor, 5000)
	if err != nil {
		t.Fatal(err)
	}
	if page.Limit != MaxPageLimit || len(page.Records) != 1 || page.NextCursor != nil {
		t.Fatalf("second page = %+v", page)
	}
	if r := page.Records[0]; r.ID != "1700000000123-4" || r.Payload != nil || r.Fields["other"] != "x" {
		t.Fatalf("record without payload = %+v", r)
	}

	page, err = obs.Page(t.Context(), shards[0], Forward, "", 10)
	if err != nil || len(page.Records) != 0 || page.NextCursor != nil {
		t.Fatalf("missing key page = %+v, %v", page, err)
	}
	if _, err := obs.Page(t.Context(), shards[0], Forward, "not-an-id", 10); !errors.Is(err, ErrInvalidCursor) {
		t.Fatalf("bad cursor error = %v", err)
	}
}

// mergeFixture fills three shards with interleaved ids, including ids equal
// across shards, and returns the shards and every record as "shard/id" in
// FORWARD merge order (id, then shard).
func mergeFixture(t *testing.T) (*Observer, []Shard, []string) {
	client := newTestClient(t)
	shards := ShardsOf(testPrefix(t, client), 4)
	type entry struct {
		ms, shard int
	}
	var all []entry
	for shard, n := range []int{120, 75, 0, 44} { // shard 2 stays missing
		var ids []string
		for j := range n {
			ms := 1000 + j*(shard+1) // shard 0 every ms, shard 1 every 2 ms, ...
			ids = append(ids, strconv.Itoa(ms)+"-0")
			all = append(all, entry{ms, shard})
		}
		if n > 0 {
			xadd(t, client, shards[shard].Key, ids...)
		}
	}
	slices.SortFunc(all, func(a, b entry) int {
		if a.ms != b.ms {
			return a.ms - b.ms
		}
		return a.shard - b.shard
	})
	want := make([]string, len(all))
	for j, e := range all {
		want[j] = fmt.Sprintf("%d/%d-0", e.shard, e.ms)
	}
	return NewObserver(client), shards, want
}

func TestBrowseMergesAllShards(t *testing.T) {
	obs, shards, want := mergeFixture(t)
	forward := walk(t, "", func(cursor string) (Page, error) {
		return obs.Browse(t.Context(), shards, Forward, cursor, 37)
	})
	if !slices.Equal(forward, want) {
		t.Fatalf("FORWARD merge:\n got %v\nwant %v", forward, want)
	}
	backward := walk(t, "", func(cursor string) (Page, error) {
		return obs.Browse(t.Context(), shards, Backward, cursor, 37)
	})
	wantBackward := slices.Clone(want)
	slices.Reverse(wantBackward)
	if !slices.Equal(backward, wantBackward) {
		t.Fatalf("BACKWARD merge:\n got %v\nwant %v", backward, wantBackward)
	}
}

func TestBrowseMergedCursorFormat(t *testing.T) {
	obs, shards, _ := mergeFixture(t)
	page, err := obs.Browse(t.Context(), shards, Forward, "", 3)
	if err != nil {
		t.Fatal(err)
	}
	// First three: 1000-0 on shards 0, 1 and 3.
	if page.NextCursor == nil || *page.NextCursor != "all:0=1000-0,1=1000-0,3=1000-0" {
		t.Fatalf("next cursor = %v", page.NextCursor)
	}
	page, err = obs.Browse(t.Context(), shards, Forward, *page.NextCursor, 2)
	if err != nil {
		t.Fatal(err)
	}
	// Next: 1001-0 (shard 0), 1002-0 (shard 0 before shard 1); shard 3 keeps its old position.
	if page.NextCursor == nil || *page.NextCursor != "all:0=1002-0,1=1000-0,3=1000-0" {
		t.Fatalf("next cursor = %v", page.NextCursor)
	}
	// A merged cursor also drives a single-shard selection.
	page, err = obs.Browse(t.Context(), shards[1:2], Forward, "all:1=1000-0", 1)
	if err != nil || len(page.Records) != 1 || page.Records[0].ID != "1002-0" || *page.NextCursor != "all:1=1002-0" {
		t.Fatalf("single-shard merged page = %+v, %v", page, err)
	}
	for _, bad := range []string{"all:x=1-0", "all:0=nope", "__rsc_tail__:x"} {
		if _, err := obs.Browse(t.Context(), shards, Forward, bad, 2); !errors.Is(err, ErrInvalidCursor) {
			t.Errorf("Browse(%q) error = %v", bad, err)
		}
	}
}

func TestBrowseTailCursors(t *testing.T) {
	client := newTestClient(t)
	obs := NewObserver(client)
	shards := ShardsOf(testPrefix(t, client), 1)
	xadd(t, client, shards[0].Key, "100-0", "101-0", "102-0", "103-0", "104-0")

	for _, tc := range []struct {
		dir    Direction
		cursor string
		want   []string
		next   string // "" = nil
	}{
		// FORWARD pages (limit 2): [100 101] [102 103] [104]; the last is the newest.
		{Forward, LastPageCursor, []string{"104-0"}, ""},
		{Forward, "__rsc_tail__:0", []string{"104-0"}, ""},
		{Forward, "__rsc_tail__:1", []string{"102-0", "103-0"}, "__rsc_tail__:0"},
		{Forward, "__rsc_tail__:2", []string{"100-0", "101-0"}, "__rsc_tail__:1"},
		{Forward, "__rsc_tail__:99", []string{"100-0", "101-0"}, "__rsc_tail__:1"},
		// BACKWARD pages: [104 103] [102 101] [100]; the last is the oldest.
		{Backward, LastPageCursor, []string{"100-0"}, ""},
		{Backward, "__rsc_tail__:1", []string{"102-0", "101-0"}, "__rsc_tail__:0"},
		{Backward, "__rsc_tail__:-3", []string{"100-0"}, ""},
	} {
		page, err := obs.Browse(t.Context(), shards, tc.dir, tc.cursor, 2)
		if err != nil {
			t.Fatalf("%s %s: %v", tc.dir, tc.cursor, err)
		}
		var ids []string
		for _, r := range page.Records {
			ids = append(ids, r.ID)
		}
		next := ""
		if page.NextCursor != nil {
			next = *page.NextCursor
		}
		if !slices.Equal(ids, tc.want) || next != tc.next {
			t.Errorf("%s %s: records %v next %q, want %v next %q", tc.dir, tc.cursor, ids, next, tc.want, tc.next)
		}
	}

	empty := ShardsOf(testPrefix(t, client), 1)
	page, err := obs.Browse(t.Context(), empty, Forward, LastPageCursor, 2)
	if err != nil || len(page.Records) != 0 || page.NextCursor != nil {
		t.Fatalf("tail of an empty stream = %+v, %v", page, err)
	}
}

func TestBrowseTailCursorsOverAllShards(t *testing.T) {
	obs, shards, want := mergeFixture(t)
	farthest := TailCursorPrefix + "1000" // clamped to the first page
	forward := walk(t, farthest, func(cursor string) (Page, error) {
		return obs.Browse(t.Context(), shards, Forward, cursor, 37)
	})
	if !slices.Equal(forward, want) {
		t.Fatalf("FORWARD tail walk:\n got %v\nwant %v", forward, want)
	}
	backward := walk(t, farthest, func(cursor string) (Page, error) {
		return obs.Browse(t.Context(), shards, Backward, cursor, 37)
	})
	wantBackward := slices.Clone(want)
	slices.Reverse(wantBackward)
	if !slices.Equal(backward, wantBackward) {
		t.Fatalf("BACKWARD tail walk:\n got %v\nwant %v", backward, wantBackward)
	}

	page, err := obs.Browse(t.Context(), shards, Forward, LastPageCursor, 37)
	if err != nil {
		t.Fatal(err)
	}
	if newest := want[len(want)-len(want)%37:]; !slices.Equal(labels(page.Records), newest) || page.NextCursor != nil {
		t.Fatalf("last FORWARD page = %v next %v, want %v", labels(page.Records), page.NextCursor, newest)
	}
}

func TestLookup(t *testing.T) {
	obs, shards, _ := mergeFixture(t)
	found, err := obs.Lookup(t.Context(), shards, " 1002-0 ")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := labels(found), []string{"0/1002-0", "1/1002-0"}; !slices.Equal(got, want) {
		t.Fatalf("Lookup = %v, want %v", got, want)
	}
	if found, err := obs.Lookup(t.Context(), shards, "999-0"); err != nil || len(found) != 0 {
		t.Fatalf("Lookup(absent) = %v, %v", found, err)
	}
	if _, err := obs.Lookup(t.Context(), shards, "abc"); !errors.Is(err, ErrInvalidID) {
		t.Fatalf("Lookup(abc) error = %v", err)
	}
	total, err := obs.TotalLength(t.Context(), shards)
	if err != nil || total != 120+75+44 {
		t.Fatalf("TotalLength = %d, %v", total, err)
	}
}

// FirstAfter finds each shard's entry after the given id, the first entry
// of a shard given none, and nothing past the end or on a missing key.
func TestFirstAfter(t *testing.T) {
	obs, shards, _ := mergeFixture(t)
	first, err := obs.FirstAfter(t.Context(), shards, map[int]string{0: "1005-0", 1: "1001-0", 2: "0-0", 3: "9999-0"})
	if err != nil {
		t.Fatal(err)
	}
	got := make([]string, len(first))
	for j, r := range first {
		if r != nil {
			got[j] = labels([]Record{*r})[0]
		}
	}
	if want := []string{"0/1006-0", "1/1002-0", "", ""}; !slices.Equal(got, want) {
		t.Fatalf("FirstAfter = %q, want %q", got, want)
	}
	first, err = obs.FirstAfter(t.Context(), shards[1:2], nil)
	if err != nil || len(first) != 1 || first[0] == nil || first[0].ID != "1000-0" || first[0].TimestampMs != 1000 {
		t.Fatalf("FirstAfter without an id = %+v, %v", first, err)
	}
}

func TestParseDirectionAndClampLimit(t *testing.T) {
	for in, want := range map[string]Direction{"": Backward, " ": Backward, "FORWARD": Forward, "forward": Forward, "Backward": Backward} {
		if got, err := ParseDirection(in); err != nil || got != want {
			t.Errorf("ParseDirection(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := ParseDirection("SIDEWAYS"); err == nil {
		t.Error("ParseDirection(SIDEWAYS) succeeded")
	}
	for in, want := range map[int]int{-5: 1, 0: 1, 1: 1, 25: 25, 1000: 1000, 1001: 1000} {
		if got := ClampLimit(in); got != want {
			t.Errorf("ClampLimit(%d) = %d, want %d", in, got, want)
		}
	}
}

func TestTailWindow(t *testing.T) {
	for _, tc := range []struct {
		total           int64
		limit, distance int
		want            tailWindow
	}{
		{0, 10, 0, tailWindow{}},
		{5, 2, 0, tailWindow{size: 1}},
		{5, 2, 1, tailWindow{distance: 1, skip: 1, size: 2}},
		{5, 2, 2, tailWindow{distance: 2, skip: 3, size: 2}},
		{5, 2, 7, tailWindow{distance: 2, skip: 3, size: 2}},
		{6, 2, 0, tailWindow{size: 2}},
		{6, 2, 1, tailWindow{distance: 1, skip: 2, size: 2}},
		{1, 1000, 3, tailWindow{size: 1}},
	} {
		if got := tailWindowOf(tc.total, tc.limit, tc.distance); got != tc.want {
			t.Errorf("tailWindowOf(%d, %d, %d) = %+v, want %+v", tc.total, tc.limit, tc.distance, got, tc.want)
		}
	}
}
