package memory

import (
	"context"
	"testing"

	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/storetest"
	"github.com/redis-stream-coordinator/coordinator/persistence"
)

func TestContract(t *testing.T) {
	storetest.Run(t, func(*testing.T) persistence.Store { return New() }, storetest.Options{})
}

var key = group.Key{StreamPrefix: "orders", ConsumerGroup: "billing"}

// TestCopiesBytes checks that neither the caller's input nor a loaded
// document aliases the stored bytes.
func TestCopiesBytes(t *testing.T) {
	ctx := context.Background()
	s := New()
	in := persistence.Document{
		Aggregate:     []byte(`{"a":1}`),
		Members:       map[string][]byte{"m": []byte(`{"m":1}`)},
		SchemaVersion: persistence.SchemaVersion,
		LayoutVersion: persistence.LayoutVersion,
	}
	if _, err := s.Create(ctx, key, in); err != nil {
		t.Fatal(err)
	}
	in.Aggregate[0] = 'X'
	in.Members["m"][0] = 'X'
	out, _, err := s.Load(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	out.Aggregate[1] = 'Y'
	out.Members["m"][1] = 'Y'
	delete(out.Members, "m")
	put := []byte(`{"m":2}`)
	if _, err := s.Commit(ctx, key, 1, persistence.Mutation{PutMembers: map[string][]byte{"n": put}}); err != nil {
		t.Fatal(err)
	}
	put[0] = 'X'
	got, rev, err := s.Load(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if rev != 2 || string(got.Aggregate) != `{"a":1}` || string(got.Members["m"]) != `{"m":1}` || string(got.Members["n"]) != `{"m":2}` {
		t.Fatalf("stored data changed through an alias: rev %d, %s, %q", rev, got.Aggregate, got.Members)
	}
}

func TestClusterContract(t *testing.T) {
	storetest.RunCluster(t, func(*testing.T) (a, b storetest.ClusterStore) {
		s := New()
		return s, s.Handle()
	}, storetest.ClusterOptions{Released: func(_ *testing.T, s storetest.ClusterStore, key group.Key) {
		m := s.(*Store)
		m.mu.Lock()
		defer m.mu.Unlock()
		m.owners[key] = persistence.Owner{Epoch: 1}
	}})
}
