package group_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/group/assignor"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/grouptest"
)

// settledGroup builds, from records, a STABLE group of members members
// reading shards shards between them (current = granted = target, as
// after every member acknowledged), every lease an hour away. It returns
// the group and each member's steady heartbeat.
func settledGroup(b *testing.B, s group.Settings, members, shards int) (*group.Group, []contract.HeartbeatRequest) {
	b.Helper()
	g := group.New()
	now := grouptest.Start
	key := group.Key{StreamPrefix: "orders", ConsumerGroup: "orders-consumer"}
	if err := g.Create(now, s, key, contract.CreateRequest{InitialShardCount: &shards, RequestedBy: "bench"}).Err; err != nil {
		b.Fatal(err)
	}
	ids := make([]string, members)
	for i := range ids {
		ids[i] = fmt.Sprintf("member-%05d", i)
	}
	targets, _ := assignor.Assign(shards, ids, nil)
	const epoch = 2
	reqs := make([]contract.HeartbeatRequest, members)
	for i, id := range ids {
		set := contract.NewShardSet(targets[id]...)
		g.Apply(group.TargetRecord{MemberID: id, Shards: set})
		g.Apply(group.MemberRecord{Member: &group.Member{
			MemberID: id, MemberName: id, State: group.MemberActive, MemberEpoch: epoch, MetadataVersion: 1,
			RuntimeMaxConcurrency: 1, CurrentAssignment: set, GrantedAssignment: set,
			LastHeartbeatAt: now, MemberLeaseExpiresAt: now.Add(time.Hour), RebalanceTimeoutMs: s.RebalanceTimeout.Milliseconds(),
		}})
		reqs[i] = contract.HeartbeatRequest{
			ProtocolVersion: 1, RequestID: id + "-1", MemberID: id, PathMemberID: id, MemberEpoch: epoch, MetadataVersion: 1,
			RuntimeConsumerCapacity: &contract.Capacity{RuntimeMaxConcurrency: 1, AvailableConcurrency: 1}, OwnedShards: set,
		}
	}
	meta := g.Meta
	meta.GroupEpoch, meta.AssignmentEpoch, meta.State = epoch, epoch, group.GroupStable
	g.Apply(group.MetaRecord{Meta: meta})
	return g, reqs
}

// BenchmarkHeartbeatSteady10k measures the domain's heartbeat (docs/protocol.md §4.2) of a
// settled member of a STABLE group of 10,000 members and 100,000 shards:
// the work the group actor does per steady heartbeat besides the commit.
func BenchmarkHeartbeatSteady10k(b *testing.B) {
	const members, shards = 10_000, 100_000
	s := group.DefaultSettings()
	s.MaxShardCount = shards
	g, reqs := settledGroup(b, s, members, shards)
	now := grouptest.Start
	// A round before measuring: each member's first answer after settling
	// stores the grant epochs of its shards (its fencing tokens).
	for i := range reqs {
		g.Heartbeat(now, s, &reqs[i])
	}
	now++
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		res := g.Heartbeat(now, s, &reqs[i])
		if res.Answer.Status != contract.StatusOK || len(res.Records) != 1 {
			b.Fatalf("member %d: %s with %d records", i, res.Answer.Status, len(res.Records))
		}
		if i = (i + 1) % members; i == 0 {
			now++ // every member heartbeats once per fake millisecond: no lease expires
		}
	}
}
