package streams

import (
	"math"
	"testing"
)

// An id's millisecond part reaches the API as an int64: the ids above
// MaxInt64 that Redis accepts saturate instead of turning negative.
func TestEntryIDTimestampMs(t *testing.T) {
	for _, c := range []struct {
		id   string
		want int64
	}{
		{"0-1", 0},
		{"1700000000000-5", 1700000000000},
		{"9223372036854775807-0", math.MaxInt64},
		{"9223372036854775808-0", math.MaxInt64},
		{"18446744073709551615-18446744073709551615", math.MaxInt64},
	} {
		e, err := parseID(c.id)
		if err != nil {
			t.Fatalf("parseID(%q): %v", c.id, err)
		}
		if got := e.timestampMs(); got != c.want {
			t.Errorf("parseID(%q).timestampMs() = %d, want %d", c.id, got, c.want)
		}
	}
}
