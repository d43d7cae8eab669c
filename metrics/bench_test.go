package metrics_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/metrics"
)

// largeGroup returns a group of n live members.
func largeGroup(n int) *group.Group {
	g := group.New()
	g.Apply(group.MetaRecord{Meta: group.Meta{StreamPrefix: "orders", ConsumerGroup: "billing", GroupEpoch: 2, AssignmentEpoch: 2, State: group.GroupStable, ShardCount: 64}})
	for i := range n {
		g.Apply(group.MemberRecord{Member: &group.Member{MemberID: fmt.Sprintf("m-%05d", i), State: group.MemberActive}})
	}
	return g
}

// GroupCommitted on a 10,000-member group inside the refresh interval (the
// steady state of a busy group): O(1) work per commit.
func BenchmarkGroupCommittedThrottled(b *testing.B) {
	clock := newFakeClock()
	m := metrics.New(prometheus.NewRegistry(), coordinatorID, metrics.WithClock(clock.Now), metrics.WithMemberSeries(1000))
	g := largeGroup(10_000)
	m.GroupCommitted(orders, g, nil) // the first refresh
	b.ReportAllocs()
	for b.Loop() {
		m.GroupCommitted(orders, g, nil)
	}
}

// The O(members) refresh of a 10,000-member group, which GroupCommitted
// does at most once per refresh interval.
func BenchmarkGroupCommittedRefresh(b *testing.B) {
	clock := newFakeClock()
	m := metrics.New(prometheus.NewRegistry(), coordinatorID, metrics.WithClock(clock.Now), metrics.WithMemberSeries(1000))
	g := largeGroup(10_000)
	b.ReportAllocs()
	for b.Loop() {
		clock.Advance(time.Second)
		m.GroupCommitted(orders, g, nil)
	}
}
