package httpapi_test

import (
	"cmp"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/eventually"
)

// The Grafana rows (docs/protocol.md §2.7) end to end on the reshardEnv: real Redis streams,
// the offset cache and rate tracker of monitoring.Reader on the env's fake
// clock.

// offsetCacheTTL is the offset cache TTL of the reshardEnv coordinators.
const offsetCacheTTL = 15 * time.Second

// grafanaShard is the part of a #28 row the tests check.
type grafanaShard struct {
	StreamPrefix, ConsumerGroup, StreamKey, ShardLabel, OwnerState string
	ShardIndex, ShardCount, RedisSlot                              int
	StreamLength, PendingCount                                     int64
	FirstRecordID, LastRecordID, LastGeneratedID                   *string
	GroupLastDeliveredID, RedisNodeEndpoint                        *string
	Lag                                                            *int64
	LagKnown, MemoryUsageKnown                                     bool
	ProducedPerSecond, ConsumedPerSecond                           *float64
	TargetOwnerMemberIDs, CurrentOwnerMemberIDs, OwnerMemberIDs    string
}

// grafanaGroup is the part of a #23 row the tests check.
type grafanaGroup struct {
	StreamPrefix, ConsumerGroup, AssignedShardRatio string
	ShardCount, ActiveMembers, CurrentShards        int
	TotalStreamLength, TotalPendingCount            int64
	TotalLag                                        *int64
	ProducedPerSecond, ConsumedPerSecond            *float64
	MemoryUsageKnown                                bool
}

// grafanaMessage is the part of a #30 row the tests check.
type grafanaMessage struct {
	ShardIndex                   int
	ShardSelector, RecordID      string
	PageNextCursor               *string
	PageTotalMessages, PageLimit int64
	PageDirection, FieldsJSON    string
	Payload                      *string
}

// grafana GETs a Grafana rows endpoint of the env's group into out.
func (e *reshardEnv) grafana(endpoint string, query url.Values, out any) {
	e.t.Helper()
	if query == nil {
		query = url.Values{}
	}
	query.Set("streamPrefix", e.key.StreamPrefix)
	query.Set("consumerGroup", e.key.ConsumerGroup)
	e.expect("GET", "/monitoring/grafana/"+endpoint+"?"+query.Encode(), nil, http.StatusOK, out)
}

func (e *reshardEnv) grafanaShards() []grafanaShard {
	e.t.Helper()
	var rows []grafanaShard
	e.grafana("shards", nil, &rows)
	return rows
}

func (e *reshardEnv) grafanaGroup() grafanaGroup {
	e.t.Helper()
	var rows []grafanaGroup
	e.grafana("groups", nil, &rows)
	if len(rows) != 1 {
		e.t.Fatalf("groups rows %+v", rows)
	}
	return rows[0]
}

func TestGrafanaShardRowsMatchRedis(t *testing.T) {
	e := newReshardEnv(t)
	ms := e.pendingTraffic()

	rows := e.grafanaShards()
	if len(rows) != 4 {
		t.Fatalf("shards rows %+v", rows)
	}
	var length, pending, lag int64
	for i, r := range rows {
		key := e.streamKey(i)
		info, g, owner := e.redisShard(i, ms)
		if r.StreamPrefix != e.prefix || r.ConsumerGroup != e.key.ConsumerGroup || r.ShardIndex != i || r.ShardCount != 4 ||
			r.ShardLabel != ":"+strconv.Itoa(i) || r.StreamKey != key || r.RedisSlot != contract.Slot(key) ||
			r.StreamLength != info.Length || deref(r.FirstRecordID) != info.FirstEntry.ID || deref(r.LastRecordID) != info.LastEntry.ID ||
			deref(r.LastGeneratedID) != info.LastGeneratedID || deref(r.GroupLastDeliveredID) != g.LastDeliveredID ||
			r.PendingCount != g.Pending || r.Lag == nil || *r.Lag != g.Lag || !r.LagKnown || !r.MemoryUsageKnown ||
			r.OwnerState != "CURRENT" || r.OwnerMemberIDs != owner || r.CurrentOwnerMemberIDs != owner || r.TargetOwnerMemberIDs != owner ||
			deref(r.RedisNodeEndpoint) == "" || r.ProducedPerSecond != nil {
			t.Errorf("shard %d: %+v\nXINFO STREAM %+v\nXINFO GROUPS %+v", i, r, info, g)
		}
		length, pending, lag = length+info.Length, pending+g.Pending, lag+g.Lag
	}
	// The group row sums the same (cached) observation.
	row := e.grafanaGroup()
	if row.TotalStreamLength != length || row.TotalPendingCount != pending || row.TotalLag == nil || *row.TotalLag != lag ||
		!row.MemoryUsageKnown || row.ActiveMembers != 2 || row.CurrentShards != 4 || row.AssignedShardRatio != "4 / 4" {
		t.Errorf("group row %+v, want length %d pending %d lag %d", row, length, pending, lag)
	}
	if pending == 0 || lag == 0 {
		t.Errorf("the scenario should leave entries pending (%d) and unread (%d)", pending, lag)
	}
}

// The offset cache answers within its TTL without reading Redis (the
// values stay stale), refreshes in the background once expired, and is
// dropped when the shard count changes; rates compare observations made
// by any endpoint.
func TestGrafanaOffsetCacheAndRates(t *testing.T) {
	e := newReshardEnv(t)
	e.create(2)
	if g := e.grafanaGroup(); g.TotalStreamLength != 0 || g.ProducedPerSecond != nil || g.ConsumedPerSecond != nil {
		t.Fatalf("first observation: %+v", g)
	}
	// 50 entries on shard 0 and 30 on shard 1; a consumer reads and
	// acknowledges 20 of shard 0 and all of shard 1 (sampleTraffic).
	e.sampleTraffic()

	// 10 s later, within the TTL, both endpoints answer the cached
	// observation.
	e.Clock.Advance(10 * time.Second)
	if g, s := e.grafanaGroup(), e.grafanaShards(); g.TotalStreamLength != 0 || s[0].StreamLength != 0 || s[1].StreamLength != 0 {
		t.Fatalf("within the TTL: group %+v shards %+v", g, s)
	}

	// 20 s after the first observation it has expired: the stale one is
	// answered while one background read refreshes it.
	e.Clock.Advance(10 * time.Second)
	eventually.True(t, "the refreshed observation", func() bool { return e.grafanaGroup().TotalStreamLength == 80 })
	g, s := e.grafanaGroup(), e.grafanaShards()
	wantRate(t, "shard 0 produced", s[0].ProducedPerSecond, 2.5)
	wantRate(t, "shard 0 consumed", s[0].ConsumedPerSecond, 1)
	wantRate(t, "shard 1 produced", s[1].ProducedPerSecond, 1.5)
	wantRate(t, "shard 1 consumed", s[1].ConsumedPerSecond, 1.5)
	wantRate(t, "group produced", g.ProducedPerSecond, 4)
	wantRate(t, "group consumed", g.ConsumedPerSecond, 2.5)

	// /offsets reads live and compares with the cached sample: 10 entries
	// in 5 s on shard 0.
	for range 10 {
		e.add(0, "z")
	}
	e.Clock.Advance(5 * time.Second)
	o := e.offsets()
	wantRate(t, "offsets shard 0 produced", o.Shards[0].ProducedPerSecond, 2)
	if s := e.grafanaShards(); s[0].StreamLength != 50 {
		t.Errorf("the live read replaced the cached observation: %+v", s[0])
	}

	// A new shard count drops the cached observation: the next read waits
	// for Redis.
	e.scale(3)
	s = e.grafanaShards()
	if len(s) != 3 || s[0].StreamLength != 60 || s[0].ShardCount != 3 {
		t.Fatalf("after the scale: %+v", s)
	}
}

func TestGrafanaMessagesPageOverAllShards(t *testing.T) {
	e := newReshardEnv(t)
	e.create(3)
	for i := range 100 {
		e.add([]int{0, 0, 1, 2, 0}[i%5], "m-"+strconv.Itoa(i))
	}
	type entry struct {
		shard int
		id    string
	}
	var all []entry
	for i := range 3 {
		msgs, err := e.rdb.XRange(t.Context(), e.streamKey(i), "-", "+").Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs {
			all = append(all, entry{i, m.ID})
		}
	}
	slices.SortFunc(all, func(x, y entry) int {
		return cmp.Or(compareIDs(t, x.id, y.id), cmp.Compare(x.shard, y.shard))
	})

	walk := func(direction string) []entry {
		var got []entry
		cursor := ""
		for pages := 0; ; pages++ {
			if pages > 100/7+1 {
				t.Fatalf("%s: more pages than entries allow", direction)
			}
			var rows []grafanaMessage
			e.grafana("messages", url.Values{"shardIndex": {"$__all"}, "direction": {direction}, "limit": {"7"}, "cursor": {cursor}}, &rows)
			if len(rows) == 0 || len(rows) > 7 {
				t.Fatalf("%s page of %d rows after %q", direction, len(rows), cursor)
			}
			for _, r := range rows {
				if r.ShardSelector != "all" || r.PageTotalMessages != 100 || r.PageLimit != 7 || r.PageDirection != direction ||
					r.Payload == nil || r.FieldsJSON != `{"payload":"`+*r.Payload+`"}` {
					t.Fatalf("row %+v", r)
				}
				got = append(got, entry{r.ShardIndex, r.RecordID})
			}
			if rows[0].PageNextCursor == nil {
				return got
			}
			cursor = *rows[0].PageNextCursor
		}
	}
	forward, backward := walk("FORWARD"), walk("BACKWARD")
	slices.Reverse(backward)
	if !slices.Equal(forward, all) || !slices.Equal(backward, all) {
		t.Fatalf("paged forward %v\nbackward (reversed) %v\nwant %v", forward, backward, all)
	}

	// One shard, and a record id looked up on every shard.
	var rows []grafanaMessage
	e.grafana("messages", url.Values{"shardIndex": {"2"}, "limit": {"1000"}}, &rows)
	if len(rows) != 20 || rows[0].ShardSelector != "2" || rows[0].PageTotalMessages != 20 || rows[0].PageNextCursor != nil {
		t.Fatalf("shard 2: %d rows, first %+v", len(rows), rows[0])
	}
	// Ids repeat across shards: the lookup answers every shard's entry.
	target := all[len(all)/2].id
	var want []entry
	for _, x := range all {
		if x.id == target {
			want = append(want, x)
		}
	}
	e.grafana("messages", url.Values{"shardIndex": {"0"}, "recordId": {target}}, &rows)
	var found []entry
	for _, r := range rows {
		if r.ShardSelector != "all" || r.PageNextCursor != nil {
			t.Errorf("lookup row %+v", r)
		}
		found = append(found, entry{r.ShardIndex, r.RecordID})
	}
	if !slices.Equal(found, want) {
		t.Fatalf("lookup of %s: %v, want %v", target, found, want)
	}
}

// compareIDs orders two stream entry ids "<ms>-<seq>".
func compareIDs(t *testing.T, a, b string) int {
	t.Helper()
	parse := func(id string) [2]uint64 {
		ms, seq, _ := strings.Cut(id, "-")
		var out [2]uint64
		for i, part := range []string{ms, seq} {
			n, err := strconv.ParseUint(part, 10, 64)
			if err != nil {
				t.Fatalf("entry id %q: %v", id, err)
			}
			out[i] = n
		}
		return out
	}
	x, y := parse(a), parse(b)
	return cmp.Or(cmp.Compare(x[0], y[0]), cmp.Compare(x[1], y[1]))
}

func fmtRate(r *float64) string {
	if r == nil {
		return "null"
	}
	return strconv.FormatFloat(*r, 'f', -1, 64)
}
