package group

import "testing"

// TestHashTagNamesOneGroup: every valid key round-trips through its hash
// tag, and the keys whose tags used to coincide are told apart by the
// consumer group rule.
func TestHashTagNamesOneGroup(t *testing.T) {
	for _, k := range []Key{
		{"orders", "workers"}, {"ka:kb", "kc"}, {"ka", "kb"}, {"ka::", "kb"}, {"a:b:c:d", "e"},
		{"orders", "orders"}, {"ka:kb", "ka:kb"}, {"ka:kb:ka", "kc"}, {":", ":"},
	} {
		if err := ValidateKey(k); err != nil {
			t.Fatalf("%v: %v", k, err)
		}
		if got, ok := KeyFromHashTag(k.HashTag()); !ok || got != k {
			t.Errorf("KeyFromHashTag(%q) = %v, %v; want %v", k.HashTag(), got, ok, k)
		}
	}
	if ValidateKey(Key{"ka", "kb:kc"}) == nil {
		t.Error("consumerGroup kb:kc accepted: stream ka + group kb:kc would share {ka:kb:kc} with stream ka:kb + group kc")
	}
	if ValidateKey(Key{"ka:kb:ka", "kb"}) == nil {
		t.Error("ka:kb:ka + kb accepted: {ka:kb:ka:kb} is the stream-level group of ka:kb")
	}
	if ValidateName("memberId", "m:1") != nil {
		t.Error("':' refused in a member id")
	}
	for _, bad := range []string{"", "ab", "{ab", "ab}", "{ab}", "a:b}"} {
		if _, ok := KeyFromHashTag(bad); ok {
			t.Errorf("KeyFromHashTag(%q) accepted", bad)
		}
	}
}
