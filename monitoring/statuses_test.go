package monitoring

import (
	"testing"
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/health"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/grouptest"
	"github.com/redis-stream-coordinator/coordinator/streams"
)

// A shard whose stream exists and whose consumer group does not (its
// consumers never started) has the whole stream as its lag; a shard whose
// stream does not exist keeps an unknown lag (issue 43 item 3).
func TestNeverStartedShardLagIsTheStream(t *testing.T) {
	r := &Reader{rates: streams.NewRateTracker()}
	o := r.sample(group.Key{StreamPrefix: "orders", ConsumerGroup: "billing"}, []streams.ShardOffset{
		{Shard: 0, StreamKey: "orders:0", StreamLength: 25, EntriesAdded: 30, FirstRecordID: ptr("1-0")},
		{Shard: 1, StreamKey: "orders:1", Missing: true},
	}, time.Unix(100, 0))
	if l := o.Shards[0].Lag; l == nil || *l != 25 {
		t.Errorf("never-started shard: lag %v, want 25", deref(l))
	}
	if l := o.Shards[1].Lag; l != nil {
		t.Errorf("missing stream: lag %v, want unknown", *l)
	}
}

func deref(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

// RoundOf samples each shard from the observation and the group: lag,
// position, entries added (the length where the server reports none),
// holders and pause; Statuses keeps a tracker per group until Retain
// drops it, and answers UNKNOWN and the members before a first round.
func TestStatusesFollowTheRefresher(t *testing.T) {
	c := grouptest.New(t, 2)
	resp := c.Join("a")
	c.Heartbeat(c.Member("a", resp.MemberEpoch, resp.Assignment.AssignedShards...))
	g := c.Group
	if len(g.Members["a"].CurrentAssignment) != 2 {
		t.Fatalf("a holds %v", g.Members["a"].CurrentAssignment)
	}
	o := Observation{Shards: []ObservedShard{
		{ShardOffset: streams.ShardOffset{Shard: 0, StreamLength: 10, EntriesAdded: 12, Lag: ptr[int64](4), GroupLastDeliveredID: ptr("7-1")}},
		{ShardOffset: streams.ShardOffset{Shard: 1, StreamLength: 5, Lag: ptr[int64](0), GroupLastDeliveredID: ptr("not an id")}},
	}}
	round := RoundOf(g, o, time.Unix(100, 0))
	want := []health.Sample{
		{Lag: 4, LagKnown: true, Position: health.ID{Ms: 7, Seq: 1}, HasPosition: true, Produced: 12, Holders: 1},
		{LagKnown: true, Produced: 5, Holders: 1},
	}
	if round.Members != 1 || len(round.Shards) != 2 || round.Shards[0] != want[0] || round.Shards[1] != want[1] {
		t.Fatalf("round %+v, want members 1 and %+v", round, want)
	}

	s := NewStatuses(health.DefaultConfig())
	if v := s.Status(g); v.Status != contract.ConsumptionUnknown || len(v.Shards) != 0 || v.WindowSamples != 10 {
		t.Errorf("before a round: %+v", v)
	}
	if sc := s.Scaling(g); sc.DesiredMembers != 1 || sc.Members != 1 || sc.ShardCount != 2 || !sc.EvaluatedAt.IsZero() {
		t.Errorf("scaling before a round: %+v", sc)
	}
	if _, _, ok := s.Summary(g.Key()); ok {
		t.Error("a summary before a round")
	}
	rep := s.Observe(g, o, time.Unix(100, 0))
	if v := s.Status(g); v.Status != rep.Status || len(v.Shards) != 2 || v.EvaluatedAt != contract.InstantOf(time.Unix(100, 0)) {
		t.Errorf("after a round: %+v", v)
	}
	if status, desired, ok := s.Summary(g.Key()); !ok || status != contract.ConsumptionOK || desired != 1 {
		t.Errorf("summary %s %d %v", status, desired, ok)
	}
	s.Retain([]group.Key{{StreamPrefix: "other", ConsumerGroup: "g"}})
	if _, _, ok := s.Summary(g.Key()); ok {
		t.Error("a group Retain left out is still evaluated")
	}
}
