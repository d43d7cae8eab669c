package group_test

import (
	"reflect"
	"testing"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
)

// Owners lists each shard's owners by role (an EXPIRED member holds
// nothing) and State classifies them.
func TestOwnersAndTheirState(t *testing.T) {
	g := group.New()
	g.Apply(group.MetaRecord{Meta: group.Meta{StreamPrefix: "orders", ConsumerGroup: "billing", ShardCount: 5}})
	for _, m := range []*group.Member{
		{MemberID: "a", State: group.MemberActive, CurrentAssignment: contract.NewShardSet(0, 1), Revoking: contract.NewShardSet(2)},
		{MemberID: "b", State: group.MemberActive, CurrentAssignment: contract.NewShardSet(3)},
		{MemberID: "c", State: group.MemberExpired, CurrentAssignment: contract.NewShardSet(4)},
	} {
		g.Apply(group.MemberRecord{Member: m})
	}
	g.Apply(group.TargetRecord{MemberID: "a", Shards: contract.NewShardSet(0)})
	g.Apply(group.TargetRecord{MemberID: "b", Shards: contract.NewShardSet(1, 2, 3)})

	want := map[int]group.ShardOwners{
		0: {Target: []string{"a"}, Current: []string{"a"}},
		1: {Target: []string{"b"}, Current: []string{"a"}},
		2: {Target: []string{"b"}, Revoking: []string{"a"}},
		3: {Target: []string{"b"}, Current: []string{"b"}},
	}
	got := g.Owners()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("owners %+v, want %+v", got, want)
	}
	states := map[int]contract.OwnerState{0: contract.OwnerCurrent, 1: contract.OwnerTransitioning, 2: contract.OwnerPendingAck, 3: contract.OwnerCurrent, 4: contract.OwnerUnassigned}
	for s, st := range states {
		if got := got[s].State(); got != st {
			t.Errorf("shard %d: %s, want %s", s, got, st)
		}
	}
}
