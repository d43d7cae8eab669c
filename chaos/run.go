package chaos

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis-stream-coordinator/coordinator/client"
	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/coordproc"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/membersim"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/redisproc"
)

// Result is the outcome of one run.
type Result struct {
	Seed     int64
	Store    string
	Routing  membersim.Routing
	Duration time.Duration
	// Coordinators, Members and Shards are the sizes of the run.
	Coordinators, Members, Shards int
	// Counts is how many faults of each kind were injected (and how many
	// local lease lapses, lost answers and duplicates happened, and how
	// many heartbeats went to an owner followed: Options.Routing).
	Counts map[string]int
	// Settled says the group settled balanced after the faults stopped,
	// SettleTime how long that took from the start of the heal phase.
	Settled    bool
	SettleTime time.Duration
	// Heartbeats is the number of answers received.
	Heartbeats int
	// Overlaps counts the overlap violations.
	Overlaps int
	// Moves counts the simulated group's shard moves as its readers saw
	// them (membersim.Oracle.Handoffs), Explained those its assignment
	// history explains, HistoryEntries the history's entries (a target
	// may change more often than readers follow: checkHistory).
	Moves, Explained, HistoryEntries int
	// Real gives the real consumers' figures.
	Real       string
	Violations []Violation
	// Dir holds the run's configurations and logs; kept when it failed.
	Dir string
}

// Failed reports whether any check failed.
func (r *Result) Failed() bool { return len(r.Violations) > 0 }

// run is the state of one run, shared by its goroutines.
type run struct {
	opts    Options
	start   time.Time
	key     group.Key
	client  *http.Client
	cluster *cluster
	redis   *redisproc.Server
	oracle  *membersim.Oracle
	// wall maps offsets to the wall clock the coordinators stamp.
	wall    *wallClock
	log     eventLog
	answers answers
	sims    []*sim
	// healed is set when the faults stop: no more lost or duplicated
	// heartbeats.
	healed atomic.Bool
	// adminRng routes the scheduler's admin requests.
	adminRng *rand.Rand
	// live is the state of the live operations (liveops.go).
	live liveOps
	// bg runs duplicates and coordinator restarts.
	bg sync.WaitGroup

	mu     sync.Mutex
	counts map[string]int
	admin  []adminOp
}

// now is the offset from the start of the run.
func (r *run) now() time.Duration { return time.Since(r.start) }

// at is the instant at offset d; offset is the offset of instant t.
func (r *run) at(d time.Duration) time.Time     { return r.start.Add(d) }
func (r *run) offset(t time.Time) time.Duration { return t.Sub(r.start) }

func (r *run) count(kind string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.counts[kind]++
}

// Run executes one run: it starts the store and the coordinators, creates
// the group, runs the members through the fault schedule of o.Seed for
// o.Duration, heals everything, waits for the group to settle and checks
// the oracles. An error means the run could not be carried out (a process
// did not start); check failures are in the Result.
func Run(ctx context.Context, o Options) (*Result, error) {
	o = o.withDefaults()
	if err := o.validate(); err != nil {
		return nil, err
	}
	dir := o.Dir
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", fmt.Sprintf("coord-chaos-%s-%d-", o.Store, o.Seed)); err != nil {
			return nil, err
		}
	}
	res := &Result{Seed: o.Seed, Store: o.Store, Routing: o.Routing, Duration: o.Duration, Dir: dir,
		Coordinators: o.Coordinators, Members: o.Members, Shards: o.Shards}
	suffix := randomSuffix()
	r := &run{
		opts: o, key: group.Key{StreamPrefix: "chaos-" + suffix, ConsumerGroup: "g"},
		oracle: membersim.NewOracle(), // strict: no live-window excuse
		counts: map[string]int{}, adminRng: rand.New(rand.NewPCG(uint64(o.Seed), 0xad)),
		client: &http.Client{
			Timeout:   min(time.Second, o.LeaseTTL/3),
			Transport: &http.Transport{MaxIdleConnsPerHost: 4 * o.Members},
		},
	}
	defer r.client.CloseIdleConnections()

	// The Redis server runs for the jdbc store too (the coordinators'
	// redis.* settings), but it is killed only when it is the store.
	var err error
	if r.redis, err = redisproc.Start(ctx, dir, redisproc.Durable...); err != nil {
		return nil, err
	}
	defer r.redis.Kill()
	cfg := coordproc.ServerConfig{
		Store: o.Store, KeyPrefix: "chaos:" + suffix + ":", RedisAddr: r.redis.Addr, GroupCommit: true,
		Interval: o.Interval, LeaseTTL: o.LeaseTTL, RebalanceTimeout: o.RebalanceTimeout, MaxShards: 2 * o.Shards,
		HistoryMaxEntries: historyEntries,
	}
	if o.Store == coordproc.StoreJDBC {
		schema, err := newPGSchema(ctx, o.PostgresURL)
		if err != nil {
			return nil, err
		}
		defer func() { _ = schema.drop(context.Background()) }()
		if cfg.JDBCURL, err = schema.url(); err != nil {
			return nil, err
		}
	}
	if r.cluster, err = startCluster(ctx, o.Binary, dir, cfg, o.Coordinators); err != nil {
		return nil, err
	}
	defer r.cluster.close()
	_, base, _ := r.cluster.pick(rand.New(rand.NewPCG(1, 1)))
	admin := client.NewCoordinator(base, client.WithBasicAuth("admin", "password"), client.WithHTTPClient(r.client))
	if _, err := admin.CreateGroup(ctx, r.key.StreamPrefix, r.key.ConsumerGroup, o.Shards, "coord-chaos"); err != nil {
		return nil, err
	}

	r.start = time.Now()
	r.wall = newWallClock(r.start)
	r.log.add(0, "", fmt.Sprintf("run seed %d store %s: group %s, %d shards, %d members, %d coordinators", o.Seed, o.Store, r.key, o.Shards, o.Members, o.Coordinators))
	mctx, stopMembers := context.WithCancel(ctx)
	var members sync.WaitGroup
	for i := range o.Members {
		s := newSim(r, i)
		r.sims = append(r.sims, s)
		members.Go(func() { s.loop(mctx) })
	}

	faults, endFaults := context.WithCancel(ctx)
	healed, endHeal := context.WithCancel(ctx)
	defer endHeal()
	var fl *fleet
	var realMembers sync.WaitGroup
	if o.RealMembers > 0 {
		if fl, err = newFleet(r); err != nil {
			endFaults()
			stopMembers()
			return nil, err
		}
		realMembers.Go(func() { fl.run(faults, healed, o.RealMembers) })
	}
	r.inject(ctx, Schedule(o))
	endFaults()
	healAt := r.now()
	r.heal(ctx)
	settleErr := r.settle(ctx, healAt)
	if fl != nil { // the real members get the settle timeout to handle everything
		t := time.AfterFunc(max(0, o.SettleTimeout-(r.now()-healAt)), endHeal)
		realMembers.Wait()
		t.Stop()
		vs, figures := fl.check()
		res.Violations = append(res.Violations, vs...)
		res.Real = figures
		r.log.add(r.now(), "", figures)
		r.mu.Lock() // live operations may still count
		for k, n := range fl.counters {
			r.counts[k] += n
		}
		r.mu.Unlock()
	}

	end := r.now()
	if settleErr == nil {
		res.Settled, res.SettleTime = true, end-healAt
		r.log.add(end, "", fmt.Sprintf("settled %v after the faults stopped", end-healAt))
	} else {
		res.Violations = append(res.Violations, Violation{Kind: "settle", At: end,
			Text: fmt.Sprintf("not settled %v after the faults stopped: %v", end-healAt, settleErr)})
	}
	res.Violations = append(res.Violations, r.checkAdmin(ctx, end)...)
	stopMembers()
	members.Wait()
	r.bg.Wait()
	end = r.now()
	for _, s := range r.sims {
		s.close(end)
	}
	res.Violations = append(res.Violations, r.checkHistory(ctx, res, end)...)
	var overlaps []Violation
	for _, v := range r.oracle.Violations() {
		// Members[0] read first (the oracle orders spans by start).
		overlaps = append(overlaps, Violation{Kind: "overlap", At: v.From, Members: v.Members[:],
			Text: fmt.Sprintf("shard %d: %s started reading it at %s while %s still read it, for %v (until %s)",
				v.Shard, v.Members[1], fmtOffset(v.From), v.Members[0], v.Duration, fmtOffset(v.From+v.Duration))})
	}
	res.Overlaps = len(overlaps)
	res.Violations = append(overlaps, res.Violations...)
	r.answers.mu.Lock()
	res.Heartbeats = len(r.answers.all)
	res.Violations = append(res.Violations, epochViolations(r.answers.all)...)
	r.answers.mu.Unlock()
	r.attachTimelines(res.Violations)
	res.Counts = r.counts
	if !res.Failed() && o.Dir == "" {
		r.cluster.close()
		removeDir(dir)
		res.Dir = ""
	}
	return res, nil
}

// inject executes the schedule until it ends (at o.Duration).
func (r *run) inject(ctx context.Context, faults []Fault) {
	for _, f := range faults {
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Until(r.start.Add(f.At))):
		}
		r.apply(ctx, f)
	}
	select {
	case <-ctx.Done():
	case <-time.After(time.Until(r.start.Add(r.opts.Duration))):
	}
}

// apply injects one fault.
func (r *run) apply(ctx context.Context, f Fault) {
	at := r.now()
	switch f.Kind {
	case CoordinatorKill:
		if r.cluster.kill(f.Target) {
			r.count(f.Kind)
			r.log.add(at, "", fmt.Sprintf("FAULT coordinator c%d SIGKILL (%d up)", f.Target, r.cluster.up()))
		}
	case CoordinatorRestart:
		r.bg.Go(func() {
			if err := r.cluster.restart(ctx, f.Target); err == nil {
				r.log.add(r.now(), "", fmt.Sprintf("FAULT end: coordinator c%d restarted (%d up)", f.Target, r.cluster.up()))
			}
		})
	case CoordinatorIsolate:
		r.cluster.isolate(f.Target)
		r.count(f.Kind)
		r.log.add(at, "", fmt.Sprintf("FAULT coordinator c%d cut off from the store", f.Target))
	case CoordinatorReconnect:
		r.cluster.reconnect(f.Target)
		r.log.add(at, "", fmt.Sprintf("FAULT end: coordinator c%d reconnected to the store", f.Target))
	case RollingRestart:
		r.count(f.Kind)
		r.bg.Go(func() { r.rollingRestart(ctx) })
	case RedisKill:
		r.redis.Kill()
		r.count(f.Kind)
		r.log.add(at, "", "FAULT redis SIGKILL")
	case RedisRestart:
		if err := r.redis.Restart(ctx); err != nil {
			r.log.add(r.now(), "", "redis restart failed: "+err.Error())
			return
		}
		r.log.add(r.now(), "", "FAULT end: redis restarted")
	case MemberCrash:
		r.count(f.Kind)
		r.sims[f.Target].crash()
	case MemberRestart:
		r.sims[f.Target].restart()
	case MemberPartition:
		r.count(f.Kind)
		r.sims[f.Target].partition()
	case MemberHeal:
		r.sims[f.Target].heal()
	case Scale:
		r.count("scale attempt")
		r.scale(ctx, f.Target)
	case ShardPause, ShardResume, LiveReset:
		r.liveOp(ctx, f)
	}
}

// rollingRestart stops each coordinator in turn with SIGTERM and starts it
// again before the next one; it stops early when the faults end.
func (r *run) rollingRestart(ctx context.Context) {
	for i := range r.cluster.slots {
		if r.healed.Load() {
			return
		}
		from := r.now()
		if !r.cluster.terminate(i) {
			continue
		}
		r.log.add(r.now(), "", fmt.Sprintf("FAULT rolling restart: coordinator c%d stopped (SIGTERM) in %v", i, r.now()-from))
		if err := r.cluster.restart(ctx, i); err != nil {
			r.log.add(r.now(), "", fmt.Sprintf("rolling restart: coordinator c%d did not start: %v", i, err))
			return
		}
		r.log.add(r.now(), "", fmt.Sprintf("FAULT rolling restart: coordinator c%d back after %v (%d up)", i, r.now()-from, r.cluster.up()))
	}
}

// heal ends every fault: Redis and every coordinator up and connected to
// the store, members restarted and reconnected, no more lost or duplicated heartbeats.
func (r *run) heal(ctx context.Context) {
	r.healed.Store(true)
	if !r.redis.Running() {
		if err := r.redis.Restart(ctx); err != nil {
			r.log.add(r.now(), "", "redis restart failed: "+err.Error())
		}
	}
	var wg sync.WaitGroup
	for i := range r.cluster.slots {
		r.cluster.reconnect(i)
		wg.Go(func() { _ = r.cluster.restart(ctx, i) })
	}
	wg.Wait()
	for _, s := range r.sims {
		s.restart()
		s.heal()
	}
	r.log.add(r.now(), "", fmt.Sprintf("heal: faults stop, %d coordinators up", r.cluster.up()))
}

// scale sends one scale request to a live coordinator and records it.
func (r *run) scale(ctx context.Context, target int) {
	coord, base, ok := r.cluster.pick(r.adminRng)
	if !ok {
		return
	}
	op := adminOp{at: r.now(), target: target}
	body, _ := json.Marshal(contract.ScaleRequest{TargetShardCount: &target, RequestedBy: "coord-chaos"})
	var m contract.Migration
	code, err := r.call(ctx, http.MethodPost, base+groupPath(r.key)+"/scale", body, &m)
	op.code, op.id = code, m.ReshardingID
	if err != nil {
		op.err = err.Error()
	}
	r.mu.Lock()
	r.admin = append(r.admin, op)
	r.mu.Unlock()
	if op.acked() {
		r.count("scale acknowledged")
	}
	r.log.add(op.at, "", fmt.Sprintf("scale to %d via %s: HTTP %d %s %s %s", target, coord, code, m.ReshardingID, m.State, op.err))
}

// groupPath is the path of key under the base path.
func groupPath(key group.Key) string { return contract.GroupPath(key.StreamPrefix, key.ConsumerGroup) }

// call sends an authenticated admin request and decodes a 2xx answer into
// out. code is 0 when no answer arrived.
func (r *run) call(ctx context.Context, method, u string, body []byte, out any) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, u, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.SetBasicAuth("admin", "password")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return res.StatusCode, err
	}
	if res.StatusCode/100 != 2 {
		return res.StatusCode, fmt.Errorf("%s", bytes.TrimSpace(b))
	}
	return res.StatusCode, json.Unmarshal(b, out)
}

// get reads a monitoring or admin view from a live coordinator.
func (r *run) get(ctx context.Context, path string, out any) error {
	_, base, ok := r.cluster.pick(rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 0)))
	if !ok {
		return errors.New("no coordinator up")
	}
	_, err := r.call(ctx, http.MethodGet, base+path, nil, out)
	return err
}

// getSoon is get retried for up to 10 s: a coordinator may still report
// the store unavailable for a moment after it came back.
func (r *run) getSoon(ctx context.Context, path string, out any) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := r.get(ctx, path, out)
		if err == nil || time.Now().After(deadline) || ctx.Err() != nil {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// settle waits until the group is balanced (balanced) or the settle
// timeout ends, and returns the last reason it was not.
func (r *run) settle(ctx context.Context, healAt time.Duration) error {
	deadline := r.start.Add(healAt + r.opts.SettleTimeout)
	for {
		err := r.balanced(ctx)
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// balanced checks the settle condition once: no invariant violations;
// the target covers shards 0…shardCount−1 once each, names exactly the
// members, and its sizes differ by at most one; every member reads
// exactly its target and its last answer was OK with nothing pending.
func (r *run) balanced(ctx context.Context) error {
	var g contract.GroupView
	if err := r.get(ctx, groupPath(r.key), &g); err != nil {
		return fmt.Errorf("group: %w", err)
	}
	var a contract.AssignmentsView
	if err := r.get(ctx, "/monitoring"+groupPath(r.key)+"/assignments", &a); err != nil {
		return fmt.Errorf("assignments: %w", err)
	}
	if len(a.InvariantViolations) > 0 {
		return fmt.Errorf("invariant violations %v", a.InvariantViolations)
	}
	covered := map[int]string{}
	lo, hi := g.ShardCount, 0
	for m, set := range a.TargetAssignment {
		for _, sh := range set {
			if other, dup := covered[sh]; dup {
				return fmt.Errorf("shard %d targeted to %s and %s", sh, other, m)
			}
			covered[sh] = m
		}
		lo, hi = min(lo, len(set)), max(hi, len(set))
	}
	if len(covered) != g.ShardCount {
		return fmt.Errorf("target covers %d of %d shards", len(covered), g.ShardCount)
	}
	if len(a.TargetAssignment) != len(r.sims) {
		return fmt.Errorf("target names %d members, want %d: %v", len(a.TargetAssignment), len(r.sims), sortedKeys(a.TargetAssignment))
	}
	if hi-lo > 1 {
		return fmt.Errorf("target sizes from %d to %d", lo, hi)
	}
	for _, s := range r.sims {
		reads, last, connected := s.state()
		want := a.TargetAssignment[s.id]
		switch {
		case !connected:
			return fmt.Errorf("%s not connected", s.id)
		case !reads.Equal(want):
			return fmt.Errorf("%s reads %v, target %v", s.id, reads, want)
		case last == nil || last.Status != contract.StatusOK || len(last.Assignment.PendingShards) > 0:
			return fmt.Errorf("%s last answer %v", s.id, last)
		}
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// checkAdmin checks the acknowledged admin changes against the final state.
func (r *run) checkAdmin(ctx context.Context, at time.Duration) []Violation {
	var g contract.GroupView
	var ms contract.MigrationList
	if err := r.getSoon(ctx, groupPath(r.key), &g); err != nil {
		return []Violation{{Kind: "admin", At: at, Text: "read group: " + err.Error()}}
	}
	if err := r.getSoon(ctx, "/monitoring"+groupPath(r.key)+"/migrations", &ms); err != nil {
		return []Violation{{Kind: "admin", At: at, Text: "read migrations: " + err.Error()}}
	}
	var listed []string
	for _, m := range ms.Migrations {
		listed = append(listed, m.ReshardingID)
	}
	r.mu.Lock()
	ops := r.admin
	r.mu.Unlock()
	r.log.add(at, "", fmt.Sprintf("final: shardCount %d, %d migrations listed", g.ShardCount, len(listed)))
	return adminViolations(ops, r.opts.Shards, g.ShardCount, listed, at)
}

// maxTimelines bounds how many incidents get a full timeline.
const maxTimelines = 10

// attachTimelines gives each violation the timeline of its members (and
// of the cluster); a violation of the same members within a lease TTL of
// one already shown gets none (same incident), nor do those after the
// first maxTimelines incidents.
func (r *run) attachTimelines(vs []Violation) {
	type shown struct {
		members string
		at      time.Duration
	}
	var done []shown
	for i := range vs {
		v := &vs[i]
		pair := strings.Join(v.Members, "+")
		same := false
		for _, d := range done {
			if d.members == pair && (v.At-d.at).Abs() < r.opts.LeaseTTL {
				same = true
			}
		}
		if same || len(done) >= maxTimelines {
			continue
		}
		done = append(done, shown{pair, v.At})
		until := v.At
		end := v.At + 2*r.opts.LeaseTTL
		v.Timeline = r.log.timeline(v.Members, until, end, 12, 8)
	}
}
