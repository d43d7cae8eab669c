package sql

import (
	"testing"

	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/storetest"
	"github.com/redis-stream-coordinator/coordinator/persistence"
)

// TestCountsFilledFromExistingGroups: tables written by a version that kept
// no counts table get one filled from their metadata rows when a store
// first creates it, and the counts move with later creates.
func TestCountsFilledFromExistingGroups(t *testing.T) {
	ctx := t.Context()
	s := newStore(t)
	keys := []group.Key{{StreamPrefix: "a", ConsumerGroup: "x"}, {StreamPrefix: "a", ConsumerGroup: "y"}, {StreamPrefix: "b", ConsumerGroup: "x"}}
	for _, k := range keys {
		if _, err := s.Create(ctx, k, persistence.Encode(storetest.Group(k))); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.exec(ctx, "DROP TABLE "+s.prefix+CountsTable); err != nil {
		t.Fatal(err)
	}
	later := newStoreAt(t, dsn, s.prefix)
	defer later.Close()
	want := func(prefix string, all, inPrefix int) {
		t.Helper()
		a, p, err := later.Count(ctx, prefix)
		if err != nil || a != all || p != inPrefix {
			t.Errorf("Count(%q) = %d, %d, %v; want %d, %d", prefix, a, p, err, all, inPrefix)
		}
	}
	want("a", 3, 2)
	want("b", 3, 1)
	want("c", 3, 0)
	k := group.Key{StreamPrefix: "c", ConsumerGroup: "x"}
	if _, err := later.Create(ctx, k, persistence.Encode(storetest.Group(k))); err != nil {
		t.Fatal(err)
	}
	want("c", 4, 1)
}
