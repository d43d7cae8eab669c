package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/redis-stream-coordinator/coordinator/client"
	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/coordproc"
)

// The work scenario (goals P10a–d, issue 32): groups of workShards shards
// on one coordinator, assigned by count and by work, run side by side on
// real Redis streams with the same skewed traffic: the workHot shards
// produce ten times the rate of the others, and every shard starts with
// workBacklog seconds of its rate unread. Each group has workMembers
// client.Consumer members whose handler costs a fixed time per entry
// (workCost per worker, Workers = capacity), so a member handles at most
// capacity ÷ workCost entries per second. One pair of groups has members
// of equal capacity (the goals), the other of workMixed capacities.
const (
	workShards   = 64
	workMembers  = 8
	workCapacity = 4 // workers (runtimeMaxConcurrency) of each member
	// workColdRate is a cold shard's rate (entries/s); a hot one has ten
	// times as much.
	workColdRate = 20.0
	// workCost is one worker's time per entry: 8 members × 4 workers ÷
	// 6.25 ms = 5,120 entries/s of capacity for 2,000 produced.
	workCost    = 6250 * time.Microsecond
	workBacklog = 10 * time.Second
	// workObserve is how long the run goes on after both groups drained,
	// counting moves; workMaxRun bounds the whole run.
	workObserve = 60 * time.Second
	workMaxRun  = 3 * time.Minute
	// workDrained is the backlog (entries not yet acknowledged, all
	// shards) under which a group counts as drained: half a second of its
	// production.
	workDrained = 1000
)

// workMixed are the capacities (workers) of the mixed pair's members: 22
// workers, 3,520 entries/s for 2,000 produced.
var workMixed = []int{1, 1, 2, 2, 4, 4, 4, 4}

// workHot are the hot shards: fixed, and two of them in one count block
// of 8 (as happens for 4 random hot shards among 8 members 59 % of the
// time).
var workHot = []int{3, 12, 13, 45}

// WorkFigures are the work scenario's figures.
type WorkFigures struct {
	Shards        int     `json:"shards"`
	Members       int     `json:"members"`
	Capacity      int     `json:"capacity"`
	Hot           []int   `json:"hotShards"`
	ColdRate      float64 `json:"coldRate"`
	CostMicros    int64   `json:"costMicrosPerEntry"`
	BacklogSecond float64 `json:"backlogSeconds"`
	// Count and Work are the runs of the pair of equal capacity (the
	// goals'); MixedCount and MixedWork those of the pair whose members
	// have the Mixed capacities.
	Count      WorkRun `json:"count"`
	Work       WorkRun `json:"work"`
	Mixed      []int   `json:"mixedCapacities"`
	MixedCount WorkRun `json:"mixedCount"`
	MixedWork  WorkRun `json:"mixedWork"`
}

// WorkRun is one group's run. Loads are by the produced rates and the
// final target assignment: each member's entries/s per unit of capacity.
type WorkRun struct {
	Assignor   string `json:"assignor"`
	Capacities []int  `json:"capacities"`
	// DrainSeconds is from the consumers' start until the backlog fell
	// under workDrained; Drained is false when it never did (then
	// DrainSeconds is the run's length, a lower bound).
	DrainSeconds float64 `json:"drainSeconds"`
	Drained      bool    `json:"drained"`
	// BusiestOverMean is the busiest member's load per capacity over the
	// mean (total load ÷ total capacity); Loads are entries/s per member.
	BusiestOverMean float64            `json:"busiestOverMean"`
	Loads           map[string]float64 `json:"loads"`
	// Moves counts shards whose target owner changed, in all and after
	// the group drained (MovesAfterDrain over ObservedMinutes).
	Moves           int     `json:"moves"`
	MovesAfterDrain int     `json:"movesAfterDrain"`
	ObservedMinutes float64 `json:"observedMinutes"`
	MovesPerMinute  float64 `json:"movesPerMinuteOnceBalanced"`
	// Fenced counts FENCED_MEMBER_EPOCH and UNKNOWN_MEMBER_ID answers the
	// members got.
	Fenced  int64 `json:"fenced"`
	Handled int64 `json:"handled"`
}

// workGroup is one group of the scenario while it runs.
type workGroup struct {
	run    *WorkRun
	name   string
	key    group.Key
	keys   []string
	fenced atomic.Int64
	// handled counts entries handled, all members.
	handled atomic.Int64
	// owners is the last target owner of each shard seen; moves the times
	// of the owner changes seen since.
	owners  map[int]string
	moves   []time.Time
	drained time.Time
}

func (r *Runner) runWork(ctx context.Context) error {
	s, err := r.openSession(ctx, "work", coordproc.StoreRedis, true, workShards, r.opts.LeaseTTL,
		func(c *coordproc.ServerConfig) { c.OffsetCacheTTL = time.Second })
	if err != nil {
		return err
	}
	defer s.close(ctx)
	prefix := "coord-bench:" + r.runID + "_work"
	probe := newRedisProbe(r.redis, prefix)
	rdb := goredis.NewClient(&goredis.Options{Addr: r.redis.addr, PoolSize: 64})
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		if err := probe.Cleanup(cctx); err != nil {
			r.logf("work: Redis cleanup: %v", err)
		}
		_ = rdb.Close()
	}()
	equal := slices.Repeat([]int{workCapacity}, workMembers)
	f := &WorkFigures{Shards: workShards, Members: workMembers, Capacity: workCapacity, Hot: workHot,
		ColdRate: workColdRate, CostMicros: workCost.Microseconds(), BacklogSecond: workBacklog.Seconds(),
		Count: WorkRun{Assignor: group.AssignorCount, Capacities: equal}, Work: WorkRun{Assignor: group.AssignorWork, Capacities: equal},
		Mixed:      workMixed,
		MixedCount: WorkRun{Assignor: group.AssignorCount, Capacities: workMixed},
		MixedWork:  WorkRun{Assignor: group.AssignorWork, Capacities: workMixed}}
	r.report.Work = f
	var groups []*workGroup
	for i, run := range []*WorkRun{&f.Count, &f.Work, &f.MixedCount, &f.MixedWork} {
		name := run.Assignor
		if i >= 2 {
			name += "-mixed"
		}
		g := &workGroup{run: run, name: name, key: group.Key{StreamPrefix: prefix + "-" + name, ConsumerGroup: name}, owners: map[int]string{}}
		if err := s.api.admin(ctx, http.MethodPost, g.key, contract.CreateRequest{InitialShardCount: ptr(workShards), RequestedBy: "coord-bench", Assignor: &run.Assignor}, http.StatusCreated); err != nil {
			return err
		}
		for i := range workShards {
			g.keys = append(g.keys, contract.StreamKey(g.key.StreamPrefix, i))
		}
		if err := prefill(ctx, rdb, g.keys, g.key.ConsumerGroup); err != nil {
			return err
		}
		groups = append(groups, g)
	}
	r.logf("work: 4 groups of %d shards (hot %v at %.0f/s, others %.0f/s, %v of backlog), %d members each of %d workers (mixed pair: %v) at %v per entry",
		workShards, workHot, 10*workColdRate, workColdRate, workBacklog, workMembers, workCapacity, workMixed, workCost)

	rctx, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	errs := make(chan error, len(groups)*(workMembers+1))
	coord := client.NewCoordinator(s.api.Base, client.WithBasicAuth(s.api.User, s.api.Password))
	start := time.Now()
	for _, g := range groups {
		wg.Add(1)
		go func() { defer wg.Done(); errs <- produce(rctx, rdb, g.keys) }()
		for m := range workMembers {
			c, err := g.consumer(coord, rdb, m)
			if err != nil {
				return err
			}
			wg.Add(1)
			go func() { defer wg.Done(); errs <- ignoreCanceled(c.Run(rctx)) }()
		}
	}
	err = r.watchWork(rctx, s.api, rdb, groups, start)
	stop()
	wg.Wait()
	close(errs)
	for e := range errs {
		err = errors.Join(err, e)
	}
	if err != nil {
		return fmt.Errorf("work: %w", err)
	}
	end := time.Now()
	for _, g := range groups {
		g.finish(start, end)
		r.logf("work/%s: drained in %.1f s (%v), busiest ÷ mean %.3f, %d moves (%d after draining, %.2f/min), %d fenced, %d handled",
			g.name, g.run.DrainSeconds, g.run.Drained, g.run.BusiestOverMean, g.run.Moves, g.run.MovesAfterDrain,
			g.run.MovesPerMinute, g.run.Fenced, g.run.Handled)
	}
	return nil
}

func ptr[T any](v T) *T { return &v }

func ignoreCanceled(err error) error {
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// shardRate is shard s's produced rate.
func shardRate(s int) float64 {
	if slices.Contains(workHot, s) {
		return 10 * workColdRate
	}
	return workColdRate
}

// prefill creates each shard stream with the group at its start and
// workBacklog seconds of the shard's rate in it.
func prefill(ctx context.Context, rdb *goredis.Client, keys []string, grp string) error {
	pipe := rdb.Pipeline()
	for s, key := range keys {
		pipe.XGroupCreateMkStream(ctx, key, grp, "0")
		for range int(shardRate(s) * workBacklog.Seconds()) {
			pipe.XAdd(ctx, &goredis.XAddArgs{Stream: key, Values: []string{"v", "x"}})
		}
		if pipe.Len() >= 1000 || s == len(keys)-1 {
			if _, err := pipe.Exec(ctx); err != nil {
				return fmt.Errorf("prefill %s: %w", key, err)
			}
		}
	}
	return nil
}

// produce adds each shard's rate of entries every 100 ms until ctx ends.
func produce(ctx context.Context, rdb *goredis.Client, keys []string) error {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	owed := make([]float64, len(keys))
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		pipe := rdb.Pipeline()
		for s, key := range keys {
			owed[s] += shardRate(s) / 10
			for ; owed[s] >= 1; owed[s]-- {
				pipe.XAdd(ctx, &goredis.XAddArgs{Stream: key, Values: []string{"v", "x"}})
			}
		}
		if _, err := pipe.Exec(ctx); err != nil && ctx.Err() == nil {
			return fmt.Errorf("produce: %w", err)
		}
	}
}

// pacer spaces handler calls so that a member handles at most workers ÷
// workCost entries per second, without burning CPU: each call takes the
// next slot and sleeps until it.
type pacer struct {
	mu   sync.Mutex
	next time.Time
	step time.Duration
}

func (p *pacer) wait(ctx context.Context) error {
	p.mu.Lock()
	now := time.Now()
	p.next = later(p.next, now).Add(p.step)
	at := p.next
	p.mu.Unlock()
	if d := time.Until(at); d > 0 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(d):
		}
	}
	return nil
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// consumer returns member m of g.
func (g *workGroup) consumer(coord *client.Coordinator, rdb *goredis.Client, m int) (*client.Consumer, error) {
	workers := g.run.Capacities[m]
	p := &pacer{step: workCost / time.Duration(workers)}
	return client.NewConsumer(client.ConsumerConfig{
		Member: client.MemberConfig{Coordinator: coord, StreamPrefix: g.key.StreamPrefix, Group: g.key.ConsumerGroup,
			MemberID: g.memberID(m), Logger: slog.New(slog.DiscardHandler),
			Hooks: client.Hooks{OnFenced: func(client.Status) { g.fenced.Add(1) }}},
		Redis:   rdb,
		Workers: workers,
		Handler: func(ctx context.Context, _ client.Message) error {
			if err := p.wait(ctx); err != nil {
				return err
			}
			g.handled.Add(1)
			return nil
		},
	})
}

// memberID is the id of g's member m.
func (g *workGroup) memberID(m int) string { return g.name + "-" + strconv.Itoa(m) }

// watchWork samples both groups every second (backlog, target owners)
// until both drained and workObserve passed since, or workMaxRun.
func (r *Runner) watchWork(ctx context.Context, api *API, rdb *goredis.Client, groups []*workGroup, start time.Time) error {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
		now := time.Now()
		done := true
		for _, g := range groups {
			if err := g.sample(ctx, api, rdb, now); err != nil {
				return err
			}
			done = done && !g.drained.IsZero() && now.Sub(g.drained) >= workObserve
		}
		if done || now.Sub(start) >= workMaxRun {
			return nil
		}
	}
}

// sample reads g's backlog and target assignment at now.
func (g *workGroup) sample(ctx context.Context, api *API, rdb *goredis.Client, now time.Time) error {
	if g.drained.IsZero() {
		backlog, err := backlogOf(ctx, rdb, g.keys, g.key.ConsumerGroup)
		if err != nil {
			return err
		}
		if backlog < workDrained {
			g.drained = now
		}
	}
	v, err := assignmentsOf(ctx, api, g.key)
	if err != nil {
		return err
	}
	for id, set := range v.TargetAssignment {
		for _, s := range set {
			if old, ok := g.owners[s]; ok && old != id {
				g.moves = append(g.moves, now)
			}
			g.owners[s] = id
		}
	}
	return nil
}

// backlogOf is the entries of grp not yet acknowledged on keys: lag plus
// pending.
func backlogOf(ctx context.Context, rdb *goredis.Client, keys []string, grp string) (int64, error) {
	pipe := rdb.Pipeline()
	cmds := make([]*goredis.XInfoGroupsCmd, len(keys))
	for i, key := range keys {
		cmds[i] = pipe.XInfoGroups(ctx, key)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return 0, err
	}
	var total int64
	for _, cmd := range cmds {
		for _, gi := range cmd.Val() {
			if gi.Name == grp {
				total += max(gi.Lag, 0) + gi.Pending
			}
		}
	}
	return total, nil
}

// assignmentsOf reads key's /assignments.
func assignmentsOf(ctx context.Context, api *API, key group.Key) (contract.AssignmentsView, error) {
	var v contract.AssignmentsView
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, api.Base+"/monitoring"+groupPath(key)+"/assignments", nil)
	if err != nil {
		return v, err
	}
	req.SetBasicAuth(api.User, api.Password)
	res, err := api.Client.Do(req)
	if err != nil {
		return v, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return v, err
	}
	if res.StatusCode != http.StatusOK {
		return v, fmt.Errorf("GET assignments of %s: %s: %s", key, res.Status, body)
	}
	return v, json.Unmarshal(body, &v)
}

// finish computes g's figures from what the run saw.
func (g *workGroup) finish(start, end time.Time) {
	run := g.run
	run.Drained = !g.drained.IsZero()
	run.DrainSeconds = end.Sub(start).Seconds()
	if run.Drained {
		run.DrainSeconds = g.drained.Sub(start).Seconds()
		run.ObservedMinutes = end.Sub(g.drained).Minutes()
	}
	run.Moves = len(g.moves)
	for _, at := range g.moves {
		if run.Drained && at.After(g.drained) {
			run.MovesAfterDrain++
		}
	}
	run.MovesPerMinute = ratio(float64(run.MovesAfterDrain), run.ObservedMinutes)
	run.Loads = map[string]float64{}
	var total, capacity, busiest float64
	for s, id := range g.owners {
		run.Loads[id] += shardRate(s)
		total += shardRate(s)
	}
	for m, c := range run.Capacities {
		capacity += float64(c)
		busiest = max(busiest, run.Loads[g.memberID(m)]/float64(c))
	}
	run.BusiestOverMean = ratio(busiest, total/capacity)
	run.Fenced, run.Handled = g.fenced.Load(), g.handled.Load()
}

// workGoals evaluates P10a–d (issue 32) from the work scenario; P10b and
// P10c are MISS when the work group did not drain.
func (r *Report) workGoals() []Goal {
	f := r.Work
	if f == nil {
		f = &WorkFigures{}
	}
	c, w, mc, mw := f.Count, f.Work, f.MixedCount, f.MixedWork
	ok := c.Handled > 0 && w.Handled > 0
	shape := fmt.Sprintf("%d shards, %d members of capacity %d, hot shards %v at 10x", f.Shards, f.Members, f.Capacity, f.Hot)
	drain := fmt.Sprintf("work %.1f s ÷ count %.1f s", w.DrainSeconds, c.DrainSeconds)
	if !c.Drained {
		drain += " (count did not drain: its time is the run's, a lower bound)"
	}
	undrained := fmt.Sprintf("the work group did not drain in the %.1f s of the run", w.DrainSeconds)
	return []Goal{
		goal("P10a", "busiest member's load ÷ mean, work assignor", w.BusiestOverMean, 1.15, true, ok,
			fmt.Sprintf("work %.3f, count %.3f; %s; capacities %v: work %.3f, count %.3f", w.BusiestOverMean, c.BusiestOverMean, shape,
				f.Mixed, mw.BusiestOverMean, mc.BusiestOverMean)),
		goal("P10b", "backlog drain time, work ÷ count", ratio(w.DrainSeconds, c.DrainSeconds), 0.7, true, ok && w.Drained,
			drain).missIf(ok && !w.Drained, undrained),
		goal("P10c", "shard moves per minute once balanced, work assignor", w.MovesPerMinute, 1, true, ok && w.Drained && w.ObservedMinutes > 0,
			fmt.Sprintf("%d moves in %.1f min after draining (%d in all)", w.MovesAfterDrain, w.ObservedMinutes, w.Moves)).
			missIf(ok && !w.Drained, undrained).
			missIf(ok && w.Drained && w.ObservedMinutes == 0, "the work group drained at the end of the run: no time left to observe"),
		goal("P10d", "FENCED answers, every group of the scenario", float64(c.Fenced+w.Fenced+mc.Fenced+mw.Fenced), 0, true, ok,
			fmt.Sprintf("count %d, work %d; capacities %v: count %d, work %d", c.Fenced, w.Fenced, f.Mixed, mc.Fenced, mw.Fenced)),
	}
}

// printWork writes the work scenario's runs, if any.
func (r *Report) printWork(w io.Writer) {
	f := r.Work
	if f == nil || f.Count.Handled == 0 {
		return
	}
	fmt.Fprintf(w, "work: %d shards (hot %v at %.0f/s, others %.0f/s, %.0f s of backlog), %d members × %d workers at %d µs/entry:\n",
		f.Shards, f.Hot, 10*f.ColdRate, f.ColdRate, f.BacklogSecond, f.Members, f.Capacity, f.CostMicros)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "assignor\tcapacities\tdrain s\tbusiest÷mean\tmoves\tmoves/min balanced\tfenced\thandled\t")
	for _, run := range []WorkRun{f.Count, f.Work, f.MixedCount, f.MixedWork} {
		drain := fmt.Sprintf("%.1f", run.DrainSeconds)
		if !run.Drained {
			drain = "> " + drain
		}
		fmt.Fprintf(tw, "%s\t%v\t%s\t%.3f\t%d\t%.2f\t%d\t%d\t\n", run.Assignor, run.Capacities, drain, run.BusiestOverMean,
			run.Moves, run.MovesPerMinute, run.Fenced, run.Handled)
	}
	tw.Flush()
}
