package contract

import (
	"math"
	"testing"
)

// TestInstantBeyondInt64: an epoch number no int64 of milliseconds holds
// reads as the extreme instant (which the heartbeat bounds refuse), on
// every platform.
func TestInstantBeyondInt64(t *testing.T) {
	for in, want := range map[string]Instant{
		"1e300":  Instant(math.MaxInt64),
		"-1e300": Instant(math.MinInt64),
		"1e19":   Instant(math.MaxInt64),
		"1e12":   Instant(1e12),
		"1.5e9":  Instant(1.5e12),
	} {
		var got Instant
		if err := got.UnmarshalJSON([]byte(in)); err != nil || got != want {
			t.Errorf("%s: %d, %v; want %d", in, got, err, want)
		}
	}
}
