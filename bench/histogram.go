package bench

import (
	"math/bits"
	"sync/atomic"
	"time"
)

// Histogram records durations in log-linear buckets, like an HDR
// histogram: values below 2^subBits ns are exact, larger ones fall into
// buckets whose width is 1/64 of their lower bound. It is safe for
// concurrent use (atomic counters).
type Histogram struct {
	counts [buckets]atomic.Int64
	total  atomic.Int64
	sum    atomic.Int64
	max    atomic.Int64
}

const (
	subBits = 7 // 2^(subBits-1) = 64 sub-buckets per power of two
	half    = 1 << (subBits - 1)
	buckets = (64 - subBits + 2) * half
)

// bucketOf returns the bucket index of v ≥ 0.
func bucketOf(v int64) int {
	shift := bits.Len64(uint64(v)) - subBits
	if shift <= 0 {
		return int(v)
	}
	return shift*half + int(v>>shift)
}

// bucketMax returns the largest value of bucket i.
func bucketMax(i int) int64 {
	if i < 2*half {
		return int64(i)
	}
	shift := i/half - 1
	mantissa := int64(i - shift*half)
	return (mantissa+1)<<shift - 1
}

// Record adds one duration; negative durations count as 0.
func (h *Histogram) Record(d time.Duration) {
	v := max(int64(d), 0)
	h.counts[bucketOf(v)].Add(1)
	h.total.Add(1)
	h.sum.Add(v)
	h.raiseMax(v)
}

// raiseMax makes the maximum at least v.
func (h *Histogram) raiseMax(v int64) {
	for {
		m := h.max.Load()
		if v <= m || h.max.CompareAndSwap(m, v) {
			return
		}
	}
}

// Count is the number of recorded durations.
func (h *Histogram) Count() int64 { return h.total.Load() }

// Quantile returns the q-quantile (0 < q ≤ 1): the upper bound of the
// bucket holding the ⌈q·n⌉-th smallest value, never above the maximum. It
// is 0 when nothing was recorded.
func (h *Histogram) Quantile(q float64) time.Duration {
	n := h.total.Load()
	if n == 0 {
		return 0
	}
	rank := int64(q*float64(n) + 0.999999)
	rank = min(max(rank, 1), n)
	var seen int64
	for i := range h.counts {
		seen += h.counts[i].Load()
		if seen >= rank {
			return time.Duration(min(bucketMax(i), h.max.Load()))
		}
	}
	return time.Duration(h.max.Load())
}

// Latency summarises a histogram in milliseconds.
type Latency struct {
	P50  float64 `json:"p50Ms"`
	P95  float64 `json:"p95Ms"`
	P99  float64 `json:"p99Ms"`
	Max  float64 `json:"maxMs"`
	Mean float64 `json:"meanMs"`
}

// Summary returns the histogram's percentiles, maximum and mean.
func (h *Histogram) Summary() Latency {
	l := Latency{P50: ms(h.Quantile(0.50)), P95: ms(h.Quantile(0.95)), P99: ms(h.Quantile(0.99)), Max: ms(time.Duration(h.max.Load()))}
	if n := h.total.Load(); n > 0 {
		l.Mean = ms(time.Duration(h.sum.Load() / n))
	}
	return l
}

// ms converts a duration to fractional milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
