package bench

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func TestBucketsAreContiguousAndBounded(t *testing.T) {
	prev := -1
	for _, v := range []int64{0, 1, 63, 64, 127, 128, 129, 255, 256, 1000, 1 << 20, 1<<40 + 12345, 1<<62 + 1} {
		i := bucketOf(v)
		if i < prev || i >= buckets {
			t.Fatalf("bucketOf(%d) = %d after %d (of %d)", v, i, prev, buckets)
		}
		prev = i
		if hi := bucketMax(i); hi < v || float64(hi-v) > float64(v)/64+1 {
			t.Errorf("value %d: bucket %d max %d", v, i, hi)
		}
		if i > 0 && bucketMax(i-1) >= v {
			t.Errorf("value %d also fits bucket %d (max %d)", v, i-1, bucketMax(i-1))
		}
	}
}

func TestQuantilesMatchSortedSamples(t *testing.T) {
	var h Histogram
	r := rand.New(rand.NewPCG(1, 2))
	samples := make([]time.Duration, 10000)
	for i := range samples {
		samples[i] = time.Duration(r.ExpFloat64() * float64(time.Millisecond))
		h.Record(samples[i])
	}
	slices.Sort(samples)
	for _, q := range []float64{0.5, 0.95, 0.99, 1} {
		exact := samples[int(q*float64(len(samples)))-1]
		got := h.Quantile(q)
		if got < exact || float64(got-exact) > float64(exact)/64 {
			t.Errorf("q%.2f = %v, exact %v", q, got, exact)
		}
	}
	if h.Count() != 10000 || h.Quantile(1) != samples[len(samples)-1] {
		t.Errorf("count %d max %v, want %v", h.Count(), h.Quantile(1), samples[len(samples)-1])
	}
}

func TestEmptyAndNegative(t *testing.T) {
	var h Histogram
	if h.Quantile(0.99) != 0 || h.Summary() != (Latency{}) {
		t.Fatal("empty histogram reports values")
	}
	h.Record(-time.Second)
	h.Record(3 * time.Millisecond)
	if s := h.Summary(); s.P50 != 0 || s.Max != 3 || s.Mean != 1.5 {
		t.Errorf("summary %+v", s)
	}
}
