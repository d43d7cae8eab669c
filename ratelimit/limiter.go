package ratelimit

import (
	"errors"
	"math"
	"sync"
	"time"
)

// Limiter grants at most permits per key in a fixed window that starts
// at the key's first request (not at a wall-clock boundary). It is safe for
// concurrent use.
//
// Memory is bounded by the keys seen within roughly two windows: every call
// made at least one window after the previous sweep deletes the expired
// windows, so the cost is amortised O(1) per call.
type Limiter struct {
	permits int
	window  time.Duration

	mu        sync.Mutex
	windows   map[string]fixedWindow
	nextSweep time.Time
}

type fixedWindow struct {
	end   time.Time // start + window
	count int       // permits granted in this window
}

// New returns a limiter granting permits per window. permits ≤ 0 rejects
// every request. window must be positive.
func New(permits int, window time.Duration) (*Limiter, error) {
	if window <= 0 {
		return nil, errors.New("rate limit window must be positive")
	}
	return &Limiter{permits: permits, window: window, windows: map[string]fixedWindow{}}, nil
}

// Exhausted reports, without taking a permit, whether Allow(key, now)
// would refuse, and then the time until the key's window ends.
func (l *Limiter) Exhausted(key string, now time.Time) (exhausted bool, retryAfter time.Duration) {
	if l.permits <= 0 {
		return true, l.window
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	w, found := l.windows[key]
	if !found || !now.Before(w.end) || w.count < l.permits {
		return false, 0
	}
	return true, min(w.end.Sub(now), l.window)
}

// Allow takes one permit for key at now. It returns ok=true when granted;
// otherwise retryAfter is the time until the key's window ends (in
// (0, window]), or the whole window when permits ≤ 0. Refused requests do not
// count. A request at or after the window's end opens a new window at now.
func (l *Limiter) Allow(key string, now time.Time) (ok bool, retryAfter time.Duration) {
	if l.permits <= 0 {
		return false, l.window
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sweep(now)
	w, found := l.windows[key]
	if !found || !now.Before(w.end) {
		w = fixedWindow{end: now.Add(l.window)}
	}
	if w.count >= l.permits {
		// Clamped for callers whose clock steps backwards.
		return false, min(w.end.Sub(now), l.window)
	}
	w.count++
	l.windows[key] = w
	return true, 0
}

// sweep deletes expired windows at most once per window length.
func (l *Limiter) sweep(now time.Time) {
	if now.Before(l.nextSweep) {
		return
	}
	for key, w := range l.windows {
		if !now.Before(w.end) {
			delete(l.windows, key)
		}
	}
	l.nextSweep = now.Add(l.window)
}

// Key builds the limiter key "<principal>:<P>:<G>"; a blank consumerGroup
// (stream-level mutations such as POST /streams/{P} and /streams/{P}/scale)
// becomes "*".
func Key(principal, streamPrefix, consumerGroup string) string {
	if consumerGroup == "" {
		consumerGroup = "*"
	}
	return principal + ":" + streamPrefix + ":" + consumerGroup
}

// RetryAfterSeconds formats a retry delay for the Retry-After header:
// max(1, ceil(seconds)).
func RetryAfterSeconds(retryAfter time.Duration) int64 {
	return max(1, int64(math.Ceil(retryAfter.Seconds())))
}
