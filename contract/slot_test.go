package contract

import "testing"

func TestCRC16CheckValue(t *testing.T) {
	if got := crc16("123456789"); got != 0x31C3 {
		t.Fatalf("crc16(123456789) = %#04x, want 0x31c3", got)
	}
}

func TestSlot(t *testing.T) {
	for _, tc := range []struct {
		key  string
		want int
	}{
		// docs/protocol.md §6.7 vectors.
		{"foo", 12182},
		{"create-order:0", 9192},
		{"create-order:1", 13257},
		{"create-order:2", 938},
		{"create-order:3", 5003},
		{"orders:0", 8578},
		{"orders:1", 12707},
		// Hash-tag rule: only the first non-empty {...} is hashed.
		{"{foo}bar", 12182},
		{"x{foo}:7", 12182},
		{"{foo}{bar}", 12182},
		{"{}foo", slotOfWholeKey("{}foo")},
		{"foo{", slotOfWholeKey("foo{")},
		{"foo}{", slotOfWholeKey("foo}{")},
		{"a{}{foo}", slotOfWholeKey("a{}{foo}")},
	} {
		if got := Slot(tc.key); got != tc.want {
			t.Errorf("Slot(%q) = %d, want %d", tc.key, got, tc.want)
		}
	}
}

func slotOfWholeKey(key string) int { return int(crc16(key)) % SlotCount }

func TestStreamKeyAndPattern(t *testing.T) {
	if got := StreamKey("create-order", 3); got != "create-order:3" {
		t.Errorf("StreamKey = %q", got)
	}
	if got := KeyPattern("create-order"); got != "create-order:{shardIndex}" {
		t.Errorf("KeyPattern = %q", got)
	}
}
