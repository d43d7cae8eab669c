package storetest

import (
	"maps"
	"slices"
	"testing"

	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/persistence"
)

// overlappingKeys are valid group keys (group.ValidateKey) whose prefix
// and group names share text around ':' under a common unique start p:
// no two may share storage (issue 21, defect 3: the Redis key {P:G} of
// (a:b, c) and of (a, b:c) was one record).
func overlappingKeys(p string) []group.Key {
	return []group.Key{
		{StreamPrefix: p + "ka:kb", ConsumerGroup: "kc"},
		{StreamPrefix: p + "ka", ConsumerGroup: "kb"},
		{StreamPrefix: p + "ka", ConsumerGroup: "kb-kc"},
		{StreamPrefix: p + "ka:kb:kc", ConsumerGroup: "kd"},
		{StreamPrefix: p + "ka:", ConsumerGroup: "kb"},
		{StreamPrefix: p + "ka::", ConsumerGroup: "kb"},
		{StreamPrefix: p + "ka:kb", ConsumerGroup: p + "ka:kb"},
		{StreamPrefix: p + "ka", ConsumerGroup: p + "ka"},
	}
}

// testDistinctKeys creates one group per overlapping key, each with its
// own member, and checks that every key loads its own group, that List
// names each once, and that deleting one leaves the others intact.
func testDistinctKeys(t *testing.T, s persistence.Store) {
	ctx := t.Context()
	keys := overlappingKeys("st-" + random(t) + "-")
	for i, k := range keys {
		if err := group.ValidateKey(k); err != nil {
			t.Fatalf("fixture %v: %v", k, err)
		}
		if _, err := s.Create(ctx, k, persistence.Encode(Group(k, memberOf(i)))); err != nil {
			t.Fatalf("create %v: %v", k, err)
		}
	}
	check := func(live []group.Key) {
		t.Helper()
		for _, k := range live {
			_, g, _ := load(t, s, k)
			i := slices.Index(keys, k)
			if g.Key() != k || g.Members[memberOf(i)] == nil || len(g.Members) != 1 {
				t.Errorf("load %v: group %v with members %v, want its own member %s", k, g.Key(), slices.Sorted(maps.Keys(g.Members)), memberOf(i))
			}
		}
		listed, err := s.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			if n, want := count(listed, k), btoi(slices.Contains(live, k)); n != want {
				t.Errorf("List names %v %d times, want %d", k, n, want)
			}
		}
	}
	check(keys)
	deleted := keys[0]
	if err := s.Delete(ctx, deleted, 1); err != nil {
		t.Fatal(err)
	}
	check(keys[1:])
}

func memberOf(i int) string { return "m-" + string(rune('a'+i)) }

func count(keys []group.Key, k group.Key) int {
	n := 0
	for _, x := range keys {
		if x == k {
			n++
		}
	}
	return n
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
