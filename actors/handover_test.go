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

// The coordinator that creates a group is its holder; the one it is
// handed over to records one handover entry from the first to itself, in
// one write at its first request, and none at its next requests or once
// its actor is started again (a restart of the same coordinator id).
func TestHandOverRecordsOneHistoryEntry(t *testing.T) {
	mem := memory.New()
	na, nb := node(t, mem, "a"), node(t, mem.Handle(), "b")
	eventually.True(t, "both nodes see each other", func() bool { return len(na.Live()) == 2 && len(nb.Live()) == 2 })
	key := placedOn(t, na, "a")
	sa, sb := wrapStore(mem), wrapStore(mem)
	a := start(t, Options{Store: sa, GroupCommit: true, Ownership: na})
	na.OnChange(a.HandOver)
	createGroup(t, a, key)
	resp := heartbeat(t, a, key, join("m-1"))
	if g := sa.stored(t, key); g.Coordinator != "a" {
		t.Fatalf("holder after the create: %q, want a", g.Coordinator)
	}
	entries := len(sa.stored(t, key).History)

	na.Leave()
	eventually.True(t, "a handed its group over", func() bool { return a.Actors() == 0 })
	if err := na.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	eventually.True(t, "the group is placed on b", func() bool { return nb.PlacedHere(key.StreamPrefix) })
	b := start(t, Options{Store: sb, GroupCommit: true, Ownership: nb})
	resp = heartbeat(t, b, key, next("m-1", resp))
	g := sb.stored(t, key)
	if g.Coordinator != "b" || len(g.History) != entries+1 {
		t.Fatalf("after b's takeover: holder %q, history %+v; want b and one entry more", g.Coordinator, g.History)
	}
	if h := g.History[entries]; h.Cause != group.CauseHandover || h.From != "a" || h.To != "b" || !h.GroupLevel() || h.Epoch != g.GroupEpoch {
		t.Fatalf("entry %+v, want a group-level handover a>b at epoch %d", h, g.GroupEpoch)
	}
	commits := sb.commits()
	heartbeat(t, b, key, next("m-1", resp))
	if err := b.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	b2 := start(t, Options{Store: sb, GroupCommit: true, Ownership: nb})
	heartbeat(t, b2, key, next("m-1", resp))
	if g := sb.stored(t, key); sb.commits() != commits || len(g.History) != entries+1 {
		t.Fatalf("b's later requests and restart: %d commits, history %+v; want none, and the same history", sb.commits()-commits, g.History)
	}
}
