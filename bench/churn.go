package bench

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"sync"
	"time"
)

// Churn is the result of the churn scenario. Times are in heartbeat
// intervals.
type Churn struct {
	Members  int     `json:"members"`
	Shards   int     `json:"shards"`
	Interval float64 `json:"intervalSeconds"`
	LeaseTTL float64 `json:"leaseTtlSeconds"`
	Release  string  `json:"release"`
	Steps    []Step  `json:"steps"`
	// Join: from a measured (re)join's first heartbeat until the answer
	// that grants the member its full target; JoinRounds: the heartbeat
	// rounds that took after the join's own (Join.Rounds, goals P4a–b).
	Join       Quantiles `json:"joinIntervals"`
	JoinRounds Quantiles `json:"joinRounds"`
	// Crash: from a crash until every shard the member read is read by
	// another member; CrashBound is lease TTL + 2 intervals.
	Crash      Quantiles `json:"crashMoveIntervals"`
	CrashBound float64   `json:"crashBoundIntervals"`
	// CrashUnfinished counts crashes whose shards were not all moved.
	CrashUnfinished int `json:"crashUnfinished"`
	// Moved and Minimum add up the steps after the first.
	Moved   int `json:"shardsMoved"`
	Minimum int `json:"shardsMovedMinimum"`
}

// Step is one membership change of the churn scenario.
type Step struct {
	Name    string `json:"name"`
	Changed int    `json:"membersChanged"`
	Live    int    `json:"liveAfter"`
	// Moved counts the shards whose reader differs between the settled
	// states before and after; Minimum is MinimumMoves of the change.
	Moved   int `json:"shardsMoved"`
	Minimum int `json:"shardsMovedMinimum"`
	// Settle is the time until the members settled again, in intervals.
	Settle float64 `json:"settleIntervals"`
}

// Quantiles summarise samples.
type Quantiles struct {
	Count int     `json:"count"`
	P50   float64 `json:"p50"`
	P99   float64 `json:"p99"`
	Max   float64 `json:"max"`
}

// quantiles summarises samples in units of unit (exact, from sorted samples).
func quantiles[T time.Duration | int](samples []T, unit T) Quantiles {
	if len(samples) == 0 {
		return Quantiles{}
	}
	s := slices.Sorted(slices.Values(samples))
	at := func(q float64) float64 {
		i := min(max(int(q*float64(len(s))+0.999999)-1, 0), len(s)-1)
		return float64(s[i]) / float64(unit)
	}
	return Quantiles{Count: len(s), P50: at(0.5), P99: at(0.99), Max: at(1)}
}

// churner runs the members of one fleet on their own schedules (open
// loop) and changes the membership.
type churner struct {
	s      *session
	f      *Fleet
	rec    *Recorder
	prompt bool
	result *Churn

	joinSamples, crashSamples []time.Duration
	joinRounds                []int

	mu      sync.Mutex
	running map[*Sim]*runningSim
}

// runningSim is the goroutine driving one member.
type runningSim struct {
	cancel context.CancelFunc
	done   chan struct{}
	leave  bool
}

// runChurn runs the churn scenario on one group of ChurnMembers members
// whose release policy is release: 80 % join and settle; 10 % join; 5 %
// crash; 5 % leave gracefully; the crashed and departed members rejoin;
// the last 10 % join. Each step waits until the members have settled and
// compares the shard owners before and after with the minimum.
func (r *Runner) runChurn(ctx context.Context, release string) error {
	o := r.opts
	s, err := r.openSession(ctx, "churn-"+release, o.Store, true, o.ChurnShards, o.LeaseTTL)
	if err != nil {
		return err
	}
	defer s.close(ctx)
	if err := s.createGroups(ctx, 1, o.ChurnMembers, o.ChurnShards); err != nil {
		return err
	}
	c := &churner{
		s: s, f: s.fleets[0], rec: NewRecorder(), prompt: release == ReleasePrompt, running: map[*Sim]*runningSim{},
		result: &Churn{Members: o.ChurnMembers, Shards: o.ChurnShards, Interval: o.Interval.Seconds(), LeaseTTL: o.LeaseTTL.Seconds(),
			Release: release, CrashBound: float64(o.LeaseTTL+2*o.Interval) / float64(o.Interval)},
	}
	r.report.Churn = append(r.report.Churn, c.result)
	sims := c.f.sims
	n := len(sims)
	tenth, twentieth := n/10, n/20
	initial := sims[:n-2*tenth]
	var crash, leave []*Sim
	for i, sim := range initial {
		switch i % 10 {
		case 3:
			if len(crash) < twentieth {
				crash = append(crash, sim)
			}
		case 7:
			if len(leave) < twentieth {
				leave = append(leave, sim)
			}
		}
	}
	phase, err := s.measure(ctx, "churn/"+release, "open", float64(n)/o.Interval.Seconds(), func() (*Recorder, error) {
		defer c.stopAll()
		steps := []struct {
			name    string
			members []*Sim
			change  func(*Sim)
		}{
			{"initial join", initial, c.join},
			{"join wave", sims[n-2*tenth : n-tenth], c.join},
			{"crash", crash, c.crash},
			{"graceful leave", leave, c.leave},
			{"rejoin", slices.Concat(crash, leave), c.join},
			{"join wave 2", sims[n-tenth:], c.join},
		}
		for i, st := range steps {
			if err := c.step(ctx, st.name, st.members, st.change, i > 0); err != nil {
				return c.rec, err
			}
		}
		return c.rec, nil
	})
	r.report.Phases = append(r.report.Phases, phase)
	return err
}

// step applies change to members, waits until the live members settle and
// records the step; measured steps also count shard moves.
func (c *churner) step(ctx context.Context, name string, members []*Sim, change func(*Sim), measured bool) error {
	before := c.f.Owners()
	at := c.s.r.now()
	for _, sim := range members {
		change(sim)
	}
	if !measured {
		c.f.Joins() // the initial join is a cold start, not a measured join
	}
	live := c.live()
	deadline := time.Now().Add(c.s.r.opts.SettleTimeout)
	for !c.f.Settled(live, at) {
		if time.Now().After(deadline) {
			return fmt.Errorf("churn %s: members not settled after %v", name, c.s.r.opts.SettleTimeout)
		}
		if !sleepUntil(ctx, time.Now().Add(20*time.Millisecond)) {
			return ctx.Err()
		}
	}
	interval := c.s.r.opts.Interval
	st := Step{Name: name, Changed: len(members), Live: len(live), Settle: float64(c.s.r.now()-at) / float64(interval)}
	if measured {
		ids := make([]string, len(live))
		for i, sim := range live {
			ids[i] = sim.ID
		}
		st.Moved = Moved(c.f.shards, before, c.f.Owners())
		st.Minimum = MinimumMoves(c.f.shards, before, ids)
		c.result.Moved += st.Moved
		c.result.Minimum += st.Minimum
	}
	c.result.Steps = append(c.result.Steps, st)
	c.s.r.logf("churn %s: %d members, settled in %.1f intervals, moved %d (minimum %d)", name, len(members), st.Settle, st.Moved, st.Minimum)
	joins := c.f.Joins()
	crashes, open := c.f.CrashMoves()
	c.addSamples(joins, crashes, open)
	return nil
}

// addSamples folds new join and crash samples into the result.
func (c *churner) addSamples(joins []Join, crashes []time.Duration, unfinished int) {
	interval := c.s.r.opts.Interval
	for _, j := range joins {
		c.joinSamples = append(c.joinSamples, j.Took)
		c.joinRounds = append(c.joinRounds, j.Rounds)
	}
	c.crashSamples = append(c.crashSamples, crashes...)
	c.result.Join = quantiles(c.joinSamples, interval)
	c.result.JoinRounds = quantiles(c.joinRounds, 1)
	c.result.Crash = quantiles(c.crashSamples, interval)
	c.result.CrashUnfinished = unfinished
}

// live returns the members that run and are not leaving.
func (c *churner) live() []*Sim {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*Sim
	for _, sim := range c.f.sims {
		if r, ok := c.running[sim]; ok && !r.leave {
			out = append(out, sim)
		}
	}
	return out
}

// join starts sim as a new process whose join is measured.
func (c *churner) join(sim *Sim) {
	c.stop(sim)
	sim.Rejoin(true)
	ctx, cancel := context.WithCancel(context.Background())
	r := &runningSim{cancel: cancel, done: make(chan struct{})}
	c.mu.Lock()
	c.running[sim] = r
	c.mu.Unlock()
	first := time.Duration(rand.Int64N(int64(c.s.r.opts.Interval)))
	go func() {
		defer close(r.done)
		c.run(ctx, sim, first)
	}()
}

// crash kills sim: it stops at once, without a word to the coordinator.
func (c *churner) crash(sim *Sim) {
	c.stop(sim)
	sim.Crash()
}

// leave makes sim leave gracefully; its goroutine ends once the leave is
// answered.
func (c *churner) leave(sim *Sim) {
	c.mu.Lock()
	r := c.running[sim]
	r.leave = true
	c.mu.Unlock()
	r.cancel()
	<-r.done
	sim.Leave()
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel, r.done = cancel, make(chan struct{})
	go func() {
		defer close(r.done)
		c.run(ctx, sim, 0) // the leave request goes at once
	}()
}

// stop ends the goroutine driving sim and waits for it.
func (c *churner) stop(sim *Sim) {
	c.mu.Lock()
	r := c.running[sim]
	delete(c.running, sim)
	c.mu.Unlock()
	if r != nil {
		r.cancel()
		<-r.done
	}
}

// stopAll ends every member's goroutine.
func (c *churner) stopAll() {
	c.mu.Lock()
	sims := make([]*Sim, 0, len(c.running))
	for sim := range c.running {
		sims = append(sims, sim)
	}
	c.mu.Unlock()
	for _, sim := range sims {
		c.stop(sim)
	}
}

// run heartbeats sim every interval, the first time after a random part
// of an interval (processes start at random phases), until ctx ends or its
// leave is answered. With prompt release a heartbeat that made the member
// stop reading shards is followed at once by the one reporting them.
func (c *churner) run(ctx context.Context, sim *Sim, first time.Duration) {
	interval := c.s.r.opts.Interval
	for next := time.Now().Add(first); sleepUntil(ctx, next); {
		sim.Beat(ctx, next, c.rec)
		if sim.Done() {
			return
		}
		next = next.Add(interval)
		if c.prompt && sim.released {
			next = time.Now()
		}
	}
}

// print writes the churn figures.
func (c *Churn) print(w io.Writer) {
	fmt.Fprintf(w, "churn: %d members, %d shards, interval %.2gs, lease %.3gs, release %s\n", c.Members, c.Shards, c.Interval, c.LeaseTTL, c.Release)
	for _, s := range c.Steps {
		fmt.Fprintf(w, "  %-15s %4d members (%d live)  settled in %5.1f intervals  moved %5d  minimum %5d\n", s.Name, s.Changed, s.Live, s.Settle, s.Moved, s.Minimum)
	}
	fmt.Fprintf(w, "  join → full target (intervals): n=%d p50 %.2f p99 %.2f max %.2f\n", c.Join.Count, c.Join.P50, c.Join.P99, c.Join.Max)
	fmt.Fprintf(w, "  join → full target (rounds after the join's): p50 %.0f p99 %.0f max %.0f\n", c.JoinRounds.P50, c.JoinRounds.P99, c.JoinRounds.Max)
	fmt.Fprintf(w, "  crash → shards read by others (intervals): n=%d p50 %.2f p99 %.2f max %.2f (bound %.1f), unfinished %d\n",
		c.Crash.Count, c.Crash.P50, c.Crash.P99, c.Crash.Max, c.CrashBound, c.CrashUnfinished)
}
