package bench

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"
)

func TestExpectedMembers(t *testing.T) {
	cases := []struct {
		ingest   float64
		backlog  int64
		capacity float64
		shards   int
		want     int
	}{
		{180, 3600, 50, 16, 8}, // (180 + 180) ÷ 50 = 7.2
		{200, 4000, 50, 16, 8}, // exactly 8: no rounding up past it
		{180, 0, 50, 16, 4},    // keeping up alone: 3.6
		{0, 0, 50, 16, 1},      // at least one
		{2000, 0, 50, 16, 16},  // the shard count bounds it
	}
	for _, c := range cases {
		if got := expectedMembers(c.ingest, c.backlog, c.capacity, 20*time.Second, c.shards); got != c.want {
			t.Errorf("expectedMembers(%v, %d, %v, 20s, %d) = %d, want %d", c.ingest, c.backlog, c.capacity, c.shards, got, c.want)
		}
	}
}

func TestChanges(t *testing.T) {
	for _, c := range []struct {
		seq  []int
		want int
	}{{nil, 0}, {[]int{4}, 0}, {[]int{4, 4, 4}, 0}, {[]int{4, 5, 5, 4}, 2}, {[]int{4, 5, 6}, 2}} {
		if got := changes(c.seq); got != c.want {
			t.Errorf("changes(%v) = %d, want %d", c.seq, got, c.want)
		}
	}
}

func TestPromValue(t *testing.T) {
	text := `# HELP redis_stream_coord_lag_refresh_commands_total Redis commands.
# TYPE redis_stream_coord_lag_refresh_commands_total counter
redis_stream_coord_lag_refresh_commands_total{kind="dead_letters"} 2
redis_stream_coord_lag_refresh_commands_total{kind="observe"} 1.5e+06
redis_stream_coord_lag_refresh_commands_total_extra{kind="observe"} 7
redis_stream_coord_lag_refresh_round_trips_total 812
`
	if v, ok := promValue(text, "redis_stream_coord_lag_refresh_commands_total", map[string]string{"kind": "observe"}); !ok || v != 1.5e6 {
		t.Errorf("observe: %v %v", v, ok)
	}
	if v, ok := promValue(text, "redis_stream_coord_lag_refresh_commands_total", nil); !ok || v != 1.5e6+2 {
		t.Errorf("all kinds: %v %v", v, ok)
	}
	if v, ok := promValue(text, "redis_stream_coord_lag_refresh_round_trips_total", nil); !ok || v != 812 {
		t.Errorf("round trips: %v %v", v, ok)
	}
	if _, ok := promValue(text, "redis_stream_coord_lag_refresh_commands_total", map[string]string{"kind": "exists"}); ok {
		t.Error("a kind without a sample matched")
	}
}

// scalingFigures are synthetic figures of a scaling run whose every goal
// passes.
func scalingFigures() *ScalingFigures {
	predicted := 11.0
	return &ScalingFigures{Shards: 16, IdleGroups: 40, CapacityPerMember: 50, BaseRate: 100, BaseMembers: 3, StepRate: 180, Burst: 3600,
		RefreshSeconds: 1, TargetDrainSeconds: 20, Noise: 0.2, RedisServer: StoreOwn, TotalShards: 656,
		StepWindows: 2, ReachedWindow: 2, Expected: 8, ReachedValue: 8, PeakDesired: 8,
		Started: 8, PredictedSeconds: &predicted, DrainSeconds: 10, Drained: true,
		SteadyMembers: 4, SteadyWindows: 20, Changes: 1, SteadyExpected: 4,
		Rounds: 20, RoundTrips: 25, Commands: map[string]int64{"observe": 3 * 20 * 656, "exists": 205, "dead_letters": 0},
		RedisXInfoStream: 20 * 656, RedisMemoryUsage: 20 * 656,
		Windows: []ScalingWindow{{Phase: phaseStep, Index: 2, Desired: 8, Recommended: 8, Expected: 8, IngestRate: 350, ConsumeRatePerMember: 48, Backlog: 3600}}}
}

func TestScalingGoals(t *testing.T) {
	cases := []struct {
		name   string
		change func(f *ScalingFigures)
		want   map[string]string
	}{
		{"all pass", func(*ScalingFigures) {}, map[string]string{"P13a": Pass, "P13b": Pass, "P13c": Pass, "P13d": Pass}},
		{"slow signal", func(f *ScalingFigures) { f.ReachedWindow, f.StepWindows = 4, 4 }, map[string]string{"P13a": Miss}},
		{"never reached", func(f *ScalingFigures) { f.ReachedWindow, f.StepWindows = 0, 2 }, map[string]string{"P13a": Miss}},
		// |10 − 13| ÷ 10 = 0.3.
		{"prediction off", func(f *ScalingFigures) { *f.PredictedSeconds = 13 }, map[string]string{"P13b": Miss}},
		{"predicted never", func(f *ScalingFigures) { f.PredictedSeconds = nil }, map[string]string{"P13b": Miss}},
		{"not drained", func(f *ScalingFigures) { f.Drained = false }, map[string]string{"P13b": Miss}},
		{"flapping", func(f *ScalingFigures) { f.Changes = 2 }, map[string]string{"P13c": Miss}},
		{"steady cut short", func(f *ScalingFigures) { f.SteadyWindows = 12 }, map[string]string{"P13c": Miss}},
		// 140 round trips in 20 rounds over 656 shards: 1.07 per 100.
		{"too many round trips", func(f *ScalingFigures) { f.RoundTrips = 140 }, map[string]string{"P13d": Miss}},
		{"status reads of its own", func(f *ScalingFigures) { f.Commands["observe"] += 16 }, map[string]string{"P13d": Miss}},
		{"Redis saw more reads", func(f *ScalingFigures) { f.RedisXInfoStream += 16 }, map[string]string{"P13d": Miss}},
		// An external server counts other clients: only the refresher's own
		// counts decide.
		{"external server", func(f *ScalingFigures) { f.RedisServer, f.RedisXInfoStream = StoreExternal, 1 }, map[string]string{"P13d": Pass}},
		{"not run", func(f *ScalingFigures) { *f = ScalingFigures{} }, map[string]string{"P13a": NotRun, "P13b": NotRun, "P13c": NotRun, "P13d": NotRun}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := scalingFigures()
			c.change(f)
			got := map[string]string{}
			for _, g := range (&Report{Scaling: f}).scalingGoals() {
				got[g.ID] = g.Status
			}
			for id, want := range c.want {
				if got[id] != want {
					t.Errorf("%s: %s, want %s", id, got[id], want)
				}
			}
		})
	}
	f := scalingFigures()
	g := drainGoal(f)
	if math.Abs(g.Measured-0.1) > 1e-9 {
		t.Errorf("P13b measured %v, want |10 − 11| ÷ 10 = 0.1", g.Measured)
	}
	if d := refresherGoal(f); math.Abs(d.Measured-25.0/20/6.56) > 1e-9 {
		t.Errorf("P13d measured %v, want 25 round trips ÷ 20 rounds ÷ 6.56 hundred shards", d.Measured)
	}
}

// TestPrintScaling: the table shows the last warm-up window, every step,
// drain and steady window, and only the settle windows where something
// changed.
func TestPrintScaling(t *testing.T) {
	f := scalingFigures()
	f.Windows = []ScalingWindow{
		{Phase: phaseWarmup, Index: 1, Desired: 3},
		{Phase: phaseWarmup, Index: scalingWarmup, Desired: 3, Recommended: 3, Members: 3},
		{Phase: phaseStep, Index: 1, Desired: 8, Recommended: 8, Expected: 8, Members: 3},
		{Phase: phaseSettle, Index: 1, Desired: 8, Recommended: 4, Members: 8},
		{Phase: phaseSettle, Index: 2, Desired: 8, Recommended: 4, Members: 8},
		{Phase: phaseSettle, Index: 3, Desired: 4, Recommended: 4, Members: 8},
		{Phase: phaseSteady, Index: 1, Desired: 4, Recommended: 4, Members: 4},
		{Phase: phaseSteady, Index: 2, Desired: 4, Recommended: 4, Members: 4},
	}
	var out bytes.Buffer
	(&Report{Scaling: f}).printScaling(&out)
	rows := 0
	for line := range strings.SplitSeq(out.String(), "\n") {
		if f := strings.Fields(line); len(f) > 1 && (f[0] == phaseWarmup || f[0] == phaseStep || f[0] == phaseSettle || f[0] == phaseSteady) {
			rows++
		}
	}
	if rows != 6 {
		t.Errorf("%d rows, want 6 (warm-up 15, step 1, settle 1 and 3, steady 1 and 2):\n%s", rows, out.String())
	}
}
