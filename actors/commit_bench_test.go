package actors_test

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/redis-stream-coordinator/coordinator/actors"
	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/coordtest"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/membersim"
)

// settledCoordinator starts a coordinator on the memory store
// (internal/testkit/coordtest) with one group of members members and 10
// shards each, and heartbeats the members (membersim, in passes) until
// every one owns its full target.
func settledCoordinator(b *testing.B, groupCommit bool, members int) (*actors.System, group.Key, []*membersim.Member) {
	b.Helper()
	ctx := context.Background()
	s := group.DefaultSettings()
	s.MaxShardCount = 10 * members
	c := coordtest.Start(b, coordtest.Options{Settings: s,
		Actors: func(o *actors.Options) { o.GroupCommit = groupCommit }}).Actors
	key := group.Key{StreamPrefix: "orders", ConsumerGroup: "orders-consumer"}
	shards := 10 * members
	if _, err := c.CreateGroup(ctx, key, contract.CreateRequest{InitialShardCount: &shards, RequestedBy: "bench"}, false); err != nil {
		b.Fatal(err)
	}
	ms, err := membersim.SettleAll(members, 20, func(req *contract.HeartbeatRequest) (contract.HeartbeatResponse, error) {
		return c.Heartbeat(ctx, key, req)
	})
	if err != nil {
		b.Fatal(err)
	}
	return c, key, ms
}

// heartbeat sends m's next heartbeat through the coordinator and applies
// the answer.
func heartbeat(b *testing.B, c *actors.System, key group.Key, m *membersim.Member) contract.HeartbeatResponse {
	req := m.Request()
	resp, err := c.Heartbeat(context.Background(), key, &req)
	if err != nil {
		b.Fatal(err)
	}
	m.Apply(req, resp)
	return resp
}

// BenchmarkCoordinatorHeartbeat measures the actor path of a steady
// heartbeat (message to the group actor, domain, batch, commit on the
// memory store, reply) for a settled group of 1,000 members and 10,000
// shards: one caller at a time ("serial", batches of one) and 32 callers
// per core (group commit batches them; "no-group-commit" commits each
// alone).
func BenchmarkCoordinatorHeartbeat(b *testing.B) {
	const members, perCore = 1000, 32
	c, key, ms := settledCoordinator(b, true, members)
	b.Run("serial", func(b *testing.B) {
		i := 0
		b.ReportAllocs()
		for b.Loop() {
			heartbeat(b, c, key, ms[i])
			i = (i + 1) % members
		}
	})
	callers := perCore * runtime.GOMAXPROCS(0)
	parallel := func(c *actors.System, ms []*membersim.Member) func(b *testing.B) {
		return func(b *testing.B) {
			var next atomic.Int64
			b.ReportAllocs()
			b.SetParallelism(perCore)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				// Caller k drives members k, k+callers, …: no member is
				// used by two goroutines at once.
				first := int(next.Add(1) - 1)
				for i := first; pb.Next(); {
					heartbeat(b, c, key, ms[i])
					if i += callers; i >= members {
						i = first
					}
				}
			})
		}
	}
	b.Run("parallel", parallel(c, ms))
	c1, _, ms1 := settledCoordinator(b, false, members)
	b.Run("parallel-no-group-commit", parallel(c1, ms1))
}
