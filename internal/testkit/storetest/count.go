package storetest

import (
	"strconv"
	"sync"
	"testing"

	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/persistence"
)

// testCount checks Count against the groups created and deleted: keys
// whose prefixes share text around ':' count under their own prefix only,
// a second Create and a stale Delete change nothing, a Delete counts down.
func testCount(t *testing.T, s persistence.Store) {
	ctx := t.Context()
	keys := overlappingKeys("st-" + random(t) + "-")
	base, _, err := s.Count(ctx, keys[0].StreamPrefix)
	if err != nil {
		t.Fatal(err)
	}
	check := func(live []group.Key) {
		t.Helper()
		for _, k := range keys {
			want := 0
			for _, l := range live {
				want += btoi(l.StreamPrefix == k.StreamPrefix)
			}
			all, inPrefix, err := s.Count(ctx, k.StreamPrefix)
			if err != nil {
				t.Fatal(err)
			}
			if all != base+len(live) || inPrefix != want {
				t.Errorf("Count(%q) = %d, %d; want %d, %d", k.StreamPrefix, all, inPrefix, base+len(live), want)
			}
		}
	}
	check(nil)
	for i, k := range keys {
		create(t, s, Group(k, memberOf(i)))
	}
	if _, err := s.Create(ctx, keys[1], persistence.Encode(Group(keys[1], "m-1"))); err == nil {
		t.Fatal("second create succeeded")
	}
	check(keys)
	if err := s.Delete(ctx, keys[1], 2); err == nil {
		t.Fatal("stale delete succeeded")
	}
	check(keys)
	if err := s.Delete(ctx, keys[1], 1); err != nil {
		t.Fatal(err)
	}
	check(append(keys[:1:1], keys[2:]...))
}

// testCountConcurrent checks that Count stays exact under concurrent
// writers: creates of distinct groups, racing creates of one group (one
// wins) and deletes, the count moving only with the writes that happened.
func testCountConcurrent(t *testing.T, s persistence.Store) {
	ctx := t.Context()
	prefix := "st-" + random(t)
	base, _, err := s.Count(ctx, prefix)
	if err != nil {
		t.Fatal(err)
	}
	const n = 16
	keys := make([]group.Key, n)
	for i := range keys {
		keys[i] = group.Key{StreamPrefix: prefix, ConsumerGroup: "cg-" + strconv.Itoa(i)}
	}
	var wg sync.WaitGroup
	for i, k := range keys {
		// Two creators per key: exactly one succeeds.
		for range 2 {
			wg.Go(func() { _, _ = s.Create(ctx, k, persistence.Encode(Group(k, memberOf(i%26)))) })
		}
	}
	wg.Wait()
	wantCount(t, s, prefix, base+n, n)
	for _, k := range keys[:n/2] {
		// Two deleters per key: exactly one succeeds.
		for range 2 {
			wg.Go(func() { _ = s.Delete(ctx, k, 1) })
		}
	}
	wg.Wait()
	wantCount(t, s, prefix, base+n/2, n/2)
}

// wantCount fails unless Count(prefix) is all, inPrefix.
func wantCount(t *testing.T, s persistence.Store, prefix string, all, inPrefix int) {
	t.Helper()
	a, p, err := s.Count(t.Context(), prefix)
	if err != nil {
		t.Fatal(err)
	}
	if a != all || p != inPrefix {
		t.Errorf("Count(%q) = %d, %d; want %d, %d", prefix, a, p, all, inPrefix)
	}
}
