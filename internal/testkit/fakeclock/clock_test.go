package fakeclock

import (
	"sync"
	"testing"
	"time"
)

var t0 = time.Date(2026, 5, 21, 0, 0, 0, 0, time.UTC)

func TestNowStandsStillUntilMoved(t *testing.T) {
	c := New(t0)
	if got := c.Now(); !got.Equal(t0) {
		t.Fatalf("Now = %v, want %v", got, t0)
	}
	if got := c.Now(); !got.Equal(t0) {
		t.Fatalf("second Now = %v, want %v", got, t0)
	}
	c.Advance(3 * time.Second)
	if got := c.Now(); !got.Equal(t0.Add(3 * time.Second)) {
		t.Fatalf("after Advance: %v", got)
	}
	later := t0.Add(time.Hour)
	c.Set(later)
	if got := c.Now(); !got.Equal(later) {
		t.Fatalf("after Set: %v", got)
	}
}

func TestStepMovesEveryReading(t *testing.T) {
	c := New(t0)
	c.SetStep(7 * time.Millisecond)
	if got := c.Peek(); !got.Equal(t0) {
		t.Fatalf("Peek = %v, want %v", got, t0)
	}
	if got := c.Now(); !got.Equal(t0) {
		t.Fatalf("first Now = %v, want %v", got, t0)
	}
	if got := c.Now(); !got.Equal(t0.Add(7 * time.Millisecond)) {
		t.Fatalf("second Now = %v", got)
	}
	if got := c.Peek(); !got.Equal(t0.Add(14 * time.Millisecond)) {
		t.Fatalf("Peek after two readings = %v", got)
	}
}

func TestConcurrentUse(t *testing.T) {
	c := New(t0)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				c.Advance(time.Millisecond)
				c.Now()
			}
		})
	}
	wg.Wait()
	if got := c.Now(); !got.Equal(t0.Add(800 * time.Millisecond)) {
		t.Fatalf("Now = %v, want %v", got, t0.Add(800*time.Millisecond))
	}
}
