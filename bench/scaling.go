package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/redis-stream-coordinator/coordinator/client"
	"github.com/redis-stream-coordinator/coordinator/config"
	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/coordproc"
	"github.com/redis-stream-coordinator/coordinator/metrics"
)

// The scaling scenario (goals P13a–d, issue 43): one coordinator on Redis
// whose lag refresher runs every scalingRefresh, an evaluation window of
// the consumption status and the scaling signal; one group of
// scalingShards shards read by client.Consumer members of one worker whose
// handler costs scalingCost per entry (a member handles at most
// 1/scalingCost entries/s), producers at a set rate spread evenly over the
// shards; scalingIdleGroups more groups of scalingShards shards, their
// streams created and empty, beside it. The coordinator's status.* keys
// are the defaults; scaling.target-drain-time and scale-down-delay are
// scalingTargetDrain and scalingScaleDownDelay.
//
//   - warm-up: scalingBaseMembers members keep up with scalingBaseRate for
//     scalingWarmup windows;
//   - step: scalingBurst entries are added at once and the rate rises to
//     scalingStepRate; each window (a new evaluatedAt on GET …/scaling)
//     the bench computes the members that drain the backlog it reads
//     (XINFO GROUPS) within the target while keeping up, from the true
//     rate and capacity (expectedMembers), until desiredMembers reaches it
//     (P13a), at most scalingStepWindows windows;
//   - drain: the bench runs desiredMembers members (starting the missing
//     ones), records predictedDrainSeconds then, and times the backlog
//     down to scalingDrained entries (P13b);
//   - settle: once desiredMembers equals recommendedMembers for
//     scalingSettleWindows windows (a fall waits for the scale-down delay)
//     the bench runs that many members, for scalingHandover windows;
//   - steady: the rate is scalingStepRate times a factor drawn uniformly
//     in [1 − scalingNoise, 1 + scalingNoise] each window, the members
//     fixed, for scalingSteadyWindows windows: the changes of
//     desiredMembers (P13c), and the lag refresher's round trips and
//     commands (its metrics) and the Redis server's stream reads over them
//     (P13d), with GET …/status and …/scaling answered every window.
const (
	scalingShards     = 16
	scalingIdleGroups = 40
	scalingCost       = 20 * time.Millisecond
	// scalingBatch is the members' XREADGROUP COUNT: small, so that few
	// entries wait delivered and not handled, and the lag the signal sees
	// is nearly the entries not handled.
	scalingBatch       = 10
	scalingBaseRate    = 100.0
	scalingBaseMembers = 3
	scalingStepRate    = 180.0
	scalingBurst       = 3600
	scalingRefresh     = time.Second
	scalingTargetDrain = 20 * time.Second
	// scalingScaleDownDelay is longer than the steady phase, so that a
	// fall of the signal there would take longer than the phase.
	scalingScaleDownDelay = 30 * time.Second
	scalingWarmup         = 15
	scalingStepWindows    = 10
	scalingSettleWindows  = 5
	// scalingSettleMax bounds the settle phase in windows: the scale-down
	// delay plus twenty.
	scalingSettleMax = 50
	// scalingHandover is the windows after the members were set to the
	// settled signal before the steady phase: a status window
	// (status.window's default), so that the steady windows' rates are
	// measured on those members alone.
	scalingHandover      = 10
	scalingSteadyWindows = 20
	scalingNoise         = 0.2
	// scalingDrained is the backlog (entries not delivered, all shards)
	// under which the group counts as drained: half a second of the step
	// rate.
	scalingDrained  = 90
	scalingMaxDrain = 90 * time.Second
	scalingSeed     = 43
	// scalingPoll is how often the bench reads …/scaling (and, draining,
	// the backlog).
	scalingPoll = 100 * time.Millisecond
)

// ScalingFigures are the scaling scenario's figures.
type ScalingFigures struct {
	Shards     int `json:"shards"`
	IdleGroups int `json:"idleGroups"`
	// CapacityPerMember is the entries/s one member handles at most
	// (1 ÷ CostMicros).
	CapacityPerMember     float64 `json:"capacityPerMember"`
	CostMicros            int64   `json:"costMicrosPerEntry"`
	BaseRate              float64 `json:"baseRate"`
	BaseMembers           int     `json:"baseMembers"`
	StepRate              float64 `json:"stepRate"`
	Burst                 int     `json:"burst"`
	RefreshSeconds        float64 `json:"refreshSeconds"`
	TargetDrainSeconds    float64 `json:"targetDrainSeconds"`
	ScaleDownDelaySeconds float64 `json:"scaleDownDelaySeconds"`
	Noise                 float64 `json:"noise"`

	// Step (P13a): the windows watched after the step; ReachedWindow is
	// the first (1-based) whose desiredMembers, ReachedValue, was at least
	// Expected, the members the bench computed for it (0: none within
	// StepWindows, then Expected is the last window's); PeakDesired the
	// highest desiredMembers of the step and drain phases.
	StepWindows   int `json:"stepWindows"`
	ReachedWindow int `json:"reachedWindow"`
	Expected      int `json:"expectedMembers"`
	ReachedValue  int `json:"reachedDesiredMembers"`
	PeakDesired   int `json:"peakDesiredMembers"`

	// Drain (P13b): Started members ran (desiredMembers when the step
	// phase ended), PredictedSeconds is the signal's predictedDrainSeconds
	// then (nil: they cannot catch up, or not measured) and DrainSeconds
	// the time from then until the backlog fell under scalingDrained
	// (Drained false: it did not within scalingMaxDrain).
	Started          int      `json:"startedMembers"`
	PredictedSeconds *float64 `json:"predictedDrainSeconds"`
	DrainSeconds     float64  `json:"drainSeconds"`
	Drained          bool     `json:"drained"`

	// Steady (P13c): SteadyMembers ran through SteadyWindows windows;
	// Changes counts the windows whose desiredMembers differed from the
	// window before (the first compared with the last settle window).
	SteadyMembers int `json:"steadyMembers"`
	SteadyWindows int `json:"steadyWindows"`
	Changes       int `json:"changes"`
	// SteadyExpected is the members that keep up with the steady rate
	// (expectedMembers without backlog), for comparison.
	SteadyExpected int `json:"steadyExpectedMembers"`

	// Refresher cost over the steady windows (P13d): Rounds lag refresher
	// rounds over TotalShards shards (every group's, all streams
	// existing); the deltas of lag_refresh_round_trips_total and of
	// lag_refresh_commands_total by kind; RedisXInfoStream and
	// RedisMemoryUsage the Redis server's XINFO STREAM and MEMORY USAGE
	// calls meanwhile (only the lag refresher sends them: one of each per
	// shard read), RedisServer whose server counted them.
	Rounds           int              `json:"rounds"`
	TotalShards      int              `json:"totalShards"`
	RoundTrips       float64          `json:"roundTrips"`
	Commands         map[string]int64 `json:"commandsByKind"`
	RedisXInfoStream int64            `json:"redisXinfoStream"`
	RedisMemoryUsage int64            `json:"redisMemoryUsage"`
	RedisServer      string           `json:"redisServer"`

	// Windows are every evaluation window the bench saw, by phase.
	Windows []ScalingWindow `json:"windows"`
}

// ScalingWindow is one evaluation window: GET …/scaling's answer after a
// lag refresher round, and the backlog the bench read right after.
type ScalingWindow struct {
	Phase string `json:"phase"`
	// Index counts the phase's windows from 1; Seconds is EvaluatedAt
	// from the step (negative before it).
	Index                int              `json:"index"`
	EvaluatedAt          contract.Instant `json:"evaluatedAt"`
	Seconds              float64          `json:"secondsFromStep"`
	Desired              int              `json:"desiredMembers"`
	Recommended          int              `json:"recommendedMembers"`
	Members              int              `json:"members"`
	IngestRate           float64          `json:"ingestRate"`
	ConsumeRatePerMember float64          `json:"consumeRatePerMember"`
	Measured             bool             `json:"consumeRateMeasured"`
	Backlog              int64            `json:"backlog"`
	Predicted            *float64         `json:"predictedDrainSeconds"`
	// BenchBacklog is the entries not delivered the bench read (XINFO
	// GROUPS lag, all shards); Expected the members it computed from it
	// (step phase only).
	BenchBacklog int64 `json:"benchBacklog"`
	Expected     int   `json:"expectedMembers,omitempty"`
}

// Scaling phases.
const (
	phaseWarmup = "warmup"
	phaseStep   = "step"
	phaseDrain  = "drain"
	phaseSettle = "settle"
	phaseSteady = "steady"
)

// expectedMembers is the fewest members of capacity entries/s each that
// keep up with ingest entries/s and drain backlog within target, bounded
// by the shard count (more members than shards read nothing).
func expectedMembers(ingest float64, backlog int64, capacity float64, target time.Duration, shards int) int {
	need := (ingest + float64(backlog)/target.Seconds()) / capacity
	return min(max(int(math.Ceil(need-1e-9)), 1), shards)
}

// changes counts the values of seq that differ from the one before.
func changes(seq []int) int {
	n := 0
	for i := 1; i < len(seq); i++ {
		if seq[i] != seq[i-1] {
			n++
		}
	}
	return n
}

// scalingRun is the scenario while it runs.
type scalingRun struct {
	r     *Runner
	s     *session
	f     *ScalingFigures
	key   group.Key
	keys  []string
	rdb   *goredis.Client
	coord *client.Coordinator
	rate  atomic.Uint64 // math.Float64bits of the produced rate
	noise atomic.Bool
	step  time.Time
	last  contract.Instant // evaluatedAt of the last window seen

	ctx     context.Context
	wg      sync.WaitGroup
	errs    chan error
	members []context.CancelFunc
}

func (r *Runner) runScaling(ctx context.Context) error {
	env := []string{
		config.EnvName("scaling.target-drain-time") + "=" + scalingTargetDrain.String(),
		config.EnvName("scaling.scale-down-delay") + "=" + scalingScaleDownDelay.String(),
	}
	s, err := r.openSession(ctx, "scaling", coordproc.StoreRedis, true, scalingShards, r.opts.LeaseTTL,
		func(c *coordproc.ServerConfig) { c.OffsetCacheTTL, c.Env = scalingRefresh, env })
	if err != nil {
		return err
	}
	defer s.close(ctx)
	f := &ScalingFigures{Shards: scalingShards, IdleGroups: scalingIdleGroups, CapacityPerMember: float64(time.Second) / float64(scalingCost),
		CostMicros: scalingCost.Microseconds(), BaseRate: scalingBaseRate, BaseMembers: scalingBaseMembers, StepRate: scalingStepRate,
		Burst: scalingBurst, RefreshSeconds: scalingRefresh.Seconds(), TargetDrainSeconds: scalingTargetDrain.Seconds(),
		ScaleDownDelaySeconds: scalingScaleDownDelay.Seconds(), Noise: scalingNoise, RedisServer: r.redis.kind,
		TotalShards: (scalingIdleGroups + 1) * scalingShards}
	r.report.Scaling = f
	rdb := goredis.NewClient(&goredis.Options{Addr: r.redis.addr, PoolSize: 64})
	defer rdb.Close()
	prefix := s.cfg.KeyPrefix
	sr := &scalingRun{r: r, s: s, f: f, key: group.Key{StreamPrefix: prefix + "-main", ConsumerGroup: "scaling"}, rdb: rdb,
		coord: client.NewCoordinator(s.api.Base, client.WithBasicAuth(s.api.User, s.api.Password)), errs: make(chan error, 64)}
	if err := sr.create(ctx, prefix); err != nil {
		return err
	}
	r.logf("scaling: 1 group of %d shards and %d idle ones; members of 1 worker at %v per entry (%.0f entries/s each); refresh %v, target drain %v, scale-down delay %v",
		scalingShards, scalingIdleGroups, scalingCost, f.CapacityPerMember, scalingRefresh, scalingTargetDrain, scalingScaleDownDelay)
	rctx, stop := context.WithCancel(ctx)
	sr.ctx = rctx
	sr.setRate(scalingBaseRate)
	sr.wg.Go(func() { sr.errs <- sr.produce(rctx) })
	err = sr.run(rctx)
	stop()
	for i := range f.Windows {
		if w := &f.Windows[i]; !sr.step.IsZero() {
			w.Seconds = math.Round(w.EvaluatedAt.Time().Sub(sr.step).Seconds()*1000) / 1000
		}
	}
	sr.wg.Wait()
	close(sr.errs)
	for e := range sr.errs {
		err = errors.Join(err, e)
	}
	if err != nil {
		return fmt.Errorf("scaling: %w", err)
	}
	return nil
}

// create creates the main group, its streams and consumer group, and the
// idle groups with their streams (empty, so that the lag refresher reads
// them).
func (sr *scalingRun) create(ctx context.Context, prefix string) error {
	pipe := sr.rdb.Pipeline()
	for g := range scalingIdleGroups + 1 {
		key := sr.key
		if g > 0 {
			key = group.Key{StreamPrefix: fmt.Sprintf("%s-idle-%02d", prefix, g), ConsumerGroup: "idle"}
		}
		if err := sr.s.api.CreateGroup(ctx, key, scalingShards); err != nil {
			return err
		}
		for i := range scalingShards {
			k := contract.StreamKey(key.StreamPrefix, i)
			pipe.XGroupCreateMkStream(ctx, k, key.ConsumerGroup, "$")
			if g == 0 {
				sr.keys = append(sr.keys, k)
			}
		}
	}
	_, err := pipe.Exec(ctx)
	return err
}

func (sr *scalingRun) setRate(v float64) { sr.rate.Store(math.Float64bits(v)) }

// produce adds the rate's entries, spread evenly over the shards, every
// 100 ms until ctx ends; with noise on, the rate is multiplied by a factor
// drawn every scalingRefresh (seeded: a run draws the same factors).
func (sr *scalingRun) produce(ctx context.Context) error {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	rng := rand.New(rand.NewPCG(scalingSeed, scalingSeed)) // #nosec G404 -- a replayable schedule
	ticksPerWindow := int(scalingRefresh / (100 * time.Millisecond))
	factor, owed := 1.0, make([]float64, len(sr.keys))
	for tick := 0; ; tick++ {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		switch {
		case !sr.noise.Load():
			factor = 1
		case tick%ticksPerWindow == 0:
			factor = 1 - scalingNoise + 2*scalingNoise*rng.Float64()
		}
		per := math.Float64frombits(sr.rate.Load()) * factor / float64(len(sr.keys)) / 10
		pipe := sr.rdb.Pipeline()
		for s, key := range sr.keys {
			for owed[s] += per; owed[s] >= 1; owed[s]-- {
				pipe.XAdd(ctx, &goredis.XAddArgs{Stream: key, Values: []string{"v", "x"}})
			}
		}
		if _, err := pipe.Exec(ctx); err != nil && ctx.Err() == nil {
			return fmt.Errorf("produce: %w", err)
		}
	}
}

// burst adds n entries spread evenly over the shards at once.
func (sr *scalingRun) burst(ctx context.Context, n int) error {
	pipe := sr.rdb.Pipeline()
	for i := range n {
		pipe.XAdd(ctx, &goredis.XAddArgs{Stream: sr.keys[i%len(sr.keys)], Values: []string{"v", "x"}})
	}
	_, err := pipe.Exec(ctx)
	return err
}

// resize runs n members: it starts the missing ones or stops the last.
func (sr *scalingRun) resize(n int) error {
	for len(sr.members) < n {
		id := "scaling-" + strconv.Itoa(len(sr.members))
		p := &pacer{step: scalingCost}
		c, err := client.NewConsumer(client.ConsumerConfig{
			Member: client.MemberConfig{Coordinator: sr.coord, StreamPrefix: sr.key.StreamPrefix, Group: sr.key.ConsumerGroup,
				MemberID: id, Logger: slog.New(slog.DiscardHandler)},
			Redis: sr.rdb, Workers: 1, BatchSize: scalingBatch,
			Handler: func(ctx context.Context, _ client.Message) error { return p.wait(ctx) },
		})
		if err != nil {
			return err
		}
		mctx, cancel := context.WithCancel(sr.ctx)
		sr.members = append(sr.members, cancel)
		sr.wg.Go(func() { sr.errs <- ignoreCanceled(c.Run(mctx)) })
	}
	for len(sr.members) > n {
		last := len(sr.members) - 1
		sr.members[last]()
		sr.members = sr.members[:last]
	}
	return nil
}

// run runs the phases after the groups were created.
func (sr *scalingRun) run(ctx context.Context) error {
	f, r := sr.f, sr.r
	if err := sr.resize(scalingBaseMembers); err != nil {
		return err
	}
	for range scalingWarmup {
		if _, err := sr.window(ctx, phaseWarmup); err != nil {
			return err
		}
	}
	sr.step = time.Now()
	sr.setRate(scalingStepRate)
	if err := sr.burst(ctx, scalingBurst); err != nil {
		return err
	}
	var w ScalingWindow
	for f.StepWindows < scalingStepWindows && f.ReachedWindow == 0 {
		var err error
		if w, err = sr.window(ctx, phaseStep); err != nil {
			return err
		}
		f.StepWindows++
		f.Expected = w.Expected
		if w.Desired >= w.Expected {
			f.ReachedWindow, f.ReachedValue = f.StepWindows, w.Desired
		}
	}
	r.logf("scaling: step to %.0f/s with %d entries at once: desiredMembers %d at window %d, %d expected (reached at window %d)",
		scalingStepRate, scalingBurst, w.Desired, f.StepWindows, f.Expected, f.ReachedWindow)
	if err := sr.drain(ctx, w); err != nil {
		return err
	}
	settled := 0
	for i := 0; i < scalingSettleMax && settled < scalingSettleWindows; i++ {
		var err error
		if w, err = sr.window(ctx, phaseSettle); err != nil {
			return err
		}
		settled++
		if w.Desired != w.Recommended {
			settled = 0
		}
	}
	f.SteadyMembers = w.Desired
	f.SteadyExpected = expectedMembers(scalingStepRate, 0, f.CapacityPerMember, scalingTargetDrain, scalingShards)
	if err := sr.resize(f.SteadyMembers); err != nil {
		return err
	}
	for range scalingHandover {
		var err error
		if w, err = sr.window(ctx, phaseSettle); err != nil {
			return err
		}
	}
	return sr.steady(ctx, w.Desired)
}

// window waits for the next evaluation window of the main group (a new
// evaluatedAt on GET …/scaling) and records it under phase.
func (sr *scalingRun) window(ctx context.Context, phase string) (ScalingWindow, error) {
	deadline := time.Now().Add(30 * scalingRefresh)
	for {
		w, ok, err := sr.poll(ctx, phase)
		if err != nil || ok {
			return w, err
		}
		if time.Now().After(deadline) {
			return w, fmt.Errorf("no evaluation of %s for %v", sr.key, 30*scalingRefresh)
		}
		if err := sleepCtx(ctx, scalingPoll); err != nil {
			return w, err
		}
	}
}

// poll reads GET …/scaling once; ok is true when it is a new window, which
// it records with the backlog the bench reads right after.
func (sr *scalingRun) poll(ctx context.Context, phase string) (w ScalingWindow, ok bool, err error) {
	var v contract.ScalingView
	if err := getJSON(ctx, sr.s.api, sr.s.api.Base+groupPath(sr.key)+"/scaling", &v); err != nil {
		return w, false, err
	}
	if v.EvaluatedAt.IsZero() || v.EvaluatedAt == sr.last {
		return w, false, nil
	}
	sr.last = v.EvaluatedAt
	lag, err := sr.lag(ctx)
	if err != nil {
		return w, false, err
	}
	f := sr.f
	index := 1
	if n := len(f.Windows); n > 0 && f.Windows[n-1].Phase == phase {
		index = f.Windows[n-1].Index + 1
	}
	w = ScalingWindow{Phase: phase, Index: index, EvaluatedAt: v.EvaluatedAt, Desired: v.DesiredMembers, Recommended: v.RecommendedMembers, Members: v.Members,
		IngestRate: v.IngestRate, ConsumeRatePerMember: v.ConsumeRatePerMember, Measured: v.ConsumeRateMeasured, Backlog: v.Backlog,
		Predicted: v.PredictedDrainSeconds, BenchBacklog: lag}
	switch phase {
	case phaseStep:
		w.Expected = expectedMembers(scalingStepRate, lag, f.CapacityPerMember, scalingTargetDrain, scalingShards)
		fallthrough
	case phaseDrain:
		f.PeakDesired = max(f.PeakDesired, w.Desired)
	}
	f.Windows = append(f.Windows, w)
	return w, true, nil
}

// lag is the main group's entries not delivered yet, all shards (XINFO
// GROUPS).
func (sr *scalingRun) lag(ctx context.Context) (int64, error) {
	pipe := sr.rdb.Pipeline()
	cmds := make([]*goredis.XInfoGroupsCmd, len(sr.keys))
	for i, key := range sr.keys {
		cmds[i] = pipe.XInfoGroups(ctx, key)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return 0, err
	}
	var total int64
	for _, cmd := range cmds {
		for _, gi := range cmd.Val() {
			if gi.Name == sr.key.ConsumerGroup {
				total += max(gi.Lag, 0)
			}
		}
	}
	return total, nil
}

// drain runs the members w's desiredMembers asks for, records its
// predictedDrainSeconds and times the backlog down to scalingDrained,
// recording the windows meanwhile.
func (sr *scalingRun) drain(ctx context.Context, w ScalingWindow) error {
	f := sr.f
	f.Started, f.PredictedSeconds = max(w.Desired, 1), w.Predicted
	start := time.Now()
	if err := sr.resize(f.Started); err != nil {
		return err
	}
	for time.Since(start) < scalingMaxDrain {
		lag, err := sr.lag(ctx)
		if err != nil {
			return err
		}
		if lag <= scalingDrained {
			f.DrainSeconds, f.Drained = time.Since(start).Seconds(), true
			break
		}
		if _, _, err := sr.poll(ctx, phaseDrain); err != nil {
			return err
		}
		if err := sleepCtx(ctx, scalingPoll); err != nil {
			return err
		}
	}
	if !f.Drained {
		f.DrainSeconds = time.Since(start).Seconds()
	}
	predicted := "never (cannot catch up)"
	if p := f.PredictedSeconds; p != nil {
		predicted = fmt.Sprintf("%.1f s", *p)
	}
	sr.r.logf("scaling: %d members drained the backlog in %.1f s (drained: %v), predicted %s", f.Started, f.DrainSeconds, f.Drained, predicted)
	return nil
}

// steady runs scalingSteadyWindows windows of noisy load on the members
// running, counting the changes of desiredMembers from prev (the window
// before), and takes the lag refresher's and the Redis server's counters
// around them. It starts right after a window, so the counters span
// exactly the rounds of the windows it sees.
func (sr *scalingRun) steady(ctx context.Context, prev int) error {
	f := sr.f
	sr.noise.Store(true)
	before, err := sr.refresher(ctx)
	if err != nil {
		return err
	}
	redisBefore, err := sr.s.probe.Sample(ctx)
	if err != nil {
		return err
	}
	seq := []int{prev}
	for range scalingSteadyWindows {
		w, err := sr.window(ctx, phaseSteady)
		if err != nil {
			return err
		}
		seq = append(seq, w.Desired)
		var status contract.StatusView
		if err := getJSON(ctx, sr.s.api, sr.s.api.Base+groupPath(sr.key)+"/status", &status); err != nil {
			return err
		}
	}
	after, err := sr.refresher(ctx)
	if err != nil {
		return err
	}
	redisAfter, err := sr.s.probe.Sample(ctx)
	if err != nil {
		return err
	}
	d := redisAfter.Sub(redisBefore)
	f.SteadyWindows, f.Changes, f.Rounds = len(seq)-1, changes(seq), len(seq)-1
	f.RoundTrips = after.roundTrips - before.roundTrips
	f.Commands = map[string]int64{}
	for _, k := range metrics.LagRefreshKinds {
		f.Commands[k] = int64(after.commands[k] - before.commands[k])
	}
	f.RedisXInfoStream, f.RedisMemoryUsage = d.ByCommand["xinfo|stream"], d.ByCommand["memory|usage"]
	sr.r.logf("scaling: %d steady windows on %d members: desiredMembers %v (%d changes); refresher: %.0f round trips, commands %v; Redis XINFO STREAM %d, MEMORY USAGE %d",
		f.SteadyWindows, f.SteadyMembers, seq, f.Changes, f.RoundTrips, f.Commands, f.RedisXInfoStream, f.RedisMemoryUsage)
	return nil
}

// refresherCounters are the lag refresher's counters of the coordinator.
type refresherCounters struct {
	roundTrips float64
	commands   map[string]float64
}

// refresher scrapes the coordinator's lag refresher counters
// (lag_refresh_round_trips_total, lag_refresh_commands_total by kind).
func (sr *scalingRun) refresher(ctx context.Context) (refresherCounters, error) {
	var b strings.Builder
	if _, err := get(ctx, sr.s.srv.Root+"/metrics", &b); err != nil {
		return refresherCounters{}, fmt.Errorf("scrape: %w", err)
	}
	text := b.String()
	c := refresherCounters{commands: map[string]float64{}}
	var ok bool
	if c.roundTrips, ok = promValue(text, metrics.Namespace+"_lag_refresh_round_trips_total", nil); !ok {
		return c, errors.New("scrape: no lag_refresh_round_trips_total")
	}
	for _, k := range metrics.LagRefreshKinds {
		c.commands[k], _ = promValue(text, metrics.Namespace+"_lag_refresh_commands_total", map[string]string{"kind": k})
	}
	return c, nil
}

// promValue sums the samples of the Prometheus text exposition text named
// name whose labels include labels; ok is false when none matched.
func promValue(text, name string, labels map[string]string) (sum float64, ok bool) {
	for line := range strings.SplitSeq(text, "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		series, value, found := strings.Cut(line, " ")
		if !found {
			continue
		}
		metric, set, _ := strings.Cut(series, "{")
		if metric != name {
			continue
		}
		match := true
		for k, v := range labels {
			match = match && strings.Contains(","+strings.TrimSuffix(set, "}")+",", ","+k+"="+strconv.Quote(v)+",")
		}
		if !match {
			continue
		}
		x, err := strconv.ParseFloat(strings.Fields(value)[0], 64)
		if err != nil {
			continue
		}
		sum, ok = sum+x, true
	}
	return sum, ok
}

// getJSON decodes the answer to a GET of url as the admin user into v;
// an answer other than 200 is an error.
func getJSON(ctx context.Context, api *API, url string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	req.SetBasicAuth(api.User, api.Password)
	res, err := api.Client.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return err
	}
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s: %s", url, res.Status, body)
	}
	return json.Unmarshal(body, v)
}

// scalingGoals evaluates P13a–d (issue 43) from the scaling scenario.
func (r *Report) scalingGoals() []Goal {
	f := r.Scaling
	if f == nil {
		f = &ScalingFigures{}
	}
	return []Goal{stepGoal(f), drainGoal(f), steadyGoal(f), refresherGoal(f)}
}

// stepGoal is P13a: the windows after the step until desiredMembers is
// at least the members the bench expects; MISS when it never was within
// the windows watched.
func stepGoal(f *ScalingFigures) Goal {
	measured := float64(f.ReachedWindow)
	reached := fmt.Sprintf("desiredMembers %d at window %d", f.ReachedValue, f.ReachedWindow)
	if f.ReachedWindow == 0 {
		measured, reached = float64(f.StepWindows), fmt.Sprintf("desiredMembers below it for %d windows", f.StepWindows)
	}
	g := goal("P13a", "windows after a step until desiredMembers reaches the members that drain within the target", measured, 3, true, f.StepWindows > 0,
		fmt.Sprintf("%.0f → %.0f entries/s plus %d entries at once on %d members of %.0f entries/s, %d shards, target drain %.0f s, a window every %.0f s: %d members expected, %s, peak %d",
			f.BaseRate, f.StepRate, f.Burst, f.BaseMembers, f.CapacityPerMember, f.Shards, f.TargetDrainSeconds, f.RefreshSeconds,
			f.Expected, reached, f.PeakDesired))
	if g.Status == Pass && f.ReachedWindow == 0 {
		g.Status = Miss
	}
	return g
}

// drainGoal is P13b: |actual − predicted| ÷ actual drain time with the
// members desiredMembers asked for at the end of the step phase; MISS when
// they never drained the backlog.
func drainGoal(f *ScalingFigures) Goal {
	predicted := "never (they cannot catch up)"
	var errRatio float64
	if p := f.PredictedSeconds; p != nil {
		predicted = fmt.Sprintf("%.1f s", *p)
		errRatio = ratio(math.Abs(f.DrainSeconds-*p), f.DrainSeconds)
	}
	inputs := ""
	if w, ok := f.lastWindow(phaseStep); ok {
		inputs = fmt.Sprintf(" from ingestRate %.1f/s (true %.0f), consumeRatePerMember %.1f/s (true %.0f), backlog %d",
			w.IngestRate, f.StepRate, w.ConsumeRatePerMember, f.CapacityPerMember, w.Backlog)
	}
	g := goal("P13b", "drain time with desiredMembers members, |actual − predicted| ÷ actual", errRatio, 0.25, true, f.Drained && f.DrainSeconds > 0,
		fmt.Sprintf("%d members started: predicted %s%s; drained (under %d entries) in %.1f s", f.Started, predicted, inputs, scalingDrained, f.DrainSeconds))
	if f.PredictedSeconds == nil && g.Status != NotRun {
		g.Status = Miss
	}
	return g.missIf(f.Started > 0 && !f.Drained, fmt.Sprintf("the backlog did not drain in %.0f s", f.DrainSeconds))
}

// lastWindow returns the last window of phase.
func (f *ScalingFigures) lastWindow(phase string) (ScalingWindow, bool) {
	for i := len(f.Windows) - 1; i >= 0; i-- {
		if f.Windows[i].Phase == phase {
			return f.Windows[i], true
		}
	}
	return ScalingWindow{}, false
}

// steadyGoal is P13c: changes of desiredMembers over the steady windows;
// MISS when the steady load ended early.
func steadyGoal(f *ScalingFigures) Goal {
	return goal("P13c", fmt.Sprintf("changes of desiredMembers over %d windows of steady load, ±%.0f %% rate noise", scalingSteadyWindows, f.Noise*100),
		float64(f.Changes), 1, true, f.SteadyWindows >= scalingSteadyWindows,
		fmt.Sprintf("%.0f entries/s × U(%.1f, %.1f) drawn each window, %d windows on %d members (the settled signal; %d keep up)",
			f.StepRate, 1-f.Noise, 1+f.Noise, f.SteadyWindows, f.SteadyMembers, f.SteadyExpected)).
		missIf(f.SteadyWindows > 0 && f.SteadyWindows < scalingSteadyWindows, fmt.Sprintf("the steady load ended after %d of %d windows", f.SteadyWindows, scalingSteadyWindows))
}

// refresherGoal is P13d: the lag refresher's round trips per 100 shards
// per window; MISS too when the status evaluation sent commands of its
// own: the refresher's shard reads must be 3 per shard per round and, on
// the run's own Redis, the server must have seen one XINFO STREAM and one
// MEMORY USAGE per shard read, no more.
func refresherGoal(f *ScalingFigures) Goal {
	perHundred := 0.0
	if f.Rounds > 0 && f.TotalShards > 0 {
		perHundred = f.RoundTrips / float64(f.Rounds) / (float64(f.TotalShards) / 100)
	}
	observe := f.Commands["observe"]
	reads := int64(f.Rounds * f.TotalShards)
	g := goal("P13d", "status evaluation: Redis round trips per 100 shards per window (the lag refresher's)", perHundred, 1, true, f.Rounds > 0,
		fmt.Sprintf("%.0f round trips in %d rounds over %d shards (%d groups); refresher commands %s (observe = 3 × %d shard reads); Redis XINFO STREAM %d, MEMORY USAGE %d (%s)",
			f.RoundTrips, f.Rounds, f.TotalShards, f.IdleGroups+1, formatCounts(f.Commands), reads, f.RedisXInfoStream, f.RedisMemoryUsage, serverNote(f.RedisServer)))
	if g.Status == Pass && (observe != 3*reads || f.RedisServer == StoreOwn && (f.RedisXInfoStream != reads || f.RedisMemoryUsage != reads)) {
		g.Status = Miss
		g.Detail += "; more commands than the shard reads need"
	}
	return g
}

// printScaling writes the scaling scenario's windows, if any.
func (r *Report) printScaling(w io.Writer) {
	f := r.Scaling
	if f == nil || len(f.Windows) == 0 {
		return
	}
	fmt.Fprintf(w, "\nscaling: %d shards (+%d idle groups), members of %.0f entries/s, %.0f → %.0f entries/s plus %d at once, target drain %.0f s, scale-down delay %.0f s:\n",
		f.Shards, f.IdleGroups, f.CapacityPerMember, f.BaseRate, f.StepRate, f.Burst, f.TargetDrainSeconds, f.ScaleDownDelaySeconds)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "phase\twindow\ts from step\tdesired\trecommended\texpected\tmembers\tingest/s\tconsume/s/member\tbacklog\tbench backlog\tpredicted s\t")
	var shown ScalingWindow
	for _, x := range f.Windows {
		same := x.Phase == shown.Phase && x.Desired == shown.Desired && x.Recommended == shown.Recommended && x.Members == shown.Members
		if x.Phase == phaseWarmup && x.Index < scalingWarmup || x.Phase == phaseSettle && same {
			continue
		}
		shown = x
		predicted, expected := "never", "–"
		if x.Predicted != nil {
			predicted = fmt.Sprintf("%.1f", *x.Predicted)
		}
		if x.Expected > 0 {
			expected = strconv.Itoa(x.Expected)
		}
		fmt.Fprintf(tw, "%s\t%d\t%.1f\t%d\t%d\t%s\t%d\t%.1f\t%.1f\t%d\t%d\t%s\t\n", x.Phase, x.Index, x.Seconds, x.Desired, x.Recommended, expected,
			x.Members, x.IngestRate, x.ConsumeRatePerMember, x.Backlog, x.BenchBacklog, predicted)
	}
	tw.Flush()
	fmt.Fprintln(w, "  (warmup: its last window; settle: the windows where desired, recommended or members changed; expected: the bench's count from the true rate and capacity)")
}
