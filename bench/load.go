package bench

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// Recorder collects the outcome of every request of one load phase. It is
// safe for concurrent use.
type Recorder struct {
	Latency Histogram

	mu       sync.Mutex
	statuses map[string]int64
	errors   int64
	samples  []string
}

// maxErrorSamples bounds the error messages a phase keeps.
const maxErrorSamples = 5

// NewRecorder returns an empty recorder.
func NewRecorder() *Recorder { return &Recorder{statuses: map[string]int64{}} }

// Observe records one answered or failed request: its latency, its
// status label (a heartbeat status, "HTTP <code>" or "transport") and the
// error when it failed.
func (r *Recorder) Observe(latency time.Duration, status string, err error) {
	r.Latency.Record(latency)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.statuses[status]++
	if err != nil {
		r.errors++
		if len(r.samples) < maxErrorSamples {
			r.samples = append(r.samples, err.Error())
		}
	}
}

// Statuses returns a copy of the status counts.
func (r *Recorder) Statuses() map[string]int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]int64, len(r.statuses))
	for k, v := range r.statuses {
		out[k] = v
	}
	return out
}

// Errors returns the number of failed requests and the first messages.
func (r *Recorder) Errors() (int64, []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.errors, append([]string(nil), r.samples...)
}

// fireFunc sends one request of virtual member i, scheduled at intended,
// and records it in rec.
type fireFunc func(ctx context.Context, i int, intended time.Time, rec *Recorder)

// closedLoop runs workers goroutines for d: worker w drives members w,
// w+workers, … (< n) in turn, each request sent as soon as the previous
// one was answered. Latency is measured from the sending. Requests in
// flight at the end are awaited.
func closedLoop(ctx context.Context, n, workers int, d time.Duration, fire fireFunc) *Recorder {
	end := time.Now().Add(d)
	return closedLoopWhile(ctx, n, workers, func() bool { return time.Now().Before(end) }, fire)
}

// closedLoopWhile is closedLoop while running reports true: each worker
// asks before each request.
func closedLoopWhile(ctx context.Context, n, workers int, running func() bool, fire fireFunc) *Recorder {
	rec := NewRecorder()
	var wg sync.WaitGroup
	for w := range min(workers, n) {
		wg.Go(func() {
			for i := w; ctx.Err() == nil && running(); i += workers {
				if i >= n {
					i = w
				}
				fire(ctx, i, time.Now(), rec)
			}
		})
	}
	wg.Wait()
	return rec
}

// pass sends one request of every member 0..n-1, in order, from workers
// goroutines, each request as soon as a worker is free.
func pass(ctx context.Context, n, workers int, fire fireFunc, rec *Recorder) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(workers, n) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n && ctx.Err() == nil; i = int(next.Add(1) - 1) {
				fire(ctx, i, time.Now(), rec)
			}
		})
	}
	wg.Wait()
}

// openLoop offers rate requests per second for d: each of the n members
// sends every n/rate seconds on its own schedule, the members' phases
// spread evenly. A member still waiting for its previous answer sends its
// next request as soon as it has it; the latency is measured from the
// scheduled time, so waiting counts (no coordinated omission).
func openLoop(ctx context.Context, n int, rate float64, d time.Duration, fire fireFunc) *Recorder {
	rec := NewRecorder()
	period := time.Duration(float64(n) / rate * float64(time.Second))
	start := time.Now()
	end := start.Add(d)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			for at := start.Add(time.Duration(float64(i) / rate * float64(time.Second))); at.Before(end); at = at.Add(period) {
				if !sleepUntil(ctx, at) {
					return
				}
				fire(ctx, i, at, rec)
			}
		})
	}
	wg.Wait()
	return rec
}

// sleepUntil waits until t; it reports false when ctx ended first.
func sleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// openLoopPool is openLoop for many members on few goroutines: rate
// requests per second while running reports true, member k%n sending the
// k-th at start+k/rate (each member every n/rate seconds, the phases
// spread evenly), from workers goroutines. Each member sends one request
// at a time: a request due while the member's previous one is still in
// flight goes as soon as that one is done. The latency is measured from
// the scheduled time, so a request waiting for a worker or for its
// member counts the wait (no coordinated omission). Requests are recorded
// in rec, which others may read meanwhile. It returns once running
// reported false and the requests in flight are done.
func openLoopPool(ctx context.Context, n int, rate float64, workers int, running func() bool, fire fireFunc, rec *Recorder) {
	type due struct {
		i  int
		at time.Time
	}
	jobs := make(chan due, workers)
	busy := make([]sync.Mutex, n)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for j := range jobs {
				busy[j.i].Lock()
				fire(ctx, j.i, j.at, rec)
				busy[j.i].Unlock()
			}
		})
	}
	start := time.Now()
	for k := 0; running(); k++ {
		at := start.Add(time.Duration(float64(k) / rate * float64(time.Second)))
		if !sleepUntil(ctx, at) {
			break
		}
		jobs <- due{k % n, at}
	}
	close(jobs)
	wg.Wait()
}
