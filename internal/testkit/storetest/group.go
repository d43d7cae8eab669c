package storetest

import (
	"bytes"
	"encoding/json"
	"maps"
	"reflect"
	"testing"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/persistence"
)

// base is the instant sample groups are created at.
const base = contract.Instant(1_700_000_000_000)

// Group returns a created group with one migration, two history entries
// and one ACTIVE member per id. Members get different target shapes in turn: a two-shard target,
// an empty (kept) target, and no target entry at all.
func Group(key group.Key, memberIDs ...string) *group.Group {
	g := group.New()
	active := "reshard-1"
	g.Apply(group.MetaRecord{Meta: group.Meta{
		StreamPrefix:    key.StreamPrefix,
		ConsumerGroup:   key.ConsumerGroup,
		GroupEpoch:      3,
		MetadataVersion: 2,
		AssignmentEpoch: 3,
		State:           group.GroupReconciling,
		ShardCount:      8,
		Migrations: map[string]group.Migration{active: {
			ReshardingID: active, FromShardCount: 4, ToShardCount: 8,
			State: group.MigrationActive, CreatedAt: base, UpdatedAt: base + 5,
		}},
		ActiveReshardingID: &active,
		CreatedAt:          base,
		UpdatedAt:          base + 10,
		History: []group.Change{
			{At: base + 1, Epoch: 2, Shard: 0, Cause: group.CauseJoin, To: "member-a"},
			{At: base + 9, Epoch: 3, Shard: 5, Cause: group.CauseWorkRebalance, From: "member-a", To: "member-b",
				Work: &group.WorkEvidence{Weight: 1.5, FromLoad: 3, ToLoad: 0.75}},
			{At: base + 10, Epoch: 3, Shard: contract.GroupLevelShard, Cause: group.CauseHandover, From: "coord-a", To: "coord-b"},
		},
		Coordinator: "coord-b",
	}})
	for i, id := range memberIDs {
		shards := contract.NewShardSet(2*i, 2*i+1)
		stream := key.StreamPrefix + ":0"
		g.Apply(group.MemberRecord{Member: &group.Member{
			MemberID: id, MemberName: "consumer-" + id, State: group.MemberActive,
			MemberEpoch: 3, MetadataVersion: 2, RuntimeMaxConcurrency: 4, ActiveConsumerWorkers: 2,
			CurrentAssignment: shards, GrantedAssignment: shards,
			LastHeartbeatAt: base + 20, MemberLeaseExpiresAt: base + 10_020, RebalanceTimeoutMs: 30_000,
			ShardProgress: []contract.ShardProgress{{
				Shard: contract.Shard{ShardIndex: 2 * i}, StreamKey: &stream, PendingCount: int64(i), UpdatedAt: base + 20,
			}},
		}})
		switch i % 3 {
		case 0:
			g.Apply(group.TargetRecord{MemberID: id, Shards: shards})
		case 1:
			g.Apply(group.TargetRecord{MemberID: id})
		}
	}
	return g
}

// Member returns a fresh ACTIVE member record without shards.
func Member(id string, epoch int64) *group.Member {
	return &group.Member{
		MemberID: id, MemberName: "consumer-" + id, State: group.MemberActive,
		MemberEpoch: epoch, RuntimeMaxConcurrency: 1,
		LastHeartbeatAt: base + 100, MemberLeaseExpiresAt: base + 10_100, RebalanceTimeoutMs: 60_000,
	}
}

// Equal fails t unless both groups hold the same meta, member records and
// targets, compared as stored (persistence.Encode): nil and empty sets,
// lists and maps are the same, and what is never stored is not compared.
func Equal(t testing.TB, want, got *group.Group) {
	t.Helper()
	w, g := persistence.Encode(want), persistence.Encode(got)
	if !bytes.Equal(w.Aggregate, g.Aggregate) {
		t.Errorf("meta differs:\nwant %s\ngot  %s", w.Aggregate, g.Aggregate)
	}
	if !maps.EqualFunc(w.Members, g.Members, bytes.Equal) {
		t.Errorf("members differ:\nwant %s\ngot  %s", w.Members, g.Members)
	}
	if !maps.EqualFunc(want.Targets, got.Targets, contract.ShardSet.Equal) {
		t.Errorf("targets differ:\nwant %v\ngot  %v", want.Targets, got.Targets)
	}
}

// jsonEqual reports whether a and b hold the same JSON value.
func jsonEqual(a, b []byte) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}
