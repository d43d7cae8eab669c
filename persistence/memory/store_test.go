package memory

import (
	"context"
	"errors"
	"testing"

	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/persistence"
)

var key = group.Key{StreamPrefix: "orders", ConsumerGroup: "billing"}

// TestCopiesBytes checks that neither the caller's input nor a loaded
// document aliases the stored bytes.
func TestCopiesBytes(t *testing.T) {
	ctx := context.Background()
	s := New()
	in := persistence.Document{Aggregate: []byte(`{"a":1}`), Members: map[string][]byte{"m": []byte(`{"m":1}`)}}
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

func TestRevisionsAndErrors(t *testing.T) {
	ctx := context.Background()
	s := New()
	if _, err := s.Commit(ctx, key, 1, persistence.Mutation{}); !errors.Is(err, persistence.ErrNotFound) {
		t.Fatalf("commit on missing group: %v", err)
	}
	if rev, err := s.Create(ctx, key, persistence.Document{Aggregate: []byte(`{}`)}); err != nil || rev != 1 {
		t.Fatalf("create: %d %v", rev, err)
	}
	if _, err := s.Create(ctx, key, persistence.Document{}); !errors.Is(err, persistence.ErrAlreadyExists) {
		t.Fatalf("second create: %v", err)
	}
	if _, err := s.Commit(ctx, key, 2, persistence.Mutation{}); !errors.Is(err, persistence.ErrConflict) {
		t.Fatalf("stale commit: %v", err)
	}
	if rev, err := s.Commit(ctx, key, 1, persistence.Mutation{}); err != nil || rev != 2 {
		t.Fatalf("commit: %d %v", rev, err)
	}
	if err := s.Delete(ctx, key, 1); !errors.Is(err, persistence.ErrConflict) {
		t.Fatalf("stale delete: %v", err)
	}
	if err := s.Delete(ctx, key, 2); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Revision(ctx, key); !errors.Is(err, persistence.ErrNotFound) {
		t.Fatalf("revision after delete: %v", err)
	}
}
