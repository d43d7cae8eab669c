package metrics_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/metrics"
)

// largeGroup returns group key of n live members.
func largeGroup(key group.Key, n int) *group.Group {
	g := group.New()
	g.Apply(group.MetaRecord{Meta: group.Meta{StreamPrefix: key.StreamPrefix, ConsumerGroup: key.ConsumerGroup, GroupEpoch: 2, AssignmentEpoch: 2, State: group.GroupStable, ShardCount: 64}})
	for i := range n {
		g.Apply(group.MemberRecord{Member: &group.Member{MemberID: fmt.Sprintf("m-%05d", i), State: group.MemberActive}})
	}
	return g
}

// groupsSource serves each group's snapshot.
type groupsSource map[group.Key]*group.Group

func (s groupsSource) Snapshot(_ context.Context, key group.Key) (*group.Group, error) {
	return s[key], nil
}

// The stats hook a group actor calls after every commit: O(1).
func BenchmarkGroupStats(b *testing.B) {
	m := metrics.New(prometheus.NewRegistry(), coordinatorID)
	g := largeGroup(orders, 10_000)
	commit(m, g)
	s := g.Stats()
	b.ReportAllocs()
	for b.Loop() {
		m.GroupStats(orders, s)
	}
}

// One scrape of 100 groups of 1,000 members: the group series only
// (member series off), and with at most 200 members' series per group read
// from the groups' snapshots.
func BenchmarkScrape100x1000(b *testing.B) {
	for _, cap := range []int{0, 200} {
		b.Run(fmt.Sprintf("member-series=%d", cap), func(b *testing.B) {
			reg := prometheus.NewRegistry()
			m := metrics.New(reg, coordinatorID, metrics.WithMemberSeries(cap))
			src := groupsSource{}
			for i := range 100 {
				key := group.Key{StreamPrefix: fmt.Sprintf("s%03d", i), ConsumerGroup: "g"}
				src[key] = largeGroup(key, 1000)
				commit(m, src[key])
			}
			m.SetSource(src)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := reg.Gather(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// One scrape of /metrics with 10,000 groups of one member (the scrape
// scenario of cmd/coord-bench, issue 21) and the default group cap: bytes
// written and allocated per scrape.
func BenchmarkScrape10000Groups(b *testing.B) {
	reg := prometheus.NewRegistry()
	m := metrics.New(reg, coordinatorID)
	for i := range 10_000 {
		key := group.Key{StreamPrefix: fmt.Sprintf("s%05d", i), ConsumerGroup: "g"}
		commit(m, largeGroup(key, 1))
		m.SetShardOffsets(key, 3, 1, nil)
	}
	h := metrics.Handler(reg)
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	var size int
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		size = rec.Body.Len()
	}
	b.ReportMetric(float64(size), "B/scrape")
}
