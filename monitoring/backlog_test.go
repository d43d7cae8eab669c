package monitoring_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/testredis"
	"github.com/redis-stream-coordinator/coordinator/metrics"
	"github.com/redis-stream-coordinator/coordinator/monitoring"
	"github.com/redis-stream-coordinator/coordinator/streams"
)

// base is the millisecond part of the fixture's first entry id; the
// readers' clock stands two hours later.
const base = int64(1_700_000_000_000)

var twoHoursLater = func() time.Time { return time.UnixMilli(base + 2*time.Hour.Milliseconds()) }

// newGroup returns a group of shardCount shards named key, as the
// coordinator holds it.
func newGroup(t *testing.T, key group.Key, shardCount int) *group.Group {
	t.Helper()
	g := group.New()
	if res := g.Create(contract.InstantOf(twoHoursLater()), group.DefaultSettings(), key,
		contract.CreateRequest{InitialShardCount: &shardCount, RequestedBy: "test"}); res.Err != nil {
		t.Fatal(res.Err)
	}
	return g
}

// addEntries adds entries with ids "<base+ms>-0" for each ms to key.
func addEntries(t *testing.T, rdb *redis.Client, key string, ms ...int64) {
	t.Helper()
	for _, m := range ms {
		if err := rdb.XAdd(t.Context(), &redis.XAddArgs{Stream: key, ID: fmt.Sprintf("%d-0", base+m), Values: []any{"payload", m}}).Err(); err != nil {
			t.Fatal(err)
		}
	}
}

func span(from, to int64) []int64 {
	var out []int64
	for m := from; m < to; m++ {
		out = append(out, m)
	}
	return out
}

// redisLag is the lag XINFO GROUPS reports for grp on key (-1: unknown).
func redisLag(t *testing.T, rdb *redis.Client, key, grp string) int64 {
	t.Helper()
	groups, err := rdb.XInfoGroups(t.Context(), key).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range groups {
		if g.Name == grp {
			return g.Lag
		}
	}
	t.Fatalf("no group %s on %s", grp, key)
	return 0
}

// groupLag is the group_lag the lag refresher exports for g after one
// round: its RefreshAll, Gauges and SetShardOffsets.
func groupLag(t *testing.T, reader *monitoring.Reader, g *group.Group) float64 {
	t.Helper()
	reg := prometheus.NewRegistry()
	m := metrics.New(reg, "backlog-test")
	m.GroupCommitted(g.Key(), g, nil)
	o, _, err := reader.RefreshAll(t.Context(), []*group.Group{g}, func(string) bool { return false })
	if err != nil {
		t.Fatal(err)
	}
	gauges := monitoring.Gauges(g, o[0], 0)
	m.SetShardOffsets(g.Key(), gauges.Lag, gauges.Pending, nil)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == metrics.Namespace+"_group_lag" {
			for _, s := range f.GetMetric() {
				return s.GetGauge().GetValue()
			}
		}
	}
	t.Fatal("no group_lag series")
	return 0
}

// A group that never read a stream from which an entry was deleted has a
// lag Redis cannot compute: its lag, in /offsets and in group_lag, is the
// backlog (every entry of the stream), and its lag as time is the age of
// the stream's first entry; its shards whose lag Redis knows keep it.
// Beside it, a group that read part of the same stream keeps an unknown
// lag, its lag as time read from the entry after its last-delivered-id;
// on a shard where it never started (no consumer group: provisioning off,
// no consumer came up) its lag is the whole stream, its consumers' backlog
// (issue 43 item 3), in /offsets and in group_lag.
func TestNeverReadGroupLagIsItsBacklog(t *testing.T) {
	rdb := testredis.Shared(t)
	prefix := testredis.Prefix(t, rdb)
	ctx := t.Context()
	workers := group.Key{StreamPrefix: prefix, ConsumerGroup: "workers"}
	readers := group.Key{StreamPrefix: prefix, ConsumerGroup: "readers"}
	key := func(i int) string { return contract.StreamKey(prefix, i) }

	// Shard 0: 1,612 entries a millisecond apart, both groups from the
	// start, readers reading two, then one entry deleted: 1,611 unread
	// by workers.
	addEntries(t, rdb, key(0), span(0, 1612)...)
	for _, g := range []string{"workers", "readers"} {
		if err := rdb.XGroupCreate(ctx, key(0), g, "0").Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "readers", Consumer: "r", Streams: []string{key(0), ">"}, Count: 2}).Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.XDel(ctx, key(0), fmt.Sprintf("%d-0", base+800)).Err(); err != nil {
		t.Fatal(err)
	}
	// Shard 1: workers from the start of 5 entries, then 3 more (a lag
	// Redis knows); shard 2: workers from the end, nothing since.
	addEntries(t, rdb, key(1), span(0, 5)...)
	addEntries(t, rdb, key(2), span(0, 4)...)
	for i, from := range map[int]string{1: "0", 2: "$"} {
		if err := rdb.XGroupCreate(ctx, key(i), "workers", from).Err(); err != nil {
			t.Fatal(err)
		}
	}
	addEntries(t, rdb, key(1), 100, 101, 102)
	if lag := redisLag(t, rdb, key(0), "workers"); lag != -1 {
		t.Fatalf("Redis reports workers' lag %d on shard 0: the fixture must make it unknown", lag)
	}
	if lag := redisLag(t, rdb, key(0), "readers"); lag != -1 {
		t.Fatalf("Redis reports readers' lag %d on shard 0: the fixture must make it unknown", lag)
	}

	reader := monitoring.NewReader(streams.NewObserver(rdb), twoHoursLater, 0)
	w := newGroup(t, workers, 3)
	if got := groupLag(t, reader, w); got != 1611+8 {
		t.Errorf("group_lag of workers = %v, want 1619 (1,611 + 8)", got)
	}
	o, err := reader.GroupOffsets(t.Context(), w)
	if err != nil {
		t.Fatal(err)
	}
	wantLags, wantAges := []int64{1611, 8, 0}, []float64{7200, 7200, 0}
	for i, s := range o.Shards {
		if s.Lag == nil || *s.Lag != wantLags[i] || s.OldestUnreadAgeSeconds == nil || *s.OldestUnreadAgeSeconds != wantAges[i] {
			t.Errorf("workers shard %d: lag %v, oldest unread age %v; want %d, %v", i, deref(s.Lag), deref(s.OldestUnreadAgeSeconds), wantLags[i], wantAges[i])
		}
	}
	if o.TotalLag == nil || *o.TotalLag != 1619 || o.OldestUnreadAgeSeconds == nil || *o.OldestUnreadAgeSeconds != 7200 {
		t.Errorf("workers: total lag %v, oldest unread age %v; want 1619, 7200", deref(o.TotalLag), deref(o.OldestUnreadAgeSeconds))
	}

	r := newGroup(t, readers, 2)
	if got := groupLag(t, reader, r); got != 8 {
		t.Errorf("group_lag of readers = %v, want 8 (shard 1's stream; shard 0's lag unknown)", got)
	}
	o, err = reader.GroupOffsets(t.Context(), r)
	if err != nil {
		t.Fatal(err)
	}
	if s := o.Shards[0]; s.Lag != nil || s.OldestUnreadAgeSeconds == nil || *s.OldestUnreadAgeSeconds != 7199.998 {
		t.Errorf("readers shard 0: lag %v, oldest unread age %v; want unknown, 7199.998", deref(s.Lag), deref(s.OldestUnreadAgeSeconds))
	}
	if s := o.Shards[1]; s.Lag == nil || *s.Lag != 8 || s.OldestUnreadAgeSeconds == nil || *s.OldestUnreadAgeSeconds != 7200 {
		t.Errorf("readers shard 1 (no such group): lag %v, oldest unread age %v; want 8 (the whole stream), 7200", deref(s.Lag), deref(s.OldestUnreadAgeSeconds))
	}
	if o.TotalLag != nil || o.OldestUnreadAgeSeconds == nil || *o.OldestUnreadAgeSeconds != 7200 {
		t.Errorf("readers: total lag %v, oldest unread age %v; want unknown, 7200", deref(o.TotalLag), deref(o.OldestUnreadAgeSeconds))
	}
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}
