package bench

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
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
	now := benchNow
	out := make([]*group.Group, groups)
	ids := make([]string, members)
	for i := range ids {
		ids[i] = memberID(i)
	}
	targets, _ := assignor.Assign(shards, ids, nil)
	for gi := range out {
		g := group.New()
		key := group.Key{StreamPrefix: "bench", ConsumerGroup: fmt.Sprintf("g%d", gi)}
		if err := g.Create(now, s, key, contract.CreateRequest{InitialShardCount: &shards, RequestedBy: "bench"}).Err; err != nil {
			tb.Fatal(err)
		}
		for _, id := range ids {
			set := contract.NewShardSet(targets[id]...)
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

// benchNow is the instant buildGroups builds at.
var benchNow = contract.Instant(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli())

// workingCopy returns a copy of g as the group actor's working copy holds
// it: a clone on which a handler ran (a renewal of the first live member),
// so it carries the per-shard index that handlers build; the heartbeat's
// answer is returned for the caller to check.
func workingCopy(g *group.Group) (*group.Group, contract.HeartbeatResponse) {
	w := g.Clone()
	id := g.LiveMemberIDs()[0]
	m := g.Members[id]
	resp := w.Heartbeat(benchNow.Add(time.Second), group.DefaultSettings(), &contract.HeartbeatRequest{
		ProtocolVersion: 1, RequestID: id + "-bench", MemberID: id, MemberEpoch: m.MemberEpoch, MetadataVersion: m.MetadataVersion,
		RuntimeConsumerCapacity: &contract.Capacity{RuntimeMaxConcurrency: 1, AvailableConcurrency: 1},
		OwnedShards:             m.CurrentAssignment,
	}).Answer
	return w, resp
}

// BenchmarkHeapPerMember reports the heap one settled member costs in the
// domain's group.Group (goal P6: ≤ 1 KiB): 100 groups × 1,000 members ×
// 1,000 shards built from records, heap after GC before and after, over
// the member count. B/member is one copy of each group as the actor's
// committed copy holds it (records applied, no handler run);
// B/member-committed+working adds the working copy (a clone with the
// per-shard index a handler builds). The coordinator's own figure (every
// actor, index and metric included) is in the heartbeat scenario's report.
func BenchmarkHeapPerMember(b *testing.B) {
	const groups, members, shards = 100, 1000, 1000
	var perMember, perMemberBoth float64
	for b.Loop() {
		before := heapAfterGC()
		gs := buildGroups(b, groups, members, shards)
		built := heapAfterGC()
		ws := make([]*group.Group, len(gs))
		for i, g := range gs {
			ws[i], _ = workingCopy(g)
		}
		after := heapAfterGC()
		runtime.KeepAlive(gs)
		runtime.KeepAlive(ws)
		perMember = (float64(built) - float64(before)) / (groups * members)
		perMemberBoth = (float64(after) - float64(before)) / (groups * members)
	}
	b.ReportMetric(perMember, "B/member")
	b.ReportMetric(perMemberBoth, "B/member-committed+working")
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
		if _, resp := workingCopy(g); resp.Status != contract.StatusOK {
			t.Fatalf("working copy heartbeat: %+v", resp)
		}
	}
}
