package streams

import (
	"math"
	"slices"
	"sync"
	"time"
)

// RateKey identifies the series a RateTracker keeps: one shard of one
// consumer group.
type RateKey struct {
	Prefix string
	Group  string
	Shard  int
}

// RateTracker turns successive observations of a shard's stream length and
// lag into produced and consumed messages per second (seed, docs/protocol.md §2.7). It keeps
// the latest sample per RateKey, 32 bytes per shard in one slice per
// group (no per-shard keys or pointers: 160,000 shards take about 5 MB),
// and is safe for concurrent use.
type RateTracker struct {
	mu sync.Mutex
	// groups holds each group's samples indexed by shard.
	groups map[rateGroup][]rateSample
}

type rateGroup struct{ prefix, group string }

// rateSample is one shard's latest sample; the zero value is "none yet".
type rateSample struct {
	// at is the sample's time in Unix nanoseconds.
	at, length, lag int64
	seen, lagKnown  bool
}

// NewRateTracker returns an empty RateTracker.
func NewRateTracker() *RateTracker {
	return &RateTracker{groups: map[rateGroup][]rateSample{}}
}

// Forget drops the samples of every group whose latest sample was taken
// before before, so that a group deleted, moved to another coordinator or
// read once costs no memory here for good; its next sample is a first.
func (t *RateTracker) Forget(before time.Time) {
	cut := before.UnixNano()
	t.mu.Lock()
	defer t.mu.Unlock()
	for g, samples := range t.groups {
		if !slices.ContainsFunc(samples, func(s rateSample) bool { return s.seen && s.at >= cut }) {
			delete(t.groups, g)
		}
	}
}

// Observe records the sample (length, lag) of key taken at time at and
// returns the rates since the previous sample of key, rounded to 2 decimals:
//
//	produced = max(0, Δlength) / Δs
//	consumed = max(0, Δlength − Δlag) / Δs   (nil if either lag is unknown)
//
// Negative lengths and lags count as 0; Δs is measured on the wall clock.
// Both rates are nil on the first sample of key, and when at is not after
// the previous sample's time. The sample replaces the previous one in
// every case. A negative shard is not recorded (both rates nil).
func (t *RateTracker) Observe(key RateKey, at time.Time, length int64, lag *int64) (produced, consumed *float64) {
	if key.Shard < 0 {
		return nil, nil
	}
	current := rateSample{at: at.UnixNano(), length: max(length, 0), seen: true}
	if lag != nil {
		current.lag, current.lagKnown = max(*lag, 0), true
	}
	g := rateGroup{key.Prefix, key.Group}
	t.mu.Lock()
	samples := t.groups[g]
	if key.Shard >= len(samples) {
		samples = append(samples, make([]rateSample, key.Shard+1-len(samples))...)
		t.groups[g] = samples
	}
	previous := samples[key.Shard]
	samples[key.Shard] = current
	t.mu.Unlock()

	seconds := float64(current.at-previous.at) / float64(time.Second)
	if !previous.seen || seconds <= 0 {
		return nil, nil
	}
	grown := current.length - previous.length
	produced = rate(max(grown, 0), seconds)
	if previous.lagKnown && current.lagKnown {
		consumed = rate(max(grown-(current.lag-previous.lag), 0), seconds)
	}
	return produced, consumed
}

// SumKnown adds the known rates, rounded to 2 decimals (a group's rate from
// its shards' rates); nil when none is known.
func SumKnown(rates ...*float64) *float64 {
	var sum float64
	known := false
	for _, r := range rates {
		if r != nil {
			sum += *r
			known = true
		}
	}
	if !known {
		return nil
	}
	return round2(sum)
}

func rate(delta int64, seconds float64) *float64 { return round2(float64(delta) / seconds) }

func round2(x float64) *float64 {
	rounded := math.Round(x*100) / 100
	return &rounded
}
