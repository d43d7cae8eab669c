package eventually

import (
	"fmt"
	"testing"
)

func TestTrueReturnsOnceTheConditionHolds(t *testing.T) {
	n := 0
	True(t, "the third poll", func() bool { n++; return n == 3 })
	if n != 3 {
		t.Fatalf("polled %d times, want 3", n)
	}
}

// recorder records Fatalf instead of ending the test.
type recorder struct {
	testing.TB
	failure string
}

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(format string, args ...any) { r.failure = fmt.Sprintf(format, args...) }

func TestPollFailsAfterTheLimit(t *testing.T) {
	r := &recorder{TB: t}
	n := 0
	poll(r, 0, "never", func() bool { n++; return false })
	if r.failure != "timed out waiting for never" || n == 0 {
		t.Fatalf("failure %q after %d polls", r.failure, n)
	}
}
