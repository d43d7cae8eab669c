package group

import "testing"

// TestHashTagNamesOneGroup: every valid key round-trips through its hash
// tag, and the keys whose tags used to coincide are told apart by the
// consumer group rule.
func TestHashTagNamesOneGroup(t *testing.T) {
	for _, k := range []Key{{"orders", "workers"}, {"ka:kb", "kc"}, {"ka", "kb"}, {"ka::", "kb"}, {"a:b:c:d", "e"}} {
		if err := ValidateName("consumerGroup", k.ConsumerGroup); err != nil {
			t.Fatalf("%v: %v", k, err)
		}
		if got, ok := KeyFromHashTag(k.HashTag()); !ok || got != k {
			t.Errorf("KeyFromHashTag(%q) = %v, %v; want %v", k.HashTag(), got, ok, k)
		}
	}
	if ValidateName("consumerGroup", "kb:kc") == nil {
		t.Error("consumerGroup kb:kc accepted: stream ka + group kb:kc would share {ka:kb:kc} with stream ka:kb + group kc")
	}
	if ValidateName("streamPrefix", "ka:kb") != nil || ValidateName("memberId", "m:1") != nil {
		t.Error("':' refused outside consumer group names")
	}
	for _, bad := range []string{"", "ab", "{ab", "ab}", "{ab}"} {
		if _, ok := KeyFromHashTag(bad); ok {
			t.Errorf("KeyFromHashTag(%q) accepted", bad)
		}
	}
}
