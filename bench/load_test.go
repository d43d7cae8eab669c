package bench

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// exclusive is a fireFunc that fails the test when one member is driven by
// two goroutines at once, and counts the requests per member.
type exclusive struct {
	t      *testing.T
	mu     sync.Mutex
	busy   map[int]bool
	fired  map[int]int
	starts map[int][]time.Time
}

func newExclusive(t *testing.T) *exclusive {
	return &exclusive{t: t, busy: map[int]bool{}, fired: map[int]int{}, starts: map[int][]time.Time{}}
}

func (e *exclusive) fire(_ context.Context, i int, intended time.Time, rec *Recorder) {
	e.mu.Lock()
	if e.busy[i] {
		e.t.Errorf("member %d driven concurrently", i)
	}
	e.busy[i] = true
	e.fired[i]++
	e.starts[i] = append(e.starts[i], intended)
	e.mu.Unlock()
	time.Sleep(time.Millisecond)
	e.mu.Lock()
	e.busy[i] = false
	e.mu.Unlock()
	rec.Observe(time.Millisecond, "OK", nil)
}

func TestClosedLoopDrivesEveryMemberExclusively(t *testing.T) {
	e := newExclusive(t)
	rec := closedLoop(context.Background(), 10, 3, 50*time.Millisecond, e.fire)
	total := 0
	for i, n := range e.fired {
		if i < 0 || i >= 10 {
			t.Errorf("member %d fired", i)
		}
		total += n
	}
	if n := rec.Latency.Count(); n != rec.Statuses()["OK"] || n != int64(total) {
		t.Errorf("count %d statuses %v, fired %d", n, rec.Statuses(), total)
	}
}

func TestOpenLoopKeepsEachMembersSchedule(t *testing.T) {
	e := newExclusive(t)
	openLoop(context.Background(), 4, 200, 100*time.Millisecond, e.fire) // every member every 20ms
	e.checkSchedule()
}

// checkSchedule checks that members 0..3 were each scheduled 5 times,
// every 20ms, member i 5ms·i after member 0.
func (e *exclusive) checkSchedule() {
	for i := range 4 {
		ts := e.starts[i]
		slices.SortFunc(ts, time.Time.Compare) // a pool may start them out of order
		if len(ts) != 5 {
			e.t.Fatalf("member %d fired %d times, want 5", i, len(ts))
		}
		if phase := ts[0].Sub(e.starts[0][0]); phase != time.Duration(i)*5*time.Millisecond {
			e.t.Errorf("member %d scheduled %v after member 0", i, phase)
		}
		for k := 1; k < len(ts); k++ {
			if d := ts[k].Sub(ts[k-1]); d != 20*time.Millisecond {
				e.t.Errorf("member %d period %v", i, d)
			}
		}
	}
}

func TestOpenLoopPoolKeepsEachMembersSchedule(t *testing.T) {
	e := newExclusive(t)
	var sent atomic.Int64
	rec := NewRecorder()
	openLoopPool(context.Background(), 4, 200, 2, func() bool { return sent.Add(1) <= 20 }, e.fire, rec) // every member every 20ms
	if n := rec.Latency.Count(); n != 20 {
		t.Fatalf("%d requests, want 20", n)
	}
	e.checkSchedule()
}

func TestRecorderKeepsFewErrorSamples(t *testing.T) {
	r := NewRecorder()
	for range 8 {
		r.Observe(time.Millisecond, "transport", errors.New("refused"))
	}
	r.Observe(time.Millisecond, "OK", nil)
	n, samples := r.Errors()
	if n != 8 || len(samples) != maxErrorSamples || r.Statuses()["transport"] != 8 {
		t.Errorf("errors %d samples %v statuses %v", n, samples, r.Statuses())
	}
}
