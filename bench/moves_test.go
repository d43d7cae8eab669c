package bench

import "testing"

func TestMoved(t *testing.T) {
	before := Owners{0: "a", 1: "a", 2: "b"}
	after := Owners{0: "a", 1: "c", 3: "c"}
	if n := Moved(4, before, after); n != 3 { // 1 changed, 2 lost, 3 gained
		t.Errorf("moved %d, want 3", n)
	}
}

func TestMinimumMoves(t *testing.T) {
	ten := Owners{}
	for s := range 10 {
		ten[s] = []string{"a", "b"}[s%2] // a and b hold 5 each
	}
	cases := []struct {
		name string
		live []string
		want int
	}{
		{"unchanged", []string{"a", "b"}, 0},
		{"one joins", []string{"a", "b", "c"}, 3},     // quotas 4,3,3: a and b give 1 and 2
		{"two join", []string{"a", "b", "c", "d"}, 4}, // quotas 3,3,2,2
		{"one leaves", []string{"a"}, 5},              // b's shards
		{"leave and join", []string{"a", "c"}, 5},     // b's shards go to c
		{"nobody", nil, 0},                            // nothing to assign
		{"many join", []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"}, 8}, // a and b keep 1 each
	}
	for _, c := range cases {
		if got := MinimumMoves(10, ten, c.live); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
	if got := MinimumMoves(4, Owners{0: "a"}, []string{"a", "b"}); got != 3 {
		t.Errorf("unread shards: %d, want 3", got)
	}
}
