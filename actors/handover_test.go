package actors

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/eventually"
	"github.com/redis-stream-coordinator/coordinator/persistence/memory"
)

// gatedRelease holds every Release until open is closed, counting the
// releases in flight.
type gatedRelease struct {
	Ownership
	open chan struct{}

	mu            sync.Mutex
	inFlight, max int
}

func (g *gatedRelease) Release(ctx context.Context, key group.Key) error {
	g.mu.Lock()
	g.inFlight++
	g.max = max(g.max, g.inFlight)
	g.mu.Unlock()
	<-g.open
	g.mu.Lock()
	g.inFlight--
	g.mu.Unlock()
	return g.Ownership.Release(ctx, key)
}

func (g *gatedRelease) counts() (inFlight, most int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.inFlight, g.max
}

// A leaving coordinator hands its groups over concurrently, with at most
// handOverParallelism releases in flight: a shutdown does not cost one
// store round trip per group in turn, nor queue every group at once on
// the store client.
func TestLeaveHandsGroupsOverConcurrentlyBounded(t *testing.T) {
	mem := memory.New()
	na := node(t, mem, "a")
	eventually.True(t, "a sees itself", func() bool { return len(na.Live()) == 1 })
	gate := &gatedRelease{Ownership: na, open: make(chan struct{})}
	a := start(t, Options{Store: wrapStore(mem), GroupCommit: true, Ownership: gate, StoreTimeout: waitLimit})
	na.OnChange(a.HandOver)
	const groups = 4 * handOverParallelism
	for i := range groups {
		createGroup(t, a, group.Key{StreamPrefix: fmt.Sprintf("orders-%d", i), ConsumerGroup: "orders-consumer"})
	}

	na.Leave()
	eventually.True(t, "releases in flight at once", func() bool {
		n, _ := gate.counts()
		return n == handOverParallelism
	})
	close(gate.open)
	eventually.True(t, "every group handed over", func() bool { return a.Actors() == 0 })
	if _, most := gate.counts(); most != handOverParallelism {
		t.Errorf("at most %d releases in flight, want %d", most, handOverParallelism)
	}
	owners, err := mem.Owners(testCtx(t), []group.Key{{StreamPrefix: "orders-0", ConsumerGroup: "orders-consumer"}})
	if err != nil || owners[0].Coordinator != "" {
		t.Errorf("orders-0's owner after the leave: %+v, %v; want none", owners, err)
	}
}
