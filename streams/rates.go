package streams

import (
	"math"
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
// the latest sample per RateKey and is safe for concurrent use.
type RateTracker struct {
	mu      sync.Mutex
	samples map[RateKey]rateSample
}

type rateSample struct {
	at     time.Time
	length int64
	lag    *int64
}

// NewRateTracker returns an empty RateTracker.
func NewRateTracker() *RateTracker {
	return &RateTracker{samples: map[RateKey]rateSample{}}
}

// Observe records the sample (length, lag) of key taken at time at and
// returns the rates since the previous sample of key, rounded to 2 decimals:
//
//	produced = max(0, Δlength) / Δs
//	consumed = max(0, Δlength − Δlag) / Δs   (nil if either lag is unknown)
//
// Negative lengths and lags count as 0. Both rates are nil on the first
// sample of key, and when at is not after the previous sample's time. The
// sample replaces the previous one in every case.
func (t *RateTracker) Observe(key RateKey, at time.Time, length int64, lag *int64) (produced, consumed *float64) {
	current := rateSample{at: at, length: max(length, 0)}
	if lag != nil {
		known := max(*lag, 0)
		current.lag = &known
	}
	t.mu.Lock()
	previous, seen := t.samples[key]
	t.samples[key] = current
	t.mu.Unlock()

	seconds := current.at.Sub(previous.at).Seconds()
	if !seen || seconds <= 0 {
		return nil, nil
	}
	grown := current.length - previous.length
	produced = rate(max(grown, 0), seconds)
	if previous.lag != nil && current.lag != nil {
		consumed = rate(max(grown-(*current.lag-*previous.lag), 0), seconds)
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
