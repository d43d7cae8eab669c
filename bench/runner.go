package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/redis-stream-coordinator/coordinator/internal/testkit/coordproc"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/membersim"
)

// Runner runs the selected scenarios and builds the report.
type Runner struct {
	opts   Options
	bin    string
	tmp    string // configurations, coordinator logs
	runID  string
	epoch  time.Time
	oracle *membersim.Oracle
	env    *Environment
	report *Report
	// ceiling is the ceiling's closed-loop throughput, once measured.
	ceiling float64
	// redis and postgres are the servers of every coordinator of the run.
	redis, postgres storeServer
}

// Run runs every selected scenario and returns the report; it also
// writes it to <OutDir>/<date>-<Name>.json. A failing scenario ends the
// run, but the report of what ran is still written.
func Run(ctx context.Context, o Options, command string) (*Report, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	start := time.Now()
	r := &Runner{opts: o, runID: start.UTC().Format("20060102T150405"), epoch: start, oracle: membersim.NewLeaseOracle()}
	r.report = &Report{Name: o.Name, Date: start.UTC(), Command: command, Environment: environment(), Options: o}
	r.env = &r.report.Environment
	r.tmp = filepath.Join(o.OutDir, "tmp", r.runID+"-"+o.Name)
	if err := os.MkdirAll(r.tmp, 0o755); err != nil {
		return nil, err
	}
	r.startStores(ctx)
	err := r.run(ctx)
	r.stopStores()
	r.finish(start)
	path := r.outputPath(".json")
	if werr := r.report.WriteJSON(path); werr != nil {
		err = errors.Join(err, werr)
	} else {
		r.logf("wrote %s (coordinator logs and configurations in %s)", path, r.tmp)
	}
	return r.report, err
}

// outputPath is <OutDir>/<date>-<Name><suffix>.
func (r *Runner) outputPath(suffix string) string {
	return filepath.Join(r.opts.OutDir, r.report.Date.Format("2006-01-02")+"-"+r.opts.Name+suffix)
}

// run runs the scenarios in the order of Scenarios.
func (r *Runner) run(ctx context.Context) error {
	o := r.opts
	r.bin = o.CoordinatorBin
	if r.bin == "" && r.startsCoordinators() {
		r.logf("building ./cmd/coordinator")
		bin, err := coordproc.BuildCoordinator(ctx, r.tmp)
		if err != nil {
			return err
		}
		r.bin = bin
	}
	if o.runs(ScenarioCeiling) || o.runs(ScenarioSteady) || o.runs(ScenarioBaseline) || o.runs(ScenarioMulti) {
		if err := r.runHeartbeat(ctx); err != nil {
			for _, name := range []string{ScenarioCeiling, ScenarioSteady, ScenarioBaseline, ScenarioMulti} {
				if o.runs(name) {
					_ = r.failed(name, err)
				}
			}
			return err
		}
	}
	if o.runs(ScenarioStore) {
		for _, store := range o.storeList() {
			if err := r.failed(ScenarioStore, r.runStore(ctx, store)); err != nil {
				return err
			}
		}
	}
	if o.runs(ScenarioPeer) {
		if err := r.runPeer(ctx); err != nil {
			return err
		}
	}
	if o.runs(ScenarioDataPlane) {
		if err := r.failed(ScenarioDataPlane, r.runDataPlane(ctx)); err != nil {
			return err
		}
	}
	if o.runs(ScenarioSinks) {
		if err := r.failed(ScenarioSinks, r.runSinks(ctx)); err != nil {
			return err
		}
	}
	if o.runs(ScenarioWork) {
		if err := r.failed(ScenarioWork, r.runWork(ctx)); err != nil {
			return err
		}
	}
	if o.runs(ScenarioCluster) {
		if err := r.failed(ScenarioCluster, r.runCluster(ctx)); err != nil {
			return err
		}
	}
	if o.runs(ScenarioFleet) {
		if err := r.failed(ScenarioFleet, r.runFleet(ctx)); err != nil {
			return err
		}
	}
	if o.runs(ScenarioScaling) {
		if err := r.failed(ScenarioScaling, r.runScaling(ctx)); err != nil {
			return err
		}
	}
	if o.runs(ScenarioGroups) {
		if err := r.failed(ScenarioGroups, r.runGroups(ctx)); err != nil {
			return err
		}
	}
	if o.runs(ScenarioScrape) {
		if err := r.failed(ScenarioScrape, r.runScrape(ctx)); err != nil {
			return err
		}
	}
	if o.runs(ScenarioChurn) {
		for _, release := range o.Releases {
			if err := r.failed(ScenarioChurn+"/"+release, r.runChurn(ctx, release)); err != nil {
				return err
			}
		}
	}
	if o.runs(ScenarioAssignor) {
		if err := r.failed(ScenarioAssignor, r.runAssignor(ctx)); err != nil {
			return err
		}
	}
	if o.runs(ScenarioHeap) {
		return r.failed(ScenarioHeap, r.runHeap(ctx))
	}
	return nil
}

// failed records err, if any, as the failure of scenario name (for
// churn, churn/<release>) in the report, whose goals are then MISS with
// it, and returns err.
func (r *Runner) failed(name string, err error) error {
	if err != nil {
		if r.report.Failures == nil {
			r.report.Failures = map[string]string{}
		}
		r.report.Failures[name] = err.Error()
	}
	return err
}

// storeList is the stores of the store scenario (Options.StoreList).
func (o *Options) storeList() []string {
	switch {
	case len(o.StoreList) > 0:
		return o.StoreList
	case o.runs(ScenarioSteady) && o.Store == coordproc.StoreRedis:
		return []string{coordproc.StoreJDBC}
	}
	return []string{coordproc.StoreMemory, coordproc.StoreRedis, coordproc.StoreJDBC}
}

// finish runs the oracle and evaluates the goals.
func (r *Runner) finish(start time.Time) {
	v := r.oracle.Violations()
	r.report.Violations = len(v)
	for _, x := range v[:min(len(v), 10)] {
		r.report.ViolationSamples = append(r.report.ViolationSamples, x.String())
	}
	countDoubleReaders(r.report.Phases, v)
	r.report.evaluate()
	r.report.ElapsedSeconds = time.Since(start).Seconds()
}

// countDoubleReaders sets every phase's DoubleReaders: the violations
// that overlap it.
func countDoubleReaders(phases []Phase, v []membersim.Violation) {
	for i := range phases {
		p := &phases[i]
		from, to := time.Duration(p.StartSeconds*1e9), time.Duration((p.StartSeconds+p.Seconds)*1e9)
		for _, x := range v {
			if x.From < to && x.From+x.Duration > from {
				p.DoubleReaders++
			}
		}
	}
}

// setupTTL is the lease TTL while n members join: Options.SetupLeaseTTL,
// or two setup passes over n members at Options.PassBudget each when that
// is longer (a member heartbeats once per pass, so its lease must outlast
// a pass with room to spare).
func (r *Runner) setupTTL(n int) time.Duration {
	return max(r.opts.SetupLeaseTTL, 2*time.Duration(n)*r.opts.PassBudget)
}

// settleTimeout bounds the wait for n members to settle: Options.
// SettleTimeout, or ten setup passes over n members when that is longer.
func (r *Runner) settleTimeout(n int) time.Duration { return settleTimeout(r.opts, n) }

func settleTimeout(o Options, n int) time.Duration {
	return max(o.SettleTimeout, 10*time.Duration(n)*o.PassBudget)
}

// now is the offset of the current time from the run's start.
func (r *Runner) now() time.Duration { return time.Since(r.epoch) }

// logf writes one progress line.
func (r *Runner) logf(format string, args ...any) {
	fmt.Fprintf(r.opts.Log, "[%6.1fs] %s\n", r.now().Seconds(), fmt.Sprintf(format, args...))
}

// runHeartbeat runs ceiling, steady and baseline on one store and one
// stored state. The members join and settle with SetupLeaseTTL. On Redis
// and PostgreSQL the baseline closed loop runs next, after a restart
// without group commit, still with SetupLeaseTTL (at one critical section
// per heartbeat the coordinator cannot renew 10,000 leases within half a
// LeaseTTL after a restart; its cost per heartbeat does not depend on the
// TTL). The coordinator then restarts with group commit and LeaseTTL for
// the ceiling (closed, then open loop at OpenFraction of its throughput)
// and, after every member process restarted (see Options.SetupLeaseTTL),
// steady closed and open loop on the same process. The memory store
// forgets everything on a restart, so there everything runs with
// SetupLeaseTTL and the baseline comes last.
func (r *Runner) runHeartbeat(ctx context.Context) error {
	o := r.opts
	s, err := r.openSession(ctx, "heartbeat-"+o.Store, o.Store, true, o.Shards, r.setupTTL(o.Groups*o.Members))
	if err != nil {
		return err
	}
	defer s.close(ctx)
	persistent := o.Store != coordproc.StoreMemory
	if heap, err := s.heapAlloc(ctx); err == nil {
		r.report.CoordinatorHeap.EmptyBytes = heap
	} else {
		r.logf("coordinator heap: %v", err)
	}
	if o.runs(ScenarioSteady) || o.runs(ScenarioBaseline) || o.runs(ScenarioMulti) {
		if err := s.createGroups(ctx, o.Groups, o.Members, o.Shards); err != nil {
			return err
		}
		if err := r.phase(s.settle(ctx, "setup/settle")); err != nil {
			return err
		}
		if err := r.coordinatorHeap(ctx, s); err != nil {
			return err
		}
	}
	if o.runs(ScenarioBaseline) && persistent {
		if err := r.baseline(ctx, s); err != nil {
			return err
		}
	}
	if persistent {
		if err := s.restart(ctx, true, o.LeaseTTL); err != nil {
			return err
		}
		// No lease granted with the setup TTL ends later than this.
		r.report.SetupLeasesEnd = (r.now() + s.r.setupTTL(o.Groups*o.Members)).Seconds()
	}
	// The ceiling runs while the members' setup leases still hold.
	if o.runs(ScenarioCeiling) {
		if err := r.runCeiling(ctx, s); err != nil {
			return err
		}
	}
	if o.runs(ScenarioSteady) || o.runs(ScenarioMulti) {
		if persistent {
			s.restartMembers()
		}
		if err := r.settleReported(ctx, s, "steady/settle"); err != nil {
			return err
		}
		if o.runs(ScenarioSteady) {
			if err := r.steady(ctx, s); err != nil {
				return err
			}
		}
		// Several coordinators run last, for MultiDuration: long enough to
		// cross the end of the setup leases (goal P8a).
		if o.runs(ScenarioMulti) && persistent {
			if err := r.multi(ctx, s); err != nil {
				return err
			}
		}
	}
	if o.runs(ScenarioBaseline) && !persistent {
		return r.baseline(ctx, s)
	}
	return nil
}

// coordinatorHeap measures what one more settled member costs the
// coordinator's heap (goal P6a, the coordinator's side). It runs right
// after setup, while the members hold setup leases: the heap after GC with
// every member of the session settled, then with a probe group beside
// them (half a session group: half its members and shards, so as many
// shards per member) joined and settled over the same connections. The
// slope between the two leaves out every cost that does not grow with the
// members: connection buffers, pools, caches, the empty coordinator. The
// session's members send nothing while the probe settles, so it gets at
// most half their setup lease (no figure when it needs longer); the probe
// group is deleted afterwards.
func (r *Runner) coordinatorHeap(ctx context.Context, s *session) error {
	h := &r.report.CoordinatorHeap
	heap, err := s.heapAlloc(ctx)
	if err != nil {
		r.logf("coordinator heap: %v", err)
		return nil
	}
	h.Members, h.Bytes = s.size(), heap
	r.heapProfile(ctx, s, "members")
	members, shards := max(s.members/2, 1), max(s.shards/2, 1)
	key := groupKey(s.groups)
	if err := s.api.CreateGroup(ctx, key, shards); err != nil {
		return err
	}
	probe := NewFleet(s.api, key, members, shards, s.cfg.LeaseTTL, s.r.oracle, s.r.epoch)
	ps := *s
	ps.fleets, ps.groups, ps.members, ps.shards = []*Fleet{probe}, 1, members, shards
	pctx, cancel := context.WithTimeout(ctx, s.cfg.LeaseTTL/2)
	err = r.phase(ps.settle(pctx, "heap/probe-settle"))
	cancel()
	probe.Close()
	if err == nil {
		heap, err = s.heapAlloc(ctx)
		r.heapProfile(ctx, s, "probe")
	}
	if err := s.api.DeleteGroup(ctx, key); err != nil {
		return err
	}
	if err != nil {
		r.logf("coordinator heap: probe: %v", err)
		return nil
	}
	h.ProbeMembers, h.ProbeBytes = members, heap
	h.PerMember = float64(h.ProbeBytes-h.Bytes) / float64(h.ProbeMembers)
	r.logf("coordinator heap after GC: %.1f MiB empty, %.1f MiB with %d members, %.1f MiB with %d more: %.0f B/member",
		float64(h.EmptyBytes)/(1<<20), float64(h.Bytes)/(1<<20), h.Members, float64(h.ProbeBytes)/(1<<20), h.ProbeMembers, h.PerMember)
	return nil
}

// heapProfile saves the coordinator's heap profile at the heap figure's
// step (members, probe) beside the report when Options.Profile is set:
// go tool pprof -sample_index=inuse_space -base <members> <probe> shows
// what the probe's members added.
func (r *Runner) heapProfile(ctx context.Context, s *session, step string) {
	if r.opts.Profile <= 0 {
		return
	}
	path := r.outputPath("-heap-" + step + "-" + s.cfg.Store + ".pprof")
	if err := s.heapProfile(ctx, path); err != nil {
		r.logf("heap profile (%s): %v", step, err)
		return
	}
	r.logf("heap profile (%s) in %s", step, path)
}

// multi first measures the closed loop on the session's one coordinator
// for MultiDuration (multi-ref/closed: the reference of P8a and P8e, a
// phase as long as theirs, so that periodic work such as the lag
// refresher's pass weighs the same in both). It then starts
// Coordinators−1 more coordinators on the session's store and key prefix,
// each with an id of its own (one cluster: the group has one owner),
// sends every heartbeat to a coordinator drawn at random, and measures the
// closed loop for MultiDuration (multi/closed, goal P8a). The members then
// follow the group's owner: one pass lets each learn it
// (multi-owner/settle), and the closed loop is measured again for
// MultiDuration (multi-owner/closed, goal P8e). A settle that fails is
// recorded (goal P8a-settle) and ends the scenario, not the run.
func (r *Runner) multi(ctx context.Context, s *session) error {
	if err := r.phase(r.closedFor(ctx, s, "multi-ref/closed", s.fire, r.opts.MultiDuration)); err != nil {
		return err
	}
	defer s.stopPeers()
	if err := s.startPeers(ctx, r.opts.Coordinators-1, false); err != nil {
		return err
	}
	p, err := s.settle(ctx, "multi/settle")
	if err != nil {
		p.Failed = err.Error()
		r.logf("multi/settle: %v", err)
		return r.phase(p, nil)
	}
	_ = r.phase(p, nil)
	if err := r.phase(r.closedFor(ctx, s, "multi/closed", s.fire, r.opts.MultiDuration)); err != nil {
		return err
	}
	s.coords.SetRouting(membersim.Follow)
	if err := r.phase(s.settle(ctx, "multi-owner/settle")); err != nil {
		return err
	}
	return r.phase(r.closedFor(ctx, s, "multi-owner/closed", s.fire, r.opts.MultiDuration))
}

// settleReported settles the session's members (phase name) and sends
// each of them one more heartbeat (phase name-report). A member process
// that restarted reports in that heartbeat the shards its rejoin answer
// granted, an assignment change the coordinator stores; the steady phases
// after it then measure heartbeats that change nothing (goals P2a, P7).
func (r *Runner) settleReported(ctx context.Context, s *session, name string) error {
	if err := r.phase(s.settle(ctx, name)); err != nil {
		return err
	}
	return r.phase(s.measure(ctx, name+"-report", "closed", 0, func() (*Recorder, error) {
		rec := NewRecorder()
		pass(ctx, s.size(), r.opts.Connections, s.fire, rec)
		return rec, ctx.Err()
	}))
}

// baseline restarts the coordinator without group commit and measures the
// settled members in closed loop.
func (r *Runner) baseline(ctx context.Context, s *session) error {
	if err := s.restart(ctx, false, s.cfg.LeaseTTL); err != nil {
		return err
	}
	if err := r.phase(s.settle(ctx, "baseline/settle")); err != nil {
		return err
	}
	return r.phase(r.closed(ctx, s, "baseline/closed", s.fire))
}

// join creates the session's groups (z), lets the members join and settle
// (phase name) with SetupLeaseTTL and, on a persistent store, restarts the
// coordinator with LeaseTTL and the member processes (their leases are
// then renewed with LeaseTTL by the next settle).
func (r *Runner) join(ctx context.Context, s *session, name string, z Size) error {
	o := r.opts
	if err := s.createGroups(ctx, z.Groups, z.Members, z.Shards); err != nil {
		return err
	}
	if err := r.phase(s.settle(ctx, name)); err != nil {
		return err
	}
	if s.cfg.Store == coordproc.StoreMemory {
		return nil
	}
	if err := s.restart(ctx, true, o.LeaseTTL); err != nil {
		return err
	}
	s.restartMembers()
	return nil
}

// runCeiling measures the no-op route in closed loop, then in open loop.
func (r *Runner) runCeiling(ctx context.Context, s *session) error {
	o := r.opts
	n := s.size()
	nop := newNoop(s.api, groupKey(0), n, max(o.Shards/o.Members, 1))
	closed, err := r.closed(ctx, s, "ceiling/closed", nop.fire)
	if err := r.phase(closed, err); err != nil {
		return err
	}
	r.ceiling = closed.Throughput
	rate := r.openRate(n)
	return r.phase(s.measure(ctx, "ceiling/open", "open", rate, func() (*Recorder, error) {
		return openLoop(ctx, n, rate, o.Duration, nop.fire), nil
	}))
}

// steady measures the settled members in closed loop, then in open loop.
func (r *Runner) steady(ctx context.Context, s *session) error {
	if err := r.phase(r.closed(ctx, s, "steady/closed", s.fire)); err != nil {
		return err
	}
	rate := r.openRate(s.size())
	if err := r.phase(s.measure(ctx, "steady/open", "open", rate, func() (*Recorder, error) {
		return openLoop(ctx, s.size(), rate, r.opts.Duration, s.fire), nil
	})); err != nil {
		return err
	}
	// The members' own rate: every member once per interval.
	own := float64(s.size()) / r.opts.Interval.Seconds()
	return r.phase(s.measure(ctx, "steady/open-members", "open", own, func() (*Recorder, error) {
		return openLoop(ctx, s.size(), own, r.opts.Duration, s.fire), nil
	}))
}

// closed measures fire in closed loop over the session's members for
// Options.Duration, with a coordinator CPU profile of the phase when
// Options.Profile is set.
func (r *Runner) closed(ctx context.Context, s *session, name string, fire fireFunc) (Phase, error) {
	return r.closedFor(ctx, s, name, fire, r.opts.Duration)
}

// closedFor is closed for d.
func (r *Runner) closedFor(ctx context.Context, s *session, name string, fire fireFunc, d time.Duration) (Phase, error) {
	o := r.opts
	var profiled chan error
	profile := r.outputPath("-" + strings.ReplaceAll(name, "/", "-") + "-" + s.cfg.Store + ".pprof")
	if o.Profile > 0 {
		profiled = make(chan error, 1)
		go func() { profiled <- s.profile(ctx, min(o.Profile, d), profile) }()
	}
	p, err := s.measure(ctx, name, "closed", 0, func() (*Recorder, error) {
		return closedLoop(ctx, s.size(), o.Connections, d, fire), nil
	})
	if profiled != nil {
		if perr := <-profiled; perr != nil {
			r.logf("%s: CPU profile: %v", name, perr)
		} else {
			p.Profile = profile
			r.logf("%s: CPU profile in %s (go tool pprof -top %s %s)", name, profile, r.bin, profile)
		}
	}
	return p, err
}

// runStore runs the steady closed loop on one store.
func (r *Runner) runStore(ctx context.Context, store string) error {
	o := r.opts
	s, err := r.openSession(ctx, "store-"+store, store, true, o.Shards, r.setupTTL(o.Groups*o.Members))
	if err != nil {
		return err
	}
	defer s.close(ctx)
	if err := r.join(ctx, s, "store/"+store+"-setup", Size{o.Groups, o.Members, o.Shards}); err != nil {
		return err
	}
	if err := r.settleReported(ctx, s, "store/"+store+"-settle"); err != nil {
		return err
	}
	return r.phase(r.closed(ctx, s, "store/"+store, s.fire))
}

// runGroups is the many-group run: ManyGroups groups of ManyMembers
// members and ManyShards shards join in waves and are measured in closed
// loop, while /actuator/prometheus is scraped every ScrapeInterval (goal
// P6b: peak RSS over both phases).
func (r *Runner) runGroups(ctx context.Context) error {
	o := r.opts
	ttl := r.setupTTL(o.ManyGroups * o.ManyMembers)
	for _, z := range o.ManyReferences {
		if err := r.groupsReference(ctx, z, ttl); err != nil {
			return err
		}
	}
	s, err := r.openSession(ctx, "groups-"+o.Store, o.Store, true, o.ManyShards, ttl)
	if err != nil {
		return err
	}
	defer s.close(ctx)
	sc := &scraper{url: s.srv.Root + "/actuator/prometheus"}
	sctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); sc.run(sctx, o.ScrapeInterval) }()
	defer func() {
		stop()
		<-done
		r.report.Scrapes = sc.result()
		r.logf("groups: %d scrapes of /actuator/prometheus, last %d bytes, %d failed", r.report.Scrapes.Count, r.report.Scrapes.LastBytes, r.report.Scrapes.Failed)
	}()
	if err := s.createGroups(ctx, o.ManyGroups, o.ManyMembers, o.ManyShards); err != nil {
		return err
	}
	if err := r.phase(s.settle(ctx, "groups/settle")); err != nil {
		return err
	}
	closed, err := r.closed(ctx, s, "groups/closed", s.fire)
	if err := r.phase(closed, err); err != nil {
		return err
	}
	// The open loop at manyOpenFraction of the closed-loop maximum: the
	// rate it sustains, with its latency and statuses.
	rate := manyOpenFraction * closed.Throughput
	return r.phase(s.measure(ctx, "groups/open", "open", rate, func() (*Recorder, error) {
		return openLoop(ctx, s.size(), rate, r.opts.Duration, s.fire), nil
	}))
}

// manyOpenFraction is the groups run's open-loop rate, a fraction of its
// closed-loop throughput.
const manyOpenFraction = 0.8

// groupsReference measures size z in closed loop (phase
// groups-ref/<z>) in a session of its own, with the many-group run's lease
// ttl so that both write alike: a reference of goal P6c.
func (r *Runner) groupsReference(ctx context.Context, z Size, ttl time.Duration) error {
	name := "groups-ref/" + z.String()
	s, err := r.openSession(ctx, "groups-ref-"+z.String()+"-"+r.opts.Store, r.opts.Store, true, z.Shards, ttl)
	if err != nil {
		return err
	}
	defer s.close(ctx)
	if err := s.createGroups(ctx, z.Groups, z.Members, z.Shards); err != nil {
		return err
	}
	if err := r.phase(s.settle(ctx, name+"-settle")); err != nil {
		return err
	}
	return r.phase(r.closed(ctx, s, name, s.fire))
}

// phase adds a measured phase to the report and passes its error on.
func (r *Runner) phase(p Phase, err error) error {
	r.report.Phases = append(r.report.Phases, p)
	return err
}

// openRate is the offered rate of the open-loop phases for n members.
func (r *Runner) openRate(n int) float64 {
	switch {
	case r.opts.OpenRate > 0:
		return r.opts.OpenRate
	case r.ceiling > 0:
		return r.opts.OpenFraction * r.ceiling
	}
	return float64(n) / r.opts.Interval.Seconds()
}

// runHeap runs BenchmarkHeapPerMember (goal P6a) and
// BenchmarkHeapPerGroup (goal P11f) of this package.
func (r *Runner) runHeap(ctx context.Context) error {
	r.logf("go test -bench 'HeapPerMember|HeapPerGroup' ./bench -benchtime 1x")
	cmd := exec.CommandContext(ctx, "go", "test", "-run", "^$", "-bench", "HeapPerMember|HeapPerGroup", "-benchtime", "1x", "./bench")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("heap benchmark: %w\n%s", err, out.String())
	}
	v, ok := parseMetric(out.String(), "BenchmarkHeapPerMember", "B/member")
	if !ok {
		return fmt.Errorf("heap benchmark: no B/member in\n%s", out.String())
	}
	r.report.HeapPerMember = v
	r.logf("  BenchmarkHeapPerMember: %.0f B/member (100 × 1,000 members, domain state)", v)
	f, err := groupHeapFigures(out.String())
	if err != nil {
		return err
	}
	r.report.GroupHeap = f
	r.logf("  BenchmarkHeapPerGroup: %.0f B/idle-group, %.0f B/member (%d groups × %d members)", f.IdleGroupBytes, f.MemberBytes, groupHeapGroups, groupHeapMembers)
	return nil
}

// runAssignor runs the assignor's Go benchmarks (goal P5).
func (r *Runner) runAssignor(ctx context.Context) error {
	r.logf("go test -bench Assign ./group/assignor -benchtime %s", r.opts.AssignorBenchtime)
	cmd := exec.CommandContext(ctx, "go", "test", "-run", "^$", "-bench", "Assign", "-benchtime", r.opts.AssignorBenchtime, "./group/assignor")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("assignor benchmarks: %w\n%s", err, out.String())
	}
	r.report.Assignor = parseBenchmarks(&out)
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if strings.HasPrefix(line, "Benchmark") {
			r.logf("  %s", line)
		}
	}
	return nil
}
