package eventually

import (
	"testing"
	"time"
)

// Limit is how long True polls before it fails the test. It is generous on
// purpose: a loaded machine must not fail a correct test.
const Limit = 2 * time.Minute

// Polling starts every minPause and backs off to every maxPause, so that
// quick conditions are seen at once and slow ones cost little CPU; a pause
// is never shorter than the last poll took, so that an expensive condition
// keeps at most half a core busy.
const (
	minPause = time.Millisecond
	maxPause = 50 * time.Millisecond
)

// True polls cond until it holds. After Limit it fails t with "timed out
// waiting for <what>". cond runs on the caller's goroutine; it may call
// t.Fatal.
func True(t testing.TB, what string, cond func() bool) {
	t.Helper()
	poll(t, Limit, what, cond)
}

func poll(t testing.TB, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for pause := minPause; ; pause = min(2*pause, maxPause) {
		start := time.Now()
		if cond() {
			return
		}
		if start.After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
			return
		}
		time.Sleep(max(pause, time.Since(start)))
	}
}
