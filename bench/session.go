package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/coordproc"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/membersim"
)

// session is one coordinator process on one store with its fleets; it can
// be restarted with another configuration on the same stored state.
type session struct {
	r     *Runner
	name  string
	cfg   coordproc.ServerConfig
	probe storeProbe
	srv   *coordproc.Server
	api   *API
	// starts counts the coordinator processes started (log file names).
	starts int
	// peers are further coordinators on the same store and key prefix
	// (the multi and cluster scenarios); their CPU counts with srv's.
	peers []*peer
	// coords, while peers run, is how the members reach the coordinators.
	coords *Coordinators
	// retiredCPU is the CPU time of the coordinator processes stopped by
	// stopCoordinator, up to their signal: sample counts it with the live
	// ones', so a phase that restarts coordinators keeps their CPU.
	retiredCPU time.Duration
	fleets     []*Fleet
	// groups, members and shards (per group) size the load; createGroups
	// sets them.
	groups, members, shards int
	// prefixPerGroup puts every group on a stream prefix of its own
	// (streamGroupKey) instead of one prefix for all (groupKey).
	prefixPerGroup bool
}

// peer is one more coordinator of a session: the session's configuration
// with an id and a port of its own, kept across restarts.
type peer struct {
	cfg coordproc.ServerConfig
	srv *coordproc.Server // nil while stopped
	api *API
}

// openSession starts a coordinator on store with a fresh key prefix (Redis)
// or schema (PostgreSQL); tune, if any, adjusts its configuration first.
func (r *Runner) openSession(ctx context.Context, name, store string, groupCommit bool, shards int, ttl time.Duration, tune ...func(*coordproc.ServerConfig)) (*session, error) {
	id := r.runID + "_" + name
	cfg := coordproc.ServerConfig{
		Store: store, KeyPrefix: "coord-bench:" + id, RedisAddr: r.redis.addr,
		GroupCommit: groupCommit, Interval: r.opts.Interval, LeaseTTL: ttl, RebalanceTimeout: rebalanceTimeout(ttl), MaxShards: shards,
		ID: coordinatorID(0),
	}
	for _, t := range tune {
		t(&cfg)
	}
	s := &session{r: r, name: name, cfg: cfg, probe: noProbe{}, groups: r.opts.Groups, members: r.opts.Members, shards: shards}
	switch store {
	case coordproc.StoreRedis:
		p := newRedisProbe(r.redis, cfg.KeyPrefix)
		r.env.Redis = p.Version(ctx)
		s.probe = p
	case coordproc.StoreJDBC:
		p, err := newPGProbe(ctx, r.postgres, schemaName("coord_bench_"+id))
		if err != nil {
			return nil, err
		}
		r.env.Postgres = p.Version(ctx)
		s.probe = p
		if s.cfg.JDBCURL, err = withSearchPath(r.postgres.addr, p.schema); err != nil {
			return nil, err
		}
	}
	if err := s.start(ctx); err != nil {
		_ = s.probe.Cleanup(ctx)
		return nil, err
	}
	return s, nil
}

// start starts the coordinator with s.cfg (on the port it had, if any).
func (s *session) start(ctx context.Context) error {
	name := s.name
	if !s.cfg.GroupCommit {
		name += "-no-group-commit"
	}
	srv, err := s.startProcess(ctx, name, s.cfg)
	if err != nil {
		return err
	}
	s.srv, s.cfg.Port = srv, srv.Port
	if s.api == nil || s.api.Base != srv.Base {
		if s.api, err = NewAPI(srv.Base, s.r.opts.Connections); err != nil {
			return err
		}
	}
	for _, f := range s.fleets {
		f.api, f.ttl = s.api, s.cfg.LeaseTTL
	}
	s.r.logf("%s: coordinator %s pid %d at %s (store %s, group commit %v, lease TTL %v)",
		s.name, srv.ID, srv.Pid(), srv.Root, s.cfg.Store, s.cfg.GroupCommit, s.cfg.LeaseTTL)
	return nil
}

// startProcess starts one coordinator process with cfg; every process of
// the session logs to a file of its own.
func (s *session) startProcess(ctx context.Context, name string, cfg coordproc.ServerConfig) (*coordproc.Server, error) {
	s.starts++
	if s.starts > 1 {
		name = fmt.Sprintf("%s-%d", name, s.starts)
	}
	return coordproc.StartServer(ctx, s.r.bin, s.r.tmp, name, cfg)
}

// coordinatorID is the coordinator.id of a session's coordinator i (0: the
// session's own, then its peers): stable across restarts, like a pod name.
func coordinatorID(i int) string { return fmt.Sprintf("c%d", i+1) }

// startPeers starts n more coordinators with the session's configuration
// (same store, same key prefix: they form one cluster) and sends every
// fleet's members to all of them, following the groups' owners or spread
// at random (see Coordinators).
func (s *session) startPeers(ctx context.Context, n int, follow bool) error {
	routing := membersim.Spread
	if follow {
		routing = membersim.Follow
	}
	s.coords = NewCoordinators(routing)
	s.coords.SetLive(s.api, true)
	for _, f := range s.fleets {
		f.coords = s.coords
	}
	for i := range n {
		p := &peer{cfg: s.cfg}
		p.cfg.ID, p.cfg.Port = coordinatorID(i+1), 0
		s.peers = append(s.peers, p)
		if err := s.startPeer(ctx, p); err != nil {
			return err
		}
	}
	return nil
}

// startPeer starts (or starts again, with the same id and port) peer p and
// lets the load balancer route to it once it is ready.
func (s *session) startPeer(ctx context.Context, p *peer) error {
	srv, err := s.startProcess(ctx, s.name+"-"+p.cfg.ID, p.cfg)
	if err != nil {
		return err
	}
	p.srv, p.cfg.Port = srv, srv.Port
	if p.api == nil {
		if p.api, err = NewAPI(srv.Base, s.r.opts.Connections); err != nil {
			return err
		}
	}
	s.coords.SetLive(p.api, true)
	s.r.logf("%s: peer coordinator %s pid %d at %s", s.name, srv.ID, srv.Pid(), srv.Root)
	return nil
}

// stopPeers stops the peer coordinators; every member sends to the
// session's coordinator again.
func (s *session) stopPeers() {
	for _, f := range s.fleets {
		f.coords = nil
	}
	for _, p := range s.peers {
		if p.srv == nil {
			continue
		}
		p.api.Close()
		if err := p.srv.Stop(); err != nil {
			s.r.logf("%s: stopping peer coordinator %d: %v", s.name, p.srv.Pid(), err)
		}
	}
	s.peers, s.coords = nil, nil
}

// coordinator returns the process, API and configuration of the session's
// coordinator i (0: its own, i ≥ 1: peer i).
func (s *session) coordinator(i int) (*coordproc.Server, *API) {
	if i == 0 {
		return s.srv, s.api
	}
	return s.peers[i-1].srv, s.peers[i-1].api
}

// stopCoordinator takes coordinator i out of the load balancer and stops
// it: with SIGTERM (an ordered shutdown: it hands its groups over) or,
// with kill, SIGKILL.
func (s *session) stopCoordinator(i int, kill bool) error {
	srv, api := s.coordinator(i)
	if s.coords != nil {
		s.coords.SetLive(api, false)
	}
	api.Close()
	if pu, err := readProc(srv.Pid()); err == nil {
		s.retiredCPU += pu.CPU
	}
	if !kill {
		return srv.Stop()
	}
	srv.Kill()
	if i == 0 { // not sampled any more
		s.srv = nil
	} else {
		s.peers[i-1].srv = nil
	}
	return nil
}

// startCoordinator starts coordinator i again with its id and port and
// puts it back into the load balancer once ready.
func (s *session) startCoordinator(ctx context.Context, i int) error {
	if i > 0 {
		return s.startPeer(ctx, s.peers[i-1])
	}
	if err := s.start(ctx); err != nil {
		return err
	}
	if s.coords != nil {
		s.coords.SetLive(s.api, true)
	}
	return nil
}

// heapAlloc reads the coordinator's heap after a forced GC
// (/debug/pprof/heap?gc=1&debug=1, runtime.MemStats.HeapAlloc).
func (s *session) heapAlloc(ctx context.Context) (int64, error) {
	res, err := s.pprof(ctx, "/debug/pprof/heap?gc=1&debug=1")
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	var b bytes.Buffer
	if _, err := b.ReadFrom(res.Body); err != nil {
		return 0, err
	}
	return parseHeapAlloc(b.Bytes())
}

// pprof GETs route of /debug/pprof/ as the admin principal (the profiles
// need ADMIN); an answer other than 200 is an error.
func (s *session) pprof(ctx context.Context, route string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.srv.Root+route, nil)
	if err != nil {
		return nil, err
	}
	req.SetBasicAuth(s.api.User, s.api.Password)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	if res.StatusCode != http.StatusOK {
		res.Body.Close()
		return nil, fmt.Errorf("pprof: HTTP %d", res.StatusCode)
	}
	return res, nil
}

// parseHeapAlloc finds "# HeapAlloc = N" in a debug=1 heap profile.
func parseHeapAlloc(b []byte) (int64, error) {
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "# HeapAlloc = "); ok {
			return strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		}
	}
	return 0, errors.New("heap profile: no HeapAlloc line")
}

// restart stops the coordinator and starts it again with group commit on
// or off and lease TTL ttl; the fleets keep their state and carry on (on
// the memory store the groups are created again and the members rejoin).
func (s *session) restart(ctx context.Context, groupCommit bool, ttl time.Duration) error {
	s.api.Close()
	if err := s.srv.Stop(); err != nil {
		return err
	}
	s.cfg.GroupCommit, s.cfg.LeaseTTL, s.cfg.RebalanceTimeout = groupCommit, ttl, rebalanceTimeout(ttl)
	if err := s.start(ctx); err != nil {
		return err
	}
	if s.cfg.Store != coordproc.StoreMemory {
		return nil
	}
	for _, f := range s.fleets { // the memory store forgot them
		if err := s.api.CreateGroup(ctx, f.key, f.shards); err != nil {
			return err
		}
	}
	return nil
}

// close stops the coordinator and removes the run's data from the store,
// also when ctx has ended.
func (s *session) close(ctx context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	s.stopPeers()
	if s.srv != nil {
		s.api.Close()
		if err := s.srv.Stop(); err != nil {
			s.r.logf("%s: stopping the coordinator: %v", s.name, err)
		}
	}
	for _, f := range s.fleets {
		f.Close()
	}
	if err := s.probe.Cleanup(ctx); err != nil {
		s.r.logf("%s: store cleanup: %v", s.name, err)
	}
}

// createGroups creates groups groups of members members and shards shards,
// createWorkers at a time, and their fleets (in group order).
func (s *session) createGroups(ctx context.Context, groups, members, shards int) error {
	s.groups, s.members, s.shards = groups, members, shards
	fleets := make([]*Fleet, groups)
	next := make(chan int)
	errs := make(chan error, createWorkers)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	for range min(createWorkers, groups) {
		wg.Go(func() {
			for g := range next {
				key := groupKey(g)
				if s.prefixPerGroup {
					key = streamGroupKey(g)
				}
				if err := s.createGroup(ctx, key, shards); err != nil {
					errs <- err
					cancel()
					return
				}
				fleets[g] = NewFleet(s.api, key, members, shards, s.cfg.LeaseTTL, s.r.oracle, s.r.epoch)
			}
		})
	}
	func() {
		defer close(next)
		for g := range groups {
			select {
			case next <- g:
			case <-ctx.Done():
				return
			}
		}
	}()
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	s.fleets = append(s.fleets, fleets...)
	return nil
}

// createWorkers is how many group creations createGroups has in flight.
const createWorkers = 16

// createGroup creates key, trying again up to createAttempts times after
// a 503 (a store call that timed out on a busy machine): a 409 after one
// means the earlier attempt did create it.
func (s *session) createGroup(ctx context.Context, key group.Key, shards int) error {
	for attempt := 1; ; attempt++ {
		err := s.api.CreateGroup(ctx, key, shards)
		var ae *adminError
		switch {
		case err == nil:
			return nil
		case attempt > 1 && errors.As(err, &ae) && ae.status == http.StatusConflict:
			return nil
		case attempt < createAttempts && errors.As(err, &ae) && ae.status == http.StatusServiceUnavailable:
			if !sleepUntil(ctx, time.Now().Add(time.Duration(attempt)*200*time.Millisecond)) {
				return ctx.Err()
			}
		default:
			return err
		}
	}
}

// createAttempts bounds the attempts of createGroup.
const createAttempts = 5

// restartMembers replaces every member's process by a new one (see
// Sim.Rejoin): its epoch-0 heartbeat is a join replay, which rewrites its
// lease without moving any shard. The joins are not measured.
func (s *session) restartMembers() {
	for _, f := range s.fleets {
		for _, sim := range f.sims {
			sim.Rejoin(false)
		}
	}
}

// size is the number of members over all groups.
func (s *session) size() int { return s.groups * s.members }

// fire is a fireFunc over every member of every group, the groups
// interleaved.
func (s *session) fire(ctx context.Context, i int, intended time.Time, rec *Recorder) {
	s.fleets[i%len(s.fleets)].fire(ctx, i/len(s.fleets), intended, rec)
}

// settle heartbeats the members in passes (each member once per pass,
// closed loop) until every group is settled: joined, full targets owned,
// every shard read once. Members join in waves of Options.WaveMembers, in
// group order (groups of up to WaveMembers members join whole): each pass
// covers the members of the waves so far, and the next wave starts once
// they are settled, so a pass over members that already joined stays
// short while the next ones join. It returns the phase, named name, and
// fails after the settle timeout, which grows with the member count (see
// Runner.settleTimeout; requests still in flight then are canceled).
func (s *session) settle(ctx context.Context, name string) (Phase, error) {
	since := s.r.now()
	timeout := s.r.settleTimeout(s.size())
	wave := max(s.r.opts.WaveMembers, 1)
	if s.members <= wave {
		wave = max(wave/s.members, 1) * s.members // whole groups
	}
	return s.measure(ctx, name, "closed", 0, func() (*Recorder, error) {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		rec := NewRecorder()
		for active := min(wave, s.size()); ; active = min(active+wave, s.size()) {
			for !s.settled(active, since) {
				if ctx.Err() != nil {
					return rec, fmt.Errorf("%s: %d of %d members not settled after %v", s.name, active, s.size(), timeout)
				}
				pass(ctx, active, s.r.opts.Connections, s.fireGroupMajor, rec)
			}
			if active == s.size() {
				return rec, nil
			}
			s.r.logf("%s: %d of %d members settled", name, active, s.size())
		}
	})
}

// fireGroupMajor is a fireFunc over every member of every group, group
// after group (the order in which settle's waves join them).
func (s *session) fireGroupMajor(ctx context.Context, i int, intended time.Time, rec *Recorder) {
	s.fleets[i/s.members].fire(ctx, i%s.members, intended, rec)
}

// settled reports whether the first active members in group-major order
// (see fireGroupMajor) are settled: every group they complete, and the
// members of the group they end in, whose shards they must then read alone.
func (s *session) settled(active int, since time.Duration) bool {
	for g, f := range s.fleets {
		n := min(max(active-g*s.members, 0), len(f.sims))
		if n == 0 {
			break
		}
		if !f.Settled(f.sims[:n], since) {
			return false
		}
	}
	return true
}

// usage is what measure samples around a phase.
type usage struct {
	coord, self ProcUsage
	machine     time.Duration // CPU time of every processor outside idle
	store       StoreCounters
}

// sample reads the usage counters.
func (s *session) sample(ctx context.Context) (usage, error) {
	var u usage
	var errs [5]error
	if s.srv != nil { // the peer scenario runs no coordinator
		u.coord, errs[0] = readProc(s.srv.Pid())
	}
	u.coord.CPU += s.retiredCPU
	for _, p := range s.peers {
		if p.srv == nil {
			continue
		}
		pu, err := readProc(p.srv.Pid())
		u.coord.CPU += pu.CPU
		u.coord.PeakRSS = max(u.coord.PeakRSS, pu.PeakRSS)
		errs[4] = errors.Join(errs[4], err)
	}
	u.self, errs[1] = readProc(os.Getpid())
	u.machine, errs[2] = readMachineBusy()
	u.store, errs[3] = s.probe.Sample(ctx)
	return u, errors.Join(errs[:]...)
}

// measure runs one load phase and collects the coordinator's usage and
// the store's traffic around it.
func (s *session) measure(ctx context.Context, name, mode string, offered float64, run func() (*Recorder, error)) (Phase, error) {
	before, err := s.sample(ctx)
	if err != nil {
		return Phase{}, err
	}
	if s.srv != nil {
		resetPeakRSS(s.srv.Pid())
	}
	for _, p := range s.peers {
		if p.srv != nil {
			resetPeakRSS(p.srv.Pid())
		}
	}
	t0 := time.Now()
	start := s.r.now()
	rec, runErr := run()
	elapsed := time.Since(t0)
	after, err := s.sample(ctx)
	if err != nil {
		return Phase{}, err
	}
	p := Phase{
		Name: name, Store: s.cfg.Store, GroupCommit: s.cfg.GroupCommit, Groups: s.groups, Members: s.members,
		Shards: s.shards, Mode: mode, Connections: s.r.opts.Connections, OfferedRate: offered,
		Coordinators: 1 + len(s.peers), StoreMetric: s.probe.Metric(), StoreServer: s.probe.Server(), StartSeconds: start.Seconds(),
	}
	p.fill(rec, elapsed, before, after)
	p.DataPlaneBytes = lagReadBytes(p.StoreCommandsByName, s.streamKeys())
	s.r.logf("%s: %.0f answered/s, p99 %.2f ms, %d errors; cores: coordinator %.2f, load generator %.2f, store %.2f, others %.2f",
		name, p.Throughput, p.Latency.P99, p.Errors, p.CPUCores, p.LoadGenCores, p.StoreCores, p.OtherCores)
	return p, runErr
}

// fill sets the figures of a phase from its recorder and the usage
// sampled around it.
func (p *Phase) fill(rec *Recorder, elapsed time.Duration, before, after usage) {
	p.Seconds = elapsed.Seconds()
	p.Requests = rec.Latency.Count()
	p.Throughput = float64(p.Requests) / p.Seconds
	if n := p.Groups * p.Members; n > 0 {
		p.Passes = float64(p.Requests) / float64(n)
	}
	p.Latency = rec.Latency.Summary()
	p.Statuses = rec.Statuses()
	p.Errors, p.ErrorSamples = rec.Errors()
	p.CPUSeconds = (after.coord.CPU - before.coord.CPU).Seconds()
	p.CPUCores = p.CPUSeconds / p.Seconds
	p.PeakRSSMB = float64(after.coord.PeakRSS) / (1 << 20)
	p.LoadGenCores = (after.self.CPU - before.self.CPU).Seconds() / p.Seconds
	p.MachineCores = (after.machine - before.machine).Seconds() / p.Seconds
	store := after.store.Sub(before.store)
	p.StoreCores = store.CPU.Seconds() / p.Seconds
	p.OtherCores = max(p.MachineCores-p.CPUCores-p.LoadGenCores-p.StoreCores, 0)
	p.StoreBytes, p.StoreCommands, p.StoreCommandsByName = store.Bytes, store.Commands, store.ByCommand
	for _, c := range dataPlaneCommands {
		p.DataPlaneCommands += store.ByCommand[c]
	}
	if p.Requests > 0 {
		p.BytesPerHeartbeat = float64(store.Bytes) / float64(p.Requests)
		p.CommandsPerHeartbeat = float64(store.Commands) / float64(p.Requests)
	}
}

// profile saves a CPU profile of the coordinator taken over d into path;
// it runs concurrently with a load phase.
func (s *session) profile(ctx context.Context, d time.Duration, path string) error {
	return s.save(ctx, fmt.Sprintf("/debug/pprof/profile?seconds=%d", max(int(d.Seconds()), 1)), path)
}

// heapProfile saves the coordinator's heap profile after a forced GC to
// path (go tool pprof -sample_index=inuse_space).
func (s *session) heapProfile(ctx context.Context, path string) error {
	return s.save(ctx, "/debug/pprof/heap?gc=1", path)
}

// save writes the coordinator's answer to GET <root><route> to path.
func (s *session) save(ctx context.Context, route, path string) error {
	res, err := s.pprof(ctx, route)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := f.ReadFrom(res.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// rebalanceTimeout is coordination.rebalance-timeout for lease TTL ttl:
// the default (60 s, written as 0) unless ttl is longer, as a setup lease
// scaled with the member count is (a member whose pass comes round once a
// minute would else be fenced for not acknowledging a revoke in time).
func rebalanceTimeout(ttl time.Duration) time.Duration {
	if ttl > time.Minute {
		return ttl
	}
	return 0
}

// streamKeys are the stream keys of the session's groups: those the lag
// refresher reads.
func (s *session) streamKeys() []string {
	var keys []string
	for g := range s.groups {
		key := groupKey(g)
		if s.prefixPerGroup {
			key = streamGroupKey(g)
		}
		for i := range s.shards {
			keys = append(keys, contract.StreamKey(key.StreamPrefix, i))
		}
	}
	return keys
}

// groupKey is the key of group g of a session.
func groupKey(g int) group.Key {
	return group.Key{StreamPrefix: "bench", ConsumerGroup: fmt.Sprintf("g%d", g)}
}

// streamGroupKey is the key of group g of a session whose groups each have
// a stream prefix of their own.
func streamGroupKey(g int) group.Key {
	return group.Key{StreamPrefix: fmt.Sprintf("bench-s%d", g), ConsumerGroup: fmt.Sprintf("g%d", g)}
}

// schemaName maps s to a PostgreSQL identifier that needs no quoting
// (lower-case letters, digits and underscores), as search_path reads it.
func schemaName(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			return r
		case r >= 'A' && r <= 'Z':
			return r + 'a' - 'A'
		}
		return '_'
	}, s)
}
