package contract

import (
	"encoding/json"
	"testing"
)

// TestOneShardSetsShareStorage checks that decoded and built one-shard sets
// share the singleton storage and that appending to one leaves the others.
func TestOneShardSetsShareStorage(t *testing.T) {
	var a, b ShardSet
	if err := json.Unmarshal([]byte(`[{"shardIndex":7}]`), &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(` [ { "shardIndex" : 7 } ] `), &b); err != nil {
		t.Fatal(err)
	}
	c := NewShardSet(7)
	if &a[0] != &b[0] || &a[0] != &c[0] || cap(a) != 1 {
		t.Fatalf("one-shard sets do not share storage: %p %p %p cap %d", &a[0], &b[0], &c[0], cap(a))
	}
	grown := append(a, 8)
	if !b.Equal(NewShardSet(7)) || !grown.Equal(NewShardSet(7, 8)) || singletons[8] != 8 {
		t.Fatalf("append wrote through a shared set: b %v grown %v", b, grown)
	}
	for _, in := range []string{`[{"shardIndex":-1}]`, `[{"shardIndex":4096}]`, `[{"shardIndex":5,"x":1}]`} {
		var s ShardSet
		if err := json.Unmarshal([]byte(in), &s); err != nil || len(s) != 1 {
			t.Fatalf("%s: %v %v", in, s, err)
		}
	}
}
