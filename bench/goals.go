package bench

import (
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/coordproc"

	"bufio"
	"fmt"
	"io"
	"regexp"
	"slices"
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
	// Status is PASS, MISS, NOT RUN, INVALID or INFO.
	Status string `json:"status"`
}

// Goal statuses.
const (
	Pass   = "PASS"
	Miss   = "MISS"
	NotRun = "NOT RUN"
	// Invalid: measured, but on counters other clients fed too (the run
	// fell back to the shared store server).
	Invalid = "INVALID"
	// Info: measured and reported, with no target yet.
	Info = "INFO"
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

// missIf makes g MISS, reason first in its detail, when cond holds: its
// scenario ran but failed, or could not measure what g names.
func (g Goal) missIf(cond bool, reason string) Goal {
	if cond {
		g.Status = Miss
		g.Detail = reason + "; " + g.Detail
	}
	return g
}

// scenarioGoals applies to goals, the goals of scenario name, the rule
// that NOT RUN is only for a scenario that was not selected: when the
// scenario failed, every goal is MISS with its error; when it was selected
// but left no figures (ran false: the run ended before it), or ran but a
// goal has no measure, that goal is MISS and says so.
func (r *Report) scenarioGoals(name string, ran bool, goals ...Goal) []Goal {
	failure, failed := r.Failures[name]
	scenario, _, _ := strings.Cut(name, "/")
	selected := r.Options.runs(scenario)
	for i, g := range goals {
		switch {
		case failed:
			goals[i] = g.missIf(true, "the "+name+" scenario failed: "+failure)
		case !ran && selected:
			goals[i] = g.missIf(true, "the "+name+" scenario was selected but did not run: the run ended before it")
		case ran:
			goals[i] = g.missIf(g.Status == NotRun, "not measured although the "+name+" scenario ran")
		}
	}
	return goals
}

// storeCounted marks a measured goal INVALID when a phase it rests on
// counted the shared store server, and says so when an external one.
func (g Goal) storeCounted(phases ...Phase) Goal {
	for _, p := range phases {
		switch {
		case g.Status == NotRun:
		case p.StoreServer == StoreShared:
			g.Status = Invalid
			g.Detail += "; " + p.Name + " counted the shared server (its own did not start): not valid"
		case p.StoreServer == StoreExternal:
			g.Detail += "; " + p.Name + " counted an external server: other clients count too"
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

// perRequest is a phase's figure x per answered request, 0 without requests.
func perRequest(x float64, p Phase) float64 { return ratio(x, float64(p.Requests)) }

// evaluate computes goals P1–P8 (issues #12, #18) from the report's
// figures.
func (r *Report) evaluate() {
	ceil, okC := r.phase("ceiling/closed")
	ceilOpen, okCO := r.phase("ceiling/open")
	steady, okS := r.phase("steady/closed")
	steadyOpen, okSO := r.phase("steady/open")
	base, okB := r.phase("baseline/closed")
	pg, okPG := r.phase("store/jdbc")
	rd, okRD := r.phase("store/redis")
	if !okRD && okS && steady.Store == coordproc.StoreRedis {
		rd, okRD = steady, true
	}
	storeCPU := func(p Phase) float64 { return perRequest(p.StoreCores*p.Seconds, p) * 1e6 } // µs per heartbeat
	coordCPU := func(p Phase) float64 { return perRequest(p.CPUSeconds, p) * 1e6 }
	perCore := func(p Phase) float64 { return ratio(p.Throughput, p.CPUCores) }
	r.Goals = append(r.Goals,
		goal("P1", fmt.Sprintf("heartbeats/s, %s store, %d×%d members, over the no-op ceiling", steady.Store, steady.Groups, steady.Members),
			ratio(steady.Throughput, ceil.Throughput), 0.75, false, okC && okS,
			fmt.Sprintf("steady %.0f/s ÷ ceiling %.0f/s", steady.Throughput, ceil.Throughput)),
		goal("P2a", "store commands per steady heartbeat (liveness in memory)",
			perRequest(float64(steady.StoreCommands-steady.DataPlaneCommands), steady), 0.01, true, okS,
			fmt.Sprintf("steady/closed %d commands (%d more read the streams: lag refresher) ÷ %d heartbeats; baseline %.3f commands/hb in all",
				steady.StoreCommands-steady.DataPlaneCommands, steady.DataPlaneCommands, steady.Requests, base.CommandsPerHeartbeat)).storeCounted(steady),
		goal("P2b", "store CPU per heartbeat, group commit over baseline",
			ratio(storeCPU(steady), storeCPU(base)), 1.0/10, true, okS && okB && storeCPU(base) > 0,
			fmt.Sprintf("steady %.2f µs ÷ baseline %.2f µs of store CPU/hb", storeCPU(steady), storeCPU(base))).storeCounted(steady, base),
		goal("P3", fmt.Sprintf("heartbeat p99 over ceiling p99 at %.0f/s offered", steadyOpen.OfferedRate),
			ratio(steadyOpen.Latency.P99, ceilOpen.Latency.P99), 1.5, true, okCO && okSO,
			fmt.Sprintf("heartbeat p50/p99 %.2f/%.2f ms ÷ ceiling p50/p99 %.2f/%.2f ms",
				steadyOpen.Latency.P50, steadyOpen.Latency.P99, ceilOpen.Latency.P50, ceilOpen.Latency.P99)),
		goal("P3b", "coordinator CPU per heartbeat over CPU per no-op request",
			ratio(coordCPU(steady), coordCPU(ceil)), 1.3, true, okS && okC && coordCPU(ceil) > 0,
			fmt.Sprintf("steady %.1f µs ÷ ceiling %.1f µs (closed loops)", coordCPU(steady), coordCPU(ceil))),
	)
	if own, ok := r.phase("steady/open-members"); ok {
		r.Goals = append(r.Goals, goal("P3-own", fmt.Sprintf("heartbeat p99 (ms) at the members' own rate, %.0f/s, within an interval", own.OfferedRate),
			own.Latency.P99, float64(r.Options.Interval.Milliseconds()), true, r.Options.Interval > 0,
			fmt.Sprintf("p50 %.2f ms, p99 %.2f ms, answered %.0f/s", own.Latency.P50, own.Latency.P99, own.Throughput)))
	}
	r.Goals = append(r.Goals, r.churnGoals()...)
	r.Goals = append(r.Goals, goal("P4e", "double ownership (oracle, every phase)", float64(r.Violations), 0, true, len(r.Phases) > 0,
		fmt.Sprintf("%d violations", r.Violations)))
	full := max(r.Assignor["BenchmarkAssignFull10k/empty/ordered"], r.Assignor["BenchmarkAssignFull10k/skewed/ordered"])
	join, okJ := r.Assignor["BenchmarkAssignJoin10k/ordered"]
	leave, okL := r.Assignor["BenchmarkAssignLeave10k/ordered"]
	r.Goals = append(r.Goals, r.scenarioGoals(ScenarioAssignor, len(r.Assignor) > 0,
		goal("P5a", "assignor full recompute 10,000×10 (ms)", full/1e6, 5, true, full > 0, "worst of empty/skewed start, AssignOrdered"),
		goal("P5b", "assignor incremental join (ms)", join/1e6, 0.5, true, okJ, "AssignOrdered"),
		goal("P5c", "assignor incremental leave (ms)", leave/1e6, 0.5, true, okL, "AssignOrdered"),
	)...)
	r.Goals = append(r.Goals, r.laterGoals(okRD, rd, okPG, pg)...)
	r.Goals = append(r.Goals, r.scenarioGoals(ScenarioHeap, r.GroupHeap != nil, r.groupHeapGoal())...)
	r.Goals = append(r.Goals, r.multiGoals(perCore)...)
	r.Goals = append(r.Goals, r.scenarioGoals(ScenarioCluster, r.Cluster != nil, r.clusterGoals(perCore)...)...)
	r.Goals = append(r.Goals, r.groupsGoal())
	r.Goals = append(r.Goals, r.scenarioGoals(ScenarioScrape, r.Scrape != nil, r.scrapeGoals()...)...)
	r.Goals = append(r.Goals, r.scenarioGoals(ScenarioDataPlane, r.DataPlane != nil, r.dataPlaneGoals()...)...)
	r.Goals = append(r.Goals, r.scenarioGoals(ScenarioSinks, r.Sinks != nil, r.sinkGoals()...)...)
	r.Goals = append(r.Goals, r.scenarioGoals(ScenarioWork, r.Work != nil, r.workGoals()...)...)
	r.Goals = append(r.Goals, r.scenarioGoals(ScenarioFleet, r.Fleet != nil, r.fleetGoals()...)...)
	r.Goals = append(r.Goals, r.scenarioGoals(ScenarioScaling, r.Scaling != nil, r.scalingGoals()...)...)
	for i, g := range r.Goals {
		if scenarios, selected := r.phaseScenarios(g.ID); selected {
			r.Goals[i] = r.unmeasured(g, scenarios)
		}
	}
}

// phaseScenarios returns the scenarios whose phases or benchmarks goal id
// is measured from, when the run selected them all (for P7a, one that
// measures Redis: store with Redis in its list, or steady on Redis).
func (r *Report) phaseScenarios(id string) ([]string, bool) {
	o := &r.Options
	var redis []string // the scenarios that measure Redis
	if o.runs(ScenarioStore) && slices.Contains(o.storeList(), coordproc.StoreRedis) {
		redis = append(redis, ScenarioStore)
	}
	if o.runs(ScenarioSteady) && o.Store == coordproc.StoreRedis {
		redis = append(redis, ScenarioSteady)
	}
	jdbc := o.runs(ScenarioStore) && slices.Contains(o.storeList(), coordproc.StoreJDBC)
	all := func(scenarios ...string) ([]string, bool) {
		return scenarios, !slices.ContainsFunc(scenarios, func(s string) bool { return !o.runs(s) })
	}
	switch id {
	case "P1", "P3", "P3b":
		return all(ScenarioCeiling, ScenarioSteady)
	case "P2a", "P6a-coord":
		return all(ScenarioSteady)
	case "P2b":
		return all(ScenarioSteady, ScenarioBaseline)
	case "P6a":
		return all(ScenarioHeap)
	case "P6b", "P6c":
		return all(ScenarioGroups)
	case "P7a":
		return redis, len(redis) > 0
	case "P7b":
		return []string{ScenarioStore}, jdbc
	case "P7c":
		return slices.Compact(append([]string{ScenarioStore}, redis...)), len(redis) > 0 && jdbc
	case "P8a-settle", "P8a-fenced", "P8a-retry", "P8a-p99", "P8a-core", "P8e":
		return all(ScenarioMulti)
	}
	return nil, false
}

// unmeasured makes g, a goal measured from the phases of scenarios, all
// selected, MISS when it has no measure: with the error of one of them
// that failed, else saying it was not measured.
func (r *Report) unmeasured(g Goal, scenarios []string) Goal {
	if g.Status != NotRun {
		return g
	}
	for _, s := range scenarios {
		if failure, ok := r.Failures[s]; ok {
			return g.missIf(true, "the "+s+" scenario failed: "+failure)
		}
	}
	return g.missIf(true, "not measured in a run that selected "+strings.Join(scenarios, ", "))
}

// churnGoals evaluates P4a–d on each churn run, and on each release
// policy of a selected churn scenario that did not run; without the churn
// scenario, one set of goals, NOT RUN.
func (r *Report) churnGoals() []Goal {
	if len(r.Churn) == 0 && !r.Options.runs(ScenarioChurn) {
		return (&Churn{}).goals()
	}
	var out []Goal
	for _, c := range r.Churn {
		out = append(out, r.scenarioGoals(ScenarioChurn+"/"+c.Release, true, c.goals()...)...)
	}
	for _, release := range r.Options.Releases {
		if !slices.ContainsFunc(r.Churn, func(c *Churn) bool { return c.Release == release }) {
			out = append(out, r.scenarioGoals(ScenarioChurn+"/"+release, false, (&Churn{Release: release}).goals()...)...)
		}
	}
	return out
}

// goals evaluates P4a–d on one churn run; the goal ids carry its release
// policy, if any. A join is measured in heartbeat rounds (Join.Rounds), so
// that an answer a few milliseconds over two intervals is 2 rounds, not a
// miss; the times in intervals are in the details. P4c is MISS when a
// crash's shards never all moved.
func (c *Churn) goals() []Goal {
	ok := c.Join.Count > 0
	id := func(g string) string {
		if c.Release == "" {
			return g
		}
		return g + "/" + c.Release
	}
	return []Goal{
		goal(id("P4a"), "join → full target, p50 (heartbeat rounds after the join's)", c.JoinRounds.P50, 2, true, ok,
			fmt.Sprintf("%d joins, p50 %.3f intervals", c.Join.Count, c.Join.P50)),
		goal(id("P4b"), "join → full target, p99 (heartbeat rounds after the join's)", c.JoinRounds.P99, 3, true, ok,
			fmt.Sprintf("max %.0f rounds, p99 %.3f intervals", c.JoinRounds.Max, c.Join.P99)),
		goal(id("P4c"), "crash → shards moved, max over lease TTL + 2 intervals", ratio(c.Crash.Max, c.CrashBound), 1, true,
			ok && c.Crash.Count > 0,
			fmt.Sprintf("%d crashes, max %.2f of %.1f intervals, %d unfinished", c.Crash.Count, c.Crash.Max, c.CrashBound, c.CrashUnfinished)).
			missIf(c.CrashUnfinished > 0, fmt.Sprintf("the shards of %d crashed members never all moved", c.CrashUnfinished)),
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

// laterGoals evaluates P6 and P7 (issues #12, #18): memory, store bytes.
func (r *Report) laterGoals(okRD bool, rd Phase, okPG bool, pg Phase) []Goal {
	h := r.CoordinatorHeap
	var peak float64
	var peakPhase string
	for _, p := range r.Phases {
		if strings.HasPrefix(p.Name, "groups/") && p.PeakRSSMB > peak {
			peak, peakPhase = p.PeakRSSMB, p.Name
		}
	}
	gs, _ := r.phase("groups/closed")
	return []Goal{
		goal("P6a", "heap per member (B), domain state, 100×1,000 (BenchmarkHeapPerMember)", r.HeapPerMember, 1024, true, r.HeapPerMember > 0,
			fmt.Sprintf("coordinator heap after GC: %.0f B/member marginal (%.1f MiB with %d members, %.1f MiB with %d more)",
				h.PerMember, float64(h.Bytes)/(1<<20), h.Members, float64(h.ProbeBytes)/(1<<20), h.ProbeMembers)),
		goal("P6a-coord", "coordinator heap per member (B) after GC, heartbeat scenario, marginal", h.PerMember, 1024, true, h.PerMember > 0,
			fmt.Sprintf("(%d − %d bytes) ÷ %d probe members (%d members before; %d bytes empty)", h.ProbeBytes, h.Bytes, h.ProbeMembers, h.Members, h.EmptyBytes)),
		goal("P6b", fmt.Sprintf("peak RSS (MiB), %d×%d members, scraped", gs.Groups, gs.Members), peak, 300, true, peak > 0 && r.Scrapes.Count > 0,
			fmt.Sprintf("worst phase %s; %d scrapes, largest %.1f MB", peakPhase, r.Scrapes.Count, float64(r.Scrapes.MaxBytes)/1e6)),
		goal("P7a", "bytes to the store per steady heartbeat, Redis", perRequest(float64(rd.StoreBytes-rd.DataPlaneBytes), rd), 8, true, okRD,
			fmt.Sprintf("%s: (%d − %d B of the lag refresher's reads, estimated) ÷ %d heartbeats (bytes Redis received; %.2f B/hb in all)",
				rd.Name, rd.StoreBytes, rd.DataPlaneBytes, rd.Requests, rd.BytesPerHeartbeat)).storeCounted(rd),
		goal("P7b", "bytes written per steady heartbeat, PostgreSQL", pg.BytesPerHeartbeat, 8, true, okPG,
			fmt.Sprintf("%s: %.2f B/hb (WAL)", pg.Name, pg.BytesPerHeartbeat)).storeCounted(pg),
		goal("P7c", "PostgreSQL over Redis heartbeats/s, steady closed loop", ratio(pg.Throughput, rd.Throughput), 0.95, false, okPG && okRD,
			fmt.Sprintf("%s %.0f/s ÷ %s %.0f/s", pg.Name, pg.Throughput, rd.Name, rd.Throughput)),
	}
}

// groupsGoal evaluates P6c (issue #11): the closed-loop heartbeats/s of
// every later groups-ref phase and of groups/closed over the first
// groups-ref phase's, all of one run; Measured is the smallest ratio. It
// is not run without groups/closed.
func (r *Report) groupsGoal() Goal {
	var first Phase
	var okFirst bool
	_, many := r.phase("groups/closed")
	var parts []string
	worst := 0.0
	measured := false
	for _, p := range r.Phases {
		ref := strings.HasPrefix(p.Name, "groups-ref/") && !strings.HasSuffix(p.Name, "-settle")
		if !ref && p.Name != "groups/closed" {
			continue
		}
		if !okFirst {
			first, okFirst = p, true
			continue
		}
		x := ratio(p.Throughput, first.Throughput)
		parts = append(parts, fmt.Sprintf("%d×%d %.0f/s (%.2f)", p.Groups, p.Members, p.Throughput, x))
		if !measured || x < worst {
			worst, measured = x, true
		}
	}
	return goal("P6c", "heartbeats/s with many groups over one group's, closed loop, same run", worst, 0.8, false, many && measured && first.Throughput > 0,
		fmt.Sprintf("%d×%d %.0f/s; %s", first.Groups, first.Members, first.Throughput, strings.Join(parts, ", ")))
}
