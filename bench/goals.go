package bench

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// Goal is one target of issue #7 with its measured value.
type Goal struct {
	ID          string `json:"id"`
	Description string `json:"description"`
	// Measured is the figure compared with Target: a ratio, a time in
	// intervals or milliseconds, or a count, as Description says.
	Measured float64 `json:"measured"`
	Target   float64 `json:"target"`
	// AtMost: the goal is Measured ≤ Target (else Measured ≥ Target).
	AtMost bool `json:"atMost"`
	// Detail shows the figures the measure comes from.
	Detail string `json:"detail"`
	// Status is PASS, MISS or NOT RUN.
	Status string `json:"status"`
}

// Goal statuses.
const (
	Pass   = "PASS"
	Miss   = "MISS"
	NotRun = "NOT RUN"
)

// goal builds a goal from a measurement; ok is false when the figures it
// needs were not measured.
func goal(id, desc string, measured, target float64, atMost, ok bool, detail string) Goal {
	g := Goal{ID: id, Description: desc, Measured: measured, Target: target, AtMost: atMost, Detail: detail, Status: NotRun}
	if ok {
		g.Status = Miss
		if (atMost && measured <= target) || (!atMost && measured >= target) {
			g.Status = Pass
		}
	}
	return g
}

// phase returns the phase named name, if the run has it.
func (r *Report) phase(name string) (Phase, bool) {
	for _, p := range r.Phases {
		if p.Name == name {
			return p, true
		}
	}
	return Phase{}, false
}

// ratio returns a/b, 0 when b is 0.
func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// evaluate computes goals P1–P5 from the report's figures.
func (r *Report) evaluate() {
	ceil, okC := r.phase("ceiling/closed")
	ceilOpen, okCO := r.phase("ceiling/open")
	steady, okS := r.phase("steady/closed")
	steadyOpen, okSO := r.phase("steady/open")
	base, okB := r.phase("baseline/closed")
	r.Goals = append(r.Goals,
		goal("P1", fmt.Sprintf("heartbeats/s, %s store, %d×%d members, over the no-op ceiling", steady.Store, steady.Groups, steady.Members),
			ratio(steady.Throughput, ceil.Throughput), 0.55, false, okC && okS,
			fmt.Sprintf("steady %.0f/s ÷ ceiling %.0f/s", steady.Throughput, ceil.Throughput)),
		goal("P2", "group commit over one critical section per heartbeat",
			ratio(steady.Throughput, base.Throughput), 20, false, okS && okB,
			fmt.Sprintf("steady %.0f/s ÷ baseline %.0f/s", steady.Throughput, base.Throughput)),
		goal("P3", fmt.Sprintf("heartbeat p99 over ceiling p99 at %.0f/s offered", steadyOpen.OfferedRate),
			ratio(steadyOpen.Latency.P99, ceilOpen.Latency.P99), 1.5, true, okCO && okSO,
			fmt.Sprintf("heartbeat p99 %.2f ms ÷ ceiling p99 %.2f ms", steadyOpen.Latency.P99, ceilOpen.Latency.P99)),
	)
	for _, c := range r.Churn {
		r.Goals = append(r.Goals, c.goals()...)
	}
	if len(r.Churn) == 0 {
		r.Goals = append(r.Goals, (&Churn{}).goals()...)
	}
	r.Goals = append(r.Goals, goal("P4e", "double ownership (oracle, every phase)", float64(r.Violations), 0, true, len(r.Phases) > 0,
		fmt.Sprintf("%d violations", r.Violations)))
	full := max(r.Assignor["BenchmarkAssignFull10k/empty/ordered"], r.Assignor["BenchmarkAssignFull10k/skewed/ordered"])
	join, okJ := r.Assignor["BenchmarkAssignJoin10k/ordered"]
	leave, okL := r.Assignor["BenchmarkAssignLeave10k/ordered"]
	r.Goals = append(r.Goals,
		goal("P5a", "assignor full recompute 10,000×10 (ms)", full/1e6, 5, true, full > 0, "worst of empty/skewed start, AssignOrdered"),
		goal("P5b", "assignor incremental join (ms)", join/1e6, 0.5, true, okJ, "AssignOrdered"),
		goal("P5c", "assignor incremental leave (ms)", leave/1e6, 0.5, true, okL, "AssignOrdered"),
	)
}

// goals evaluates P4a–d on one churn run; the goal ids carry its release
// policy, if any.
func (c *Churn) goals() []Goal {
	ok := c.Join.Count > 0
	id := func(g string) string {
		if c.Release == "" {
			return g
		}
		return g + "/" + c.Release
	}
	return []Goal{
		goal(id("P4a"), "join → full target, p50 (intervals)", c.Join.P50, 2, true, ok, fmt.Sprintf("%d joins", c.Join.Count)),
		goal(id("P4b"), "join → full target, p99 (intervals)", c.Join.P99, 3, true, ok, fmt.Sprintf("max %.2f", c.Join.Max)),
		goal(id("P4c"), "crash → shards moved, max over lease TTL + 2 intervals", ratio(c.Crash.Max, c.CrashBound), 1, true,
			ok && c.Crash.Count > 0 && c.CrashUnfinished == 0,
			fmt.Sprintf("%d crashes, max %.2f of %.1f intervals, %d unfinished", c.Crash.Count, c.Crash.Max, c.CrashBound, c.CrashUnfinished)),
		goal(id("P4d"), "shards moved over the minimum", ratio(float64(c.Moved), float64(c.Minimum)), 1.1, true, ok,
			fmt.Sprintf("moved %d, minimum %d", c.Moved, c.Minimum)),
	}
}

// printGoals writes one line per goal.
func printGoals(w io.Writer, goals []Goal) {
	fmt.Fprintln(w, "goals:")
	for _, g := range goals {
		op := "≥"
		if g.AtMost {
			op = "≤"
		}
		fmt.Fprintf(w, "  %-13s %-7s %-56s %9.3f  (goal %s %g)  %s\n", g.ID, g.Status, g.Description, g.Measured, op, g.Target, g.Detail)
	}
}

// benchLine matches a Go benchmark result line: name-N  iterations  ns/op.
var benchLine = regexp.MustCompile(`^(Benchmark\S+?)(?:-\d+)?\s+\d+\s+([0-9.]+) ns/op`)

// parseBenchmarks reads `go test -bench` output into name → ns/op.
func parseBenchmarks(out io.Reader) map[string]float64 {
	res := map[string]float64{}
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		m := benchLine.FindStringSubmatch(strings.TrimSpace(sc.Text()))
		if m == nil {
			continue
		}
		if ns, err := strconv.ParseFloat(m[2], 64); err == nil {
			res[m[1]] = ns
		}
	}
	return res
}
