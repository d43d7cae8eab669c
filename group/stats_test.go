package group_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/grouptest"
)

// oracleStats computes g's stats from scratch, the violations through
// group.(*Group).Violations.
func oracleStats(g *group.Group) group.Stats {
	s := group.Stats{GroupEpoch: g.GroupEpoch, AssignmentEpoch: g.AssignmentEpoch, Members: len(g.Members)}
	if id := g.ActiveReshardingID; id != nil {
		s.MigrationSince = g.Migrations[*id].CreatedAt
	}
	for _, m := range g.Members {
		if m.State.Live() {
			s.Live++
			s.CurrentShards += len(m.CurrentAssignment)
		}
		if m.State == group.MemberExpired {
			s.Expired++
		}
		if m.Holds() {
			s.RevokePending += len(m.Revoking)
		}
	}
	for _, t := range g.Targets {
		s.TargetShards += len(t)
	}
	for _, v := range g.Violations() {
		s.Violations++
		if v.Kind == group.DuplicateCurrentOwners {
			s.DuplicateOwners++
		}
	}
	return s
}

// tracked applies the records a domain handler produced on the working
// copy to a copy whose Stats Apply keeps, and checks them against the
// oracle.
type tracked struct {
	t *testing.T
	g *group.Group
}

func newTracked(t *testing.T) *tracked {
	tr := &tracked{t: t, g: group.New()}
	tr.g.Stats() // from now on Apply keeps the counts
	return tr
}

func (tr *tracked) apply(step string, recs []group.Record) {
	tr.t.Helper()
	for _, r := range recs {
		tr.g.Apply(r)
	}
	if got, want := tr.g.Stats(), oracleStats(tr.g); got != want {
		tr.t.Fatalf("%s: stats %+v, want %+v", step, got, want)
	}
}

// The tracked stats equal a recomputation after every commit of random
// flows: joins, heartbeats owning random shards (fencing some), expiries,
// prunes, scale-outs and rollbacks, deletes.
func TestStatsTrackTheRecords(t *testing.T) {
	s := group.DefaultSettings()
	key := group.Key{StreamPrefix: "orders", ConsumerGroup: "billing"}
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 7))
		work := group.New()
		tr := newTracked(t)
		now := contract.InstantOf(time.Date(2026, 5, 21, 0, 0, 0, 0, time.UTC))
		n := 4 + rng.IntN(8)
		res := work.Create(now, s, key, contract.CreateRequest{RequestedBy: "t", InitialShardCount: &n})
		if res.Err != nil {
			t.Fatal(res.Err)
		}
		tr.apply("create", res.Records)
		epochs := map[string]contract.HeartbeatResponse{}
		for step := range 300 {
			now = now.Add(time.Duration(rng.IntN(3000)) * time.Millisecond)
			name := fmt.Sprintf("seed %d step %d", seed, step)
			switch op := rng.IntN(20); {
			case op < 14:
				id := fmt.Sprintf("m-%d", rng.IntN(8))
				req := grouptest.JoinRequest(id)
				if prev, ok := epochs[id]; ok && rng.IntN(5) > 0 {
					req = grouptest.NextRequest(id, prev)
					if rng.IntN(6) == 0 {
						req.OwnedShards = append(req.OwnedShards, rng.IntN(work.ShardCount+2))
					}
				}
				if group.ValidateHeartbeat(req, s) != nil {
					continue
				}
				res := work.Heartbeat(now, s, req)
				epochs[id] = res.Answer
				tr.apply(name+" heartbeat "+id, res.Records)
			case op < 17:
				now = now.Add(time.Duration(rng.IntN(20)) * time.Second)
				tr.apply(name+" tick", work.Tick(now, s).Records)
			case op < 19:
				target := 1 + rng.IntN(16)
				res := work.StartScale(now, s, contract.ScaleRequest{TargetShardCount: &target, RequestedBy: "t"}, fmt.Sprintf("mig-%d", step))
				if res.Err != nil {
					continue
				}
				tr.apply(name+" start scale", res.Records)
				if res.Answer.State == group.MigrationPreparing {
					if res := work.ActivateScale(now, s, res.Answer.ReshardingID); res.Err == nil {
						tr.apply(name+" activate scale", res.Records)
					}
				}
			default:
				if id := work.ActiveReshardingID; id != nil {
					if res := work.Rollback(now, s, *id, contract.RollbackRequest{RequestedBy: "t", Reason: "r"}); res.Err == nil {
						tr.apply(name+" rollback", res.Records)
					}
				}
			}
		}
		res = work.Delete(now, s, contract.DeleteRequest{RequestedBy: "t", Reason: "r", Force: true})
		if res.Err != nil {
			t.Fatal(res.Err)
		}
		tr.apply(fmt.Sprintf("seed %d delete", seed), res.Records)
	}
}

// Records that break the invariants directly (two current owners of a
// shard, a target naming no member, a shard beyond the count) are counted
// like group.Violations counts them, also when the shard count changes.
func TestStatsCountViolationsLikeTheDomain(t *testing.T) {
	tr := newTracked(t)
	meta := group.Meta{StreamPrefix: "orders", ConsumerGroup: "billing", GroupEpoch: 2, AssignmentEpoch: 2, State: group.GroupStable, ShardCount: 2}
	tr.apply("meta", []group.Record{group.MetaRecord{Meta: meta}})
	for _, id := range []string{"a", "b"} {
		tr.apply("member "+id, []group.Record{group.MemberRecord{Member: &group.Member{MemberID: id, State: group.MemberActive, CurrentAssignment: contract.NewShardSet(0, 3)}}})
	}
	tr.apply("targets", []group.Record{
		group.TargetRecord{MemberID: "a", Shards: contract.NewShardSet(0, 1)},
		group.TargetRecord{MemberID: "ghost", Shards: contract.NewShardSet(1, 2)},
	})
	meta.ShardCount, meta.GroupEpoch = 3, 3
	tr.apply("more shards, epoch mismatch", []group.Record{group.MetaRecord{Meta: meta}})
	tr.apply("b fenced", []group.Record{group.MemberRecord{Member: &group.Member{MemberID: "b", State: group.MemberFenced}}})
	tr.apply("ghost joins", []group.Record{group.MemberRecord{Member: &group.Member{MemberID: "ghost", State: group.MemberStarting}}})
	tr.apply("a removed", []group.Record{group.MemberRemovedRecord{MemberID: "a"}, group.TargetRemovedRecord{MemberID: "ghost"}})
}
