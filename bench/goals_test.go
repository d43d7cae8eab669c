package bench

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis-stream-coordinator/coordinator/internal/testkit/coordproc"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/membersim"
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
			{Name: "ceiling/closed", Throughput: 10000, Requests: 100000, CPUSeconds: 4},
			{Name: "ceiling/open", Latency: Latency{P99: 2}},
			{Name: "steady/closed", Throughput: 8000, Store: "redis", Groups: 1, Members: 10000, Requests: 80000, CPUSeconds: 4, CPUCores: 1,
				Seconds: 10, StoreCores: 0.01, CommandsPerHeartbeat: 0.005, BytesPerHeartbeat: 12, StoreBytes: 960_000, Latency: Latency{P99: 20}},
			{Name: "steady/open", Latency: Latency{P99: 3.5}, OfferedRate: 5000},
			{Name: "steady/open-members", Latency: Latency{P50: 1, P99: 30}, OfferedRate: 10000},
			{Name: "baseline/closed", Throughput: 500, Requests: 5000, Seconds: 10, StoreCores: 0.2, CommandsPerHeartbeat: 6},
			{Name: "multi-ref/closed", Throughput: 8000, CPUCores: 1, Seconds: 75, Latency: Latency{P99: 20}},
			{Name: "multi/settle", Seconds: 3, Groups: 1, Members: 10000},
			{Name: "multi/closed", Throughput: 9000, CPUCores: 1.5, Coordinators: 3, StartSeconds: 60, Seconds: 75,
				Latency: Latency{P99: 30}, Statuses: map[string]int64{"OK": 100, "RETRY": 2}},
			{Name: "multi-owner/closed", Throughput: 11000, CPUCores: 1.5, Groups: 1, Members: 10000, Statuses: map[string]int64{"OK": 100}},
			{Name: "cluster-ref/closed", Throughput: 8000, CPUCores: 1},
			{Name: "cluster/closed", Throughput: 9000, CPUCores: 1.2},
			{Name: "cluster/rolling", Statuses: map[string]int64{"OK": 100, "RETRY": 40}},
			{Name: "cluster/kill", Statuses: map[string]int64{"OK": 100, "FENCED_MEMBER_EPOCH": 1}, DoubleReaders: 1},
			{Name: "store/jdbc", Throughput: 7000, BytesPerHeartbeat: 300},
			{Name: "groups/settle", Groups: 100, Members: 1000, PeakRSSMB: 280},
			{Name: "groups/closed", Groups: 100, Members: 1000, PeakRSSMB: 250},
			{Name: "scrape/quiet", Latency: Latency{P99: 10}, PeakRSSMB: 200},
			{Name: "scrape/scraped", Latency: Latency{P99: 15}, PeakRSSMB: 450},
		},
		Scrape: &ScrapeFigures{Groups: 10000, Shards: 16, Clients: 3, Bytes: 8e6, Rounds: 3, Scrapes: 9},
		DataPlane: &DataPlaneFigures{Entries: 200000, Shards: 4, Batch: 100,
			Consumer: DataPlaneRun{Entries: 400000, Seconds: 1.6, CPUSeconds: 1.2, Throughput: 250000, CPUMicrosPerEntry: 3},
			Plain:    DataPlaneRun{Entries: 400000, Seconds: 1, CPUSeconds: 0.48, Throughput: 400000, CPUMicrosPerEntry: 1.2}},
		Work: &WorkFigures{Shards: 64, Members: 8, Capacity: 4, Hot: workHot,
			Count: WorkRun{DrainSeconds: 50, Drained: true, BusiestOverMean: 2.08, Handled: 1000},
			Work: WorkRun{DrainSeconds: 40, Drained: true, BusiestOverMean: 1.04, MovesAfterDrain: 3, ObservedMinutes: 1,
				MovesPerMinute: 3, Handled: 1000}},
		Churn: []*Churn{{Release: ReleasePrompt, Join: Quantiles{Count: 4, P50: 1.2, P99: 3.1}, JoinRounds: Quantiles{Count: 4, P50: 1, P99: 4}, Crash: Quantiles{Count: 2, Max: 11},
			CrashBound: 12, Moved: 110, Minimum: 100}},
		Assignor:        parseBenchmarks(strings.NewReader(benchOutput)),
		HeapPerMember:   900,
		GroupHeap:       &GroupHeapFigures{IdleGroupBytes: 3000, MemberBytes: 1100},
		CoordinatorHeap: HeapFigure{EmptyBytes: 1 << 20, Bytes: 1<<20 + 20_000_000, Members: 10000, PerMember: 2000},
		Scrapes:         Scrapes{Count: 3},
		Options:         Options{Interval: time.Second, SettleTimeout: 90 * time.Second},
		SetupLeasesEnd:  80,
		Cluster: &ClusterFigures{Coordinators: 3, Groups: 30, Owned: map[string]int{"c1": 13, "c2": 9, "c3": 8}, LeaseTTL: 5,
			Rolling: ClusterStep{Done: true, MaxWait: 2.5}, Kill: ClusterStep{Done: true}, Killed: "c2", KilledGroups: 9, Recovery: 6.2},
	}
	r.evaluate()
	// P2a 0.005 commands/hb; P2b (0.01·10/80000) ÷ (0.2·10/5000) = 0.003;
	// P3b 50 µs ÷ 40 µs = 1.25; P7a 12 B; P7c 7000/8000 = 0.875;
	// P8a 2 RETRY, p99 30 ÷ 20 ms, 6000 ÷ 8000 per core = 0.75; P8e
	// 7333 ÷ 8000 per core = 0.92, 0 FENCED;
	// P8b |13 − 10| = 3, 7500 ÷ 8000 per core = 0.94; P8c 2.5 s wait;
	// P8d 6.2 s, 1 FENCED, 1 double reader; P9a 8 MB, P9b 450 MiB, P9c
	// 15 ÷ 10 ms; P12a 250,000 ÷ 400,000 entries/s = 0.625, P12b 3 ÷ 1.2
	// µs = 2.5; P10a 1.04, P10b 40 ÷ 50 s = 0.8, P10c 3 moves a minute,
	// P10d 0 FENCED; no fleet figures: P11a-e not run; P11f 3,000 B per
	// idle group but 1,100 B per member.
	want := map[string]string{"P1": Pass, "P2a": Pass, "P2b": Pass, "P3": Miss, "P3b": Pass, "P3-own": Pass,
		"P4a/prompt": Pass, "P4b/prompt": Miss, "P4c/prompt": Pass, "P4d/prompt": Pass, "P4e": Pass,
		"P5a": Pass, "P5b": Pass, "P5c": Miss, "P6a": Pass, "P6a-coord": Miss, "P6b": Pass,
		"P6c": NotRun, "P7a": Miss, "P7b": Miss, "P7c": Miss,
		"P8a-settle": Pass, "P8a-fenced": Pass, "P8a-retry": Miss, "P8a-p99": Pass, "P8a-core": Pass,
		"P8b-spread": Miss, "P8b-core": Pass, "P8c-fenced": Pass, "P8c-moves": Pass, "P8c-readers": Pass, "P8c-wait": Pass,
		"P8d-recovery": Pass, "P8d-fenced": Miss, "P8d-readers": Miss,
		"P9a": Pass, "P9b": Miss, "P9c": Pass, "P12a": Miss, "P12b": Miss,
		"P10a": Pass, "P10b": Miss, "P10c": Miss, "P10d": Pass,
		"P11a": NotRun, "P11b": NotRun, "P11c": NotRun, "P11d": NotRun, "P11e": NotRun, "P11f": Miss, "P8e": Pass,
		"P13a": NotRun, "P13b": NotRun, "P13c": NotRun, "P13d": NotRun,
		"P14a": NotRun, "P14b": NotRun, "P14c": NotRun}
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

func TestParseMetric(t *testing.T) {
	out := "BenchmarkHeapPerMember-2   \t       1\t 119274246 ns/op\t       618.6 B/member\nPASS\n"
	if v, ok := parseMetric(out, "BenchmarkHeapPerMember", "B/member"); !ok || v != 618.6 {
		t.Fatalf("parsed %v %v", v, ok)
	}
	if _, ok := parseMetric(out, "BenchmarkOther", "B/member"); ok {
		t.Fatal("found another benchmark's metric")
	}
	if v, err := parseHeapAlloc([]byte("# runtime.MemStats\n# Alloc = 5\n# HeapAlloc = 12345\n")); err != nil || v != 12345 {
		t.Fatalf("heap alloc %v %v", v, err)
	}
}

// TestMultiSettleFailure: a multi/settle that ran out of time misses
// P8a-settle with its error, and the goals of the phases it prevented.
func TestMultiSettleFailure(t *testing.T) {
	r := &Report{Phases: []Phase{{Name: "multi/settle", Seconds: 95, Failed: "12 of 10000 members not settled"}},
		Options: Options{SettleTimeout: 90 * time.Second}}
	r.evaluate()
	for _, g := range r.Goals {
		switch {
		case g.ID == "P8a-settle" && (g.Status != Miss || g.Detail != "12 of 10000 members not settled"):
			t.Errorf("P8a-settle: %s %q", g.Status, g.Detail)
		case (strings.HasPrefix(g.ID, "P8a-") && g.ID != "P8a-settle" || g.ID == "P8e") &&
			(g.Status != Miss || !strings.Contains(g.Detail, "multi/settle failed")):
			t.Errorf("%s: %s %q after a failed multi/settle", g.ID, g.Status, g.Detail)
		}
	}
}

// TestOwnerGoal: P8e compares heartbeats/s per core of multi-owner/closed
// with multi-ref/closed's and misses on a low ratio or on any FENCED answer.
func TestOwnerGoal(t *testing.T) {
	ref := Phase{Name: "multi-ref/closed", Throughput: 20000, CPUCores: 1}
	for _, c := range []struct {
		name       string
		throughput float64
		fenced     int64
		want       string
	}{
		{"0.95 per core, no FENCED", 28500, 0, Pass},
		{"0.8 per core", 24000, 0, Miss},
		{"0.95 per core, 1 FENCED", 28500, 1, Miss},
	} {
		owner := Phase{Name: "multi-owner/closed", Throughput: c.throughput, CPUCores: 1.5, Groups: 1, Members: 10000,
			Statuses: map[string]int64{"OK": 1000, "FENCED_MEMBER_EPOCH": c.fenced, "RETRY": 3}}
		r := &Report{Phases: []Phase{ref, owner}, Options: Options{Coordinators: 3}}
		r.evaluate()
		for _, g := range r.Goals {
			if g.ID != "P8e" {
				continue
			}
			if g.Status != c.want || !strings.Contains(g.Detail, fmt.Sprintf("FENCED %d, RETRY 3", c.fenced)) {
				t.Errorf("%s: %s %.3f (%s), want %s", c.name, g.Status, g.Measured, g.Detail, c.want)
			}
		}
	}
}

func TestCountDoubleReaders(t *testing.T) {
	phases := []Phase{{StartSeconds: 0, Seconds: 10}, {StartSeconds: 10, Seconds: 10}, {StartSeconds: 20, Seconds: 10}}
	countDoubleReaders(phases, []membersim.Violation{{From: 9 * time.Second, Duration: 2 * time.Second}, {From: 25 * time.Second, Duration: time.Second}})
	if phases[0].DoubleReaders != 1 || phases[1].DoubleReaders != 1 || phases[2].DoubleReaders != 1 {
		t.Fatalf("double readers %d %d %d, want 1 1 1", phases[0].DoubleReaders, phases[1].DoubleReaders, phases[2].DoubleReaders)
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

// TestP2aLeavesOutStreamReads: the lag refresher's reads of the streams
// are not store commands of the heartbeats.
func TestP2aLeavesOutStreamReads(t *testing.T) {
	r := &Report{Phases: []Phase{{Name: "steady/closed", Store: "redis", Requests: 10000, StoreCommands: 30050, DataPlaneCommands: 30000, StoreServer: StoreOwn}}}
	r.evaluate()
	for _, g := range r.Goals {
		if g.ID == "P2a" && (g.Measured != 0.005 || g.Status != Pass) {
			t.Errorf("P2a %v %s (%s), want 50 ÷ 10000 = 0.005 PASS", g.Measured, g.Status, g.Detail)
		}
	}
}

// TestStoreGoalsOnSharedServer: store-traffic goals measured on the shared
// server (the run's own did not start) are INVALID, not PASS or MISS; on
// an external server they keep their verdict and say so.
func TestStoreGoalsOnSharedServer(t *testing.T) {
	r := &Report{Phases: []Phase{
		{Name: "steady/closed", Store: "redis", Throughput: 8000, Requests: 80000, CommandsPerHeartbeat: 0.1, BytesPerHeartbeat: 45, StoreServer: StoreShared},
		{Name: "store/jdbc", Store: "jdbc", Throughput: 8000, Requests: 80000, BytesPerHeartbeat: 2, StoreServer: StoreExternal},
	}}
	r.evaluate()
	want := map[string]string{"P2a": Invalid, "P7a": Invalid, "P7b": Pass, "P7c": Pass}
	for _, g := range r.Goals {
		if w, ok := want[g.ID]; ok && g.Status != w {
			t.Errorf("%s: %s (%s), want %s", g.ID, g.Status, g.Detail, w)
		}
		if g.ID == "P7b" && !strings.Contains(g.Detail, "external server") {
			t.Errorf("P7b detail %q does not name the external server", g.Detail)
		}
	}
}

// goalsOf evaluates r and returns its goals by id.
func goalsOf(r *Report) map[string]Goal {
	r.evaluate()
	out := map[string]Goal{}
	for _, g := range r.Goals {
		out[g.ID] = g
	}
	return out
}

// TestFailedScenarioMiss: every goal of a selected scenario that failed
// is MISS with the scenario's error, and MISS too when the run ended
// before the scenario; the goals of scenarios not selected stay NOT RUN.
func TestFailedScenarioMiss(t *testing.T) {
	scenarios := []struct {
		scenario, key string
		ids           []string
	}{
		{ScenarioChurn, ScenarioChurn + "/" + ReleasePrompt, []string{"P4a/prompt", "P4b/prompt", "P4c/prompt", "P4d/prompt"}},
		{ScenarioAssignor, ScenarioAssignor, []string{"P5a", "P5b", "P5c"}},
		{ScenarioHeap, ScenarioHeap, []string{"P6a", "P11f"}},
		{ScenarioCluster, ScenarioCluster, []string{"P8b-spread", "P8b-core", "P8c-fenced", "P8c-moves", "P8c-readers", "P8c-wait",
			"P8d-recovery", "P8d-fenced", "P8d-readers"}},
		{ScenarioScrape, ScenarioScrape, []string{"P9a", "P9b", "P9c"}},
		{ScenarioWork, ScenarioWork, []string{"P10a", "P10b", "P10c", "P10d"}},
		{ScenarioFleet, ScenarioFleet, []string{"P11a", "P11b", "P11c", "P11d", "P11e"}},
		{ScenarioDataPlane, ScenarioDataPlane, []string{"P12a", "P12b"}},
		{ScenarioScaling, ScenarioScaling, []string{"P13a", "P13b", "P13c", "P13d"}},
		{ScenarioSinks, ScenarioSinks, []string{"P14a", "P14b", "P14c"}},
	}
	for _, sc := range scenarios {
		t.Run(sc.scenario, func(t *testing.T) {
			opts := Options{Scenarios: []string{sc.scenario}, Releases: []string{ReleasePrompt}}
			failed := goalsOf(&Report{Options: opts, Failures: map[string]string{sc.key: "boom"}})
			unreached := goalsOf(&Report{Options: opts})
			for _, id := range sc.ids {
				if g := failed[id]; g.Status != Miss || !strings.Contains(g.Detail, "scenario failed: boom") {
					t.Errorf("failed: %s %s %q, want MISS with the error", id, g.Status, g.Detail)
				}
				if g := unreached[id]; g.Status != Miss || !strings.Contains(g.Detail, "did not run") && !strings.Contains(g.Detail, "not measured in a run that selected") {
					t.Errorf("not reached: %s %s %q, want MISS", id, g.Status, g.Detail)
				}
			}
			for id, g := range failed {
				if !slices.Contains(sc.ids, id) && g.Status != NotRun && id != "P8a-settle" {
					t.Errorf("%s: %s, want NOT RUN (its scenario was not selected)", id, g.Status)
				}
			}
		})
	}
}

// TestUnmeasuredGoalMiss: a goal whose scenario ran but could not
// measure what it names is MISS with the reason.
func TestUnmeasuredGoalMiss(t *testing.T) {
	churn := func() *Churn {
		return &Churn{Release: ReleasePrompt, Join: Quantiles{Count: 4, P50: 1}, JoinRounds: Quantiles{Count: 4, P50: 1, P99: 2},
			Crash: Quantiles{Count: 2, Max: 11}, CrashBound: 12, Moved: 100, Minimum: 100}
	}
	work := func() *WorkFigures {
		return &WorkFigures{Count: WorkRun{DrainSeconds: 50, Drained: true, Handled: 1000},
			Work: WorkRun{DrainSeconds: 30, Drained: true, BusiestOverMean: 1.04, ObservedMinutes: 1, Handled: 1000}}
	}
	cases := []struct {
		name   string
		report func() *Report
		id     string
		reason string
	}{
		{"crash never moved", func() *Report {
			c := churn()
			c.Crash.Count, c.CrashUnfinished = 0, 2
			return &Report{Churn: []*Churn{c}}
		}, "P4c/prompt", "the shards of 2 crashed members never all moved"},
		{"one crash of two never moved", func() *Report {
			c := churn()
			c.CrashUnfinished = 1
			return &Report{Churn: []*Churn{c}}
		}, "P4c/prompt", "the shards of 1 crashed members never all moved"},
		{"no join", func() *Report {
			c := churn()
			c.Join, c.JoinRounds = Quantiles{}, Quantiles{}
			return &Report{Churn: []*Churn{c}}
		}, "P4a/prompt", "not measured although the churn/prompt scenario ran"},
		{"work group not drained: P10b", func() *Report {
			w := work()
			w.Work.Drained, w.Work.DrainSeconds, w.Work.ObservedMinutes = false, 120, 0
			return &Report{Work: w}
		}, "P10b", "the work group did not drain"},
		{"work group not drained: P10c", func() *Report {
			w := work()
			w.Work.Drained, w.Work.DrainSeconds, w.Work.ObservedMinutes = false, 120, 0
			return &Report{Work: w}
		}, "P10c", "the work group did not drain"},
		{"drained at the end", func() *Report {
			w := work()
			w.Work.ObservedMinutes = 0
			return &Report{Work: w}
		}, "P10c", "no time left to observe"},
		{"work handled nothing", func() *Report { return &Report{Work: &WorkFigures{}} }, "P10a", "not measured although the work scenario ran"},
		{"a create failed", func() *Report {
			f := fleetFigures()
			f.CreateFailed = 3
			return &Report{Fleet: f}
		}, "P11e", "3 creates failed"},
		{"over the cap accepted", func() *Report {
			f := fleetFigures()
			f.OverCapRefused = false
			return &Report{Fleet: f}
		}, "P11e", "not refused with 409"},
		{"fleet without members", func() *Report {
			f := fleetFigures()
			f.Members = nil
			return &Report{Fleet: f}
		}, "P11b", "the fleet scenario ran no members"},
		{"scaling not drained", func() *Report {
			f := scalingFigures()
			f.Drained = false
			return &Report{Scaling: f}
		}, "P13b", "the backlog did not drain"},
		{"zombie cycles failed", func() *Report { return &Report{Sinks: &SinkFigures{ZombieError: "boom"}} }, "P14c", "not measured although the sinks scenario ran"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := goalsOf(c.report())[c.id]
			if g.Status != Miss || !strings.Contains(g.Detail, c.reason) {
				t.Errorf("%s: %s %q, want MISS with %q", c.id, g.Status, g.Detail, c.reason)
			}
		})
	}
}

// TestPhaseGoalsMiss: a goal measured from the phases of scenarios the run
// selected is MISS when it has no measure, with the error of the scenario
// that failed; one whose scenarios were not all selected stays NOT RUN.
func TestPhaseGoalsMiss(t *testing.T) {
	heartbeat := []string{ScenarioCeiling, ScenarioSteady, ScenarioBaseline, ScenarioMulti}
	failures := map[string]string{}
	for _, s := range heartbeat {
		failures[s] = "boom"
	}
	cases := []struct {
		name     string
		report   *Report
		miss     []string
		reason   string
		notRun   []string
		measured []string
	}{
		{"heartbeat scenarios failed", &Report{Options: Options{Scenarios: heartbeat, Store: coordproc.StoreRedis}, Failures: failures},
			[]string{"P1", "P2a", "P2b", "P3", "P3b", "P6a-coord", "P7a", "P8a-settle", "P8a-fenced", "P8a-retry", "P8a-p99", "P8a-core", "P8e"},
			"scenario failed: boom", []string{"P6a", "P6b", "P6c", "P7b", "P7c"}, nil},
		{"steady without a ceiling", &Report{Options: Options{Scenarios: []string{ScenarioSteady}, Store: coordproc.StoreRedis},
			Phases: []Phase{{Name: "steady/closed", Store: "redis", Requests: 100, StoreCommands: 1, Throughput: 10}}},
			[]string{"P6a-coord"}, "not measured in a run that selected steady", []string{"P1", "P3", "P3b", "P2b"}, []string{"P2a", "P7a"}},
		{"store phases missing", &Report{Options: Options{Scenarios: []string{ScenarioStore}, Store: coordproc.StoreMemory}},
			[]string{"P7a", "P7b", "P7c"}, "not measured in a run that selected store", []string{"P1", "P2a"}, nil},
		{"heap failed", &Report{Options: Options{Scenarios: []string{ScenarioHeap}}, Failures: map[string]string{ScenarioHeap: "boom"}},
			[]string{"P6a"}, "the heap scenario failed: boom", []string{"P6a-coord", "P6b"}, nil},
		{"groups failed", &Report{Options: Options{Scenarios: []string{ScenarioGroups}}, Failures: map[string]string{ScenarioGroups: "boom"}},
			[]string{"P6b", "P6c"}, "the groups scenario failed: boom", []string{"P6a"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			goals := goalsOf(c.report)
			for _, id := range c.miss {
				if g := goals[id]; g.Status != Miss || !strings.Contains(g.Detail, c.reason) {
					t.Errorf("%s: %s %q, want MISS with %q", id, g.Status, g.Detail, c.reason)
				}
			}
			for _, id := range c.notRun {
				if g := goals[id]; g.Status != NotRun {
					t.Errorf("%s: %s %q, want NOT RUN", id, g.Status, g.Detail)
				}
			}
			for _, id := range c.measured {
				if g := goals[id]; g.Status != Pass && g.Status != Miss || strings.Contains(g.Detail, "not measured") {
					t.Errorf("%s: %s %q, want measured", id, g.Status, g.Detail)
				}
			}
		})
	}
}
