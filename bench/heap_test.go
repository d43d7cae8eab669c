package bench

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/group/assignor"
)

// buildGroups builds, through the domain's records only, groups settled
// groups of members members and shards shards each (every member ACTIVE,
// current = granted = target, its lease an hour away), as a coordinator
// holds them after every member acknowledged.
func buildGroups(tb testing.TB, groups, members, shards int) []*group.Group {
	tb.Helper()
	s := group.DefaultSettings()
	s.MaxShardCount = max(shards, s.MaxShardCount)
	now := group.Instant(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli())
	out := make([]*group.Group, groups)
	ids := make([]string, members)
	for i := range ids {
		ids[i] = memberID(i)
	}
	targets, _ := assignor.Assign(shards, ids, nil)
	for gi := range out {
		g := group.New()
		key := group.Key{StreamPrefix: "bench", ConsumerGroup: fmt.Sprintf("g%d", gi)}
		if _, err := g.Create(now, s, key, group.CreateRequest{InitialShardCount: &shards, RequestedBy: "bench"}); err != nil {
			tb.Fatal(err)
		}
		for _, id := range ids {
			set := group.NewShardSet(targets[id]...)
			g.Apply(group.TargetRecord{MemberID: id, Shards: set})
			g.Apply(group.MemberRecord{Member: &group.Member{
				MemberID: id, MemberName: id, State: group.MemberActive, MemberEpoch: 2, MetadataVersion: 1,
				RuntimeMaxConcurrency: 1, CurrentAssignment: set, GrantedAssignment: set,
				LastHeartbeatAt: now, MemberLeaseExpiresAt: now.Add(time.Hour), RebalanceTimeoutMs: s.RebalanceTimeout.Milliseconds(),
			}})
		}
		meta := g.Meta
		meta.GroupEpoch, meta.AssignmentEpoch, meta.State = 2, 2, group.GroupStable
		g.Apply(group.MetaRecord{Meta: meta})
		out[gi] = g
	}
	return out
}

// heapAfterGC is the live heap after two collections.
func heapAfterGC() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkHeapPerMember reports the heap one settled member costs in the
// domain's group.Group (goal P6: ≤ 1 KiB): 100 groups × 1,000 members ×
// 1,000 shards built from records, heap after GC before and after, over
// the member count. It is the domain state of one copy of each group; the
// coordinator's own figure (heap after GC over its members, every actor,
// index and metric included) is in the heartbeat scenario's report.
func BenchmarkHeapPerMember(b *testing.B) {
	const groups, members, shards = 100, 1000, 1000
	var perMember float64
	for b.Loop() {
		before := heapAfterGC()
		gs := buildGroups(b, groups, members, shards)
		after := heapAfterGC()
		runtime.KeepAlive(gs)
		perMember = (float64(after) - float64(before)) / (groups * members)
	}
	b.ReportMetric(perMember, "B/member")
}

func TestBuildGroupsIsSettled(t *testing.T) {
	gs := buildGroups(t, 2, 10, 25)
	for _, g := range gs {
		if v := g.Violations(); len(v) != 0 {
			t.Fatalf("violations %v", v)
		}
		if n := len(g.LiveMemberIDs()); n != 10 {
			t.Fatalf("%d live members", n)
		}
	}
}
