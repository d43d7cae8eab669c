package bench

import (
	"strings"
	"testing"
)

const benchOutput = `goos: linux
BenchmarkAssignFull10k/empty/map-2     	      20	   6296616 ns/op
BenchmarkAssignFull10k/empty/ordered-2 	      20	   4998694 ns/op
BenchmarkAssignFull10k/skewed/ordered-2         	      20	   2231611 ns/op
BenchmarkAssignJoin10k/ordered-2                	      20	    464488 ns/op	  12 B/op
BenchmarkAssignLeave10k/ordered                	      20	    625465.5 ns/op
PASS
`

func TestParseBenchmarks(t *testing.T) {
	got := parseBenchmarks(strings.NewReader(benchOutput))
	want := map[string]float64{
		"BenchmarkAssignFull10k/empty/map":      6296616,
		"BenchmarkAssignFull10k/empty/ordered":  4998694,
		"BenchmarkAssignFull10k/skewed/ordered": 2231611,
		"BenchmarkAssignJoin10k/ordered":        464488,
		"BenchmarkAssignLeave10k/ordered":       625465.5,
	}
	if len(got) != len(want) {
		t.Fatalf("parsed %v", got)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
}

func TestEvaluate(t *testing.T) {
	r := &Report{
		Phases: []Phase{
			{Name: "ceiling/closed", Throughput: 10000},
			{Name: "ceiling/open", Latency: Latency{P99: 2}},
			{Name: "steady/closed", Throughput: 6000, Store: "redis", Groups: 1, Members: 10000},
			{Name: "steady/open", Latency: Latency{P99: 3.5}, OfferedRate: 5000},
			{Name: "baseline/closed", Throughput: 500},
		},
		Churn: []*Churn{{Release: ReleasePrompt, Join: Quantiles{Count: 4, P50: 1.2, P99: 3.1}, Crash: Quantiles{Count: 2, Max: 11},
			CrashBound: 12, Moved: 110, Minimum: 100}},
		Assignor: parseBenchmarks(strings.NewReader(benchOutput)),
	}
	r.evaluate()
	want := map[string]string{"P1": Pass, "P2": Miss, "P3": Miss, "P4a/prompt": Pass, "P4b/prompt": Miss, "P4c/prompt": Pass, "P4d/prompt": Pass, "P4e": Pass,
		"P5a": Pass, "P5b": Pass, "P5c": Miss}
	for _, g := range r.Goals {
		if g.Status != want[g.ID] {
			t.Errorf("%s: %s (measured %v), want %s", g.ID, g.Status, g.Measured, want[g.ID])
		}
		delete(want, g.ID)
	}
	if len(want) != 0 {
		t.Errorf("goals not evaluated: %v", want)
	}
}

func TestGoalsNotRun(t *testing.T) {
	r := &Report{}
	r.evaluate()
	for _, g := range r.Goals {
		if g.Status != NotRun {
			t.Errorf("%s: %s without measurements", g.ID, g.Status)
		}
	}
}
