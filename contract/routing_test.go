package contract

import (
	"testing"

	"github.com/twmb/murmur3"
)

func TestShardForVectors(t *testing.T) {
	counts := []int{2, 3, 4, 7, 12, 20, 1000}
	for _, tc := range []struct {
		key    string
		hash   uint32
		shards []int // one per entry of counts
	}{
		{"order-123", 2913866941, []int{1, 1, 1, 6, 1, 1, 941}},
		{"a", 1009084850, []int{0, 2, 2, 4, 2, 10, 850}},
		{"", 0, []int{0, 0, 0, 0, 0, 0, 0}},
		{"abc", 3017643002, []int{0, 2, 2, 3, 2, 2, 2}},
		{"abcd", 1139631978, []int{0, 0, 2, 2, 6, 18, 978}},
		{"주문-1", 1469383368, []int{0, 0, 0, 5, 0, 8, 368}}, // UTF-8 eca3bcebacb82d31
	} {
		if got := murmur3.StringSum32(tc.key); got != tc.hash {
			t.Errorf("murmur3(%q) = %d, want %d", tc.key, got, tc.hash)
		}
		for i, n := range counts {
			if got := ShardFor(tc.key, n); got != tc.shards[i] {
				t.Errorf("ShardFor(%q, %d) = %d, want %d", tc.key, n, got, tc.shards[i])
			}
		}
	}
}

func TestShardForRehash(t *testing.T) {
	// docs/protocol.md §6.7: limit 3000000000, h0 = 3111312080 is rejected, seed1 = 4226891818,
	// h1 = 1839149687 → 339149687.
	if h0 := murmur3.StringSum32("user-42"); h0 != 3111312080 {
		t.Fatalf("h0 = %d", h0)
	}
	if seed1 := murmur3.Sum32([]byte{1, 0, 0, 0}); seed1 != 4226891818 {
		t.Fatalf("seed1 = %d", seed1)
	}
	if h1 := murmur3.SeedStringSum32(4226891818, "user-42"); h1 != 1839149687 {
		t.Fatalf("h1 = %d", h1)
	}
	if got := ShardFor("user-42", 1500000000); got != 339149687 {
		t.Fatalf("ShardFor(user-42, 1500000000) = %d, want 339149687", got)
	}
}

func TestShardForRejectsBadCount(t *testing.T) {
	for _, n := range []int{0, -1} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("ShardFor(_, %d) did not panic", n)
				}
			}()
			ShardFor("k", n)
		}()
	}
}
