package group

import (
	"testing"

	"github.com/redis-stream-coordinator/coordinator/contract"
)

// TestShardIndexOnlyWhereHandlersRun checks that applying records builds
// no per-shard index, that a handler builds it on its copy only, and that
// a rebuilt one agrees with the one Apply then maintains.
func TestShardIndexOnlyWhereHandlersRun(t *testing.T) {
	s := DefaultSettings()
	g := New()
	n := 4
	if err := g.Create(1000, s, Key{"p", "g"}, contract.CreateRequest{InitialShardCount: &n, RequestedBy: "t"}).Err; err != nil {
		t.Fatal(err)
	}
	set := contract.NewShardSet(0, 1, 2, 3)
	g.Apply(TargetRecord{MemberID: "a", Shards: set})
	g.Apply(MemberRecord{Member: &Member{MemberID: "a", State: MemberActive, MemberEpoch: 2, MetadataVersion: g.MetadataVersion,
		CurrentAssignment: set, GrantedAssignment: set, LastHeartbeatAt: 1000, MemberLeaseExpiresAt: 100_000}})
	if g.idx.shards != nil {
		t.Fatal("applying records built the per-shard index")
	}
	w := g.Clone()
	recs := w.Heartbeat(2000, s, &contract.HeartbeatRequest{ProtocolVersion: 1, RequestID: "b-1", MemberID: "b",
		RuntimeConsumerCapacity: &contract.Capacity{RuntimeMaxConcurrency: 1, AvailableConcurrency: 1}}).Records
	if w.idx.shards == nil || g.idx.shards != nil {
		t.Fatalf("per-shard index: working %v, original %v", w.idx.shards != nil, g.idx.shards != nil)
	}
	for _, r := range recs {
		w.Apply(r)
		g.Apply(r)
	}
	if g.idx.shards != nil {
		t.Fatal("applying a handler's records built the per-shard index")
	}
	r := Rebuilt(w)
	if a, b := *w.idx.shards, *r.idx.shards; a.foreign != b.foreign || a.holders.others(0, "") != b.holders.others(0, "") ||
		a.targetOwner.get(0) != b.targetOwner.get(0) || a.targetOwner.get(3) != b.targetOwner.get(3) {
		t.Fatalf("maintained index %+v differs from rebuilt %+v", a, b)
	}
}
