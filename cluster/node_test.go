package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/redis-stream-coordinator/coordinator/cluster"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/eventually"
	"github.com/redis-stream-coordinator/coordinator/persistence/memory"
)

func newNode(t *testing.T, store cluster.Store, id string) *cluster.Node {
	t.Helper()
	n, err := cluster.New(cluster.Options{Store: store, ID: id, URL: "http://" + id + ":8080",
		LeaseTTL: time.Second, RenewInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// Two nodes see each other, place every stream on exactly one of them,
// and a node acquires only what is placed on it, or what the node it is
// placed on forwarded. Leaving moves every stream to the other node.
func TestPlacementAndAcquire(t *testing.T) {
	store := memory.New()
	a, b := newNode(t, store, "a"), newNode(t, store.Handle(), "b")
	a.Start(t.Context())
	b.Start(t.Context())
	t.Cleanup(func() { _ = a.Stop(context.Background()); _ = b.Stop(context.Background()) })
	eventually.True(t, "both live on both", func() bool { return len(a.Live()) == 2 && len(b.Live()) == 2 })

	var onA group.Key
	for i := range 100 {
		prefix := fmt.Sprintf("s-%d", i)
		pa, _ := a.Placed(prefix)
		pb, _ := b.Placed(prefix)
		if pa.ID != pb.ID || a.PlacedHere(prefix) == b.PlacedHere(prefix) {
			t.Fatalf("%s placed on %s by a and %s by b", prefix, pa.ID, pb.ID)
		}
		if pa.ID == "a" {
			onA = group.Key{StreamPrefix: prefix, ConsumerGroup: "g"}
		}
	}
	if onA.StreamPrefix == "" {
		t.Fatal("no stream placed on a among 100")
	}
	var no *cluster.NotOwnerError
	if _, err := b.Acquire(t.Context(), onA, ""); !errors.As(err, &no) || no.Owner.ID != "a" || no.Owner.URL != "http://a:8080" {
		t.Fatalf("b acquires a's group: %v, want NotOwnerError naming a", err)
	}
	if epoch, err := a.Acquire(t.Context(), onA, ""); err != nil || epoch != 1 {
		t.Fatalf("a acquires its group: %d, %v", epoch, err)
	}
	if _, err := b.Acquire(t.Context(), onA, "a"); !errors.As(err, &no) || no.Owner.ID != "a" {
		t.Fatalf("b acquires a group a still owns: %v, want NotOwnerError naming a", err)
	}

	a.Leave()
	if a.Serving() || a.PlacedHere(onA.StreamPrefix) {
		t.Fatal("a leaving still serves or still has streams placed on it")
	}
	if err := a.Release(t.Context(), onA); err != nil {
		t.Fatal(err)
	}
	if epoch, err := b.Acquire(t.Context(), onA, "a"); err != nil || epoch != 2 {
		t.Fatalf("b takes the group a forwarded after its release: %d, %v; want epoch 2", epoch, err)
	}
	v, err := b.View(t.Context())
	if err != nil || len(v.Coordinators) != 2 {
		t.Fatalf("view %+v, %v", v, err)
	}
}

// A node serves only while its registry lease cannot have ended: a second
// run of the same id waits for the first's lease, and the first stops
// serving once it can no longer renew.
func TestServingFollowsTheLease(t *testing.T) {
	store := memory.New()
	first := newNode(t, store, "c")
	first.Start(t.Context())
	if !first.Serving() {
		t.Fatal("a registered node does not serve")
	}
	second := newNode(t, store.Handle(), "c")
	second.Start(t.Context())
	t.Cleanup(func() { _ = second.Stop(context.Background()) })
	if second.Serving() {
		t.Fatal("a second run of a live id serves")
	}
	if err := first.Stop(context.Background()); err != nil { // deregisters
		t.Fatal(err)
	}
	if first.Serving() {
		t.Fatal("a stopped node serves")
	}
	eventually.True(t, "the second run registered", second.Serving)
}
