package chaos

// The sink scenario (issue 46): real consumer processes (this executable
// again, with SinkConsumerEnv set: sinkconsumer.go) write every entry's
// effect through the fenced Redis and PostgreSQL sinks while the scenario
// SIGKILLs them, stops them past their lease (SIGSTOP, then SIGCONT once
// the shards they held were taken over and written: the zombie), cuts
// them off from the coordinators past their lease, kills coordinators and
// moves shards back with live resets. The oracle reads
// each sink's log of applied entries per shard, in the order they were
// applied, and splits it into reset generations.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httputil"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"

	"github.com/redis-stream-coordinator/coordinator/client"
	"github.com/redis-stream-coordinator/coordinator/client/sink"
	"github.com/redis-stream-coordinator/coordinator/client/sink/pgsink"
	"github.com/redis-stream-coordinator/coordinator/client/sink/redissink"
	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/coordproc"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/redisproc"
)

// SinkOptions configure a sink scenario run; start from SinkDefaults.
type SinkOptions struct {
	Seed int64
	// Duration is the fault phase; SettleTimeout bounds the heal phase.
	Duration, SettleTimeout time.Duration
	// Consumers is how many consumer processes run at once; Shards the
	// group's shard count; Rate the entries written per second.
	Consumers, Shards, Rate int
	// LeaseTTL and Interval are the coordinators' member lease and
	// heartbeat interval.
	LeaseTTL, Interval time.Duration
	// PostgresURL is the PostgreSQL server of the sink (a schema per run).
	PostgresURL string
	// Binary is the coordinator executable; Self the executable started
	// as a consumer process (with SinkConsumerEnv set).
	Binary, Self string
	// Dir holds the run's files; a temporary directory when empty, removed
	// after a passing run.
	Dir string
}

// SinkDefaults returns the defaults: 3 consumers over 4 shards, 100
// entries a second, 30 s of faults, a 2 s lease.
func SinkDefaults() SinkOptions {
	return SinkOptions{
		Duration: 30 * time.Second, SettleTimeout: 40 * time.Second, Consumers: 3, Shards: 4, Rate: 100,
		LeaseTTL: 2 * time.Second, Interval: 200 * time.Millisecond,
		PostgresURL: Defaults().PostgresURL,
	}
}

// SinkResult is the outcome of a sink scenario run.
type SinkResult struct {
	Seed int64
	// Written is the entries written; Applied and Replays count, per sink
	// ("redis", "pg"), the effects applied and the generations after the
	// first their shards' logs split into (live resets replayed them).
	Written int
	Applied map[string]int
	Replays map[string]int
	// Duplicates and Missing count, per sink, the entries applied twice in
	// one generation and those never applied.
	Duplicates, Missing map[string]int
	// ZombieAttempted and ZombieRefused count, per sink, the writes of
	// handler calls that were running when their process was stopped past
	// its lease, and those the fence refused.
	ZombieAttempted, ZombieRefused map[string]int
	// Faults counts the faults injected by kind.
	Faults     map[string]int
	Violations []string
}

// Failed reports whether the run broke a rule: a duplicate, a missing
// entry, a zombie write accepted, no zombie write at all, or another
// violation.
func (r *SinkResult) Failed() bool {
	if len(r.Violations) > 0 {
		return true
	}
	for _, s := range sinkNames {
		if r.Duplicates[s] > 0 || r.Missing[s] > 0 || r.ZombieAttempted[s] == 0 || r.ZombieRefused[s] != r.ZombieAttempted[s] {
			return true
		}
	}
	return false
}

var sinkNames = []string{"redis", "pg"}

// Report writes the run's summary and its violations.
func (r *SinkResult) Report(w io.Writer) {
	status := "ok"
	if r.Failed() {
		status = "FAILED"
	}
	fmt.Fprintf(w, "sinks seed %d: %s, %d entries written, faults %v\n", r.Seed, status, r.Written, r.Faults)
	for _, s := range sinkNames {
		fmt.Fprintf(w, "  %s sink: %d effects, %d replays by live resets, %d duplicates, %d missing, zombie writes refused %d of %d\n",
			s, r.Applied[s], r.Replays[s], r.Duplicates[s], r.Missing[s], r.ZombieRefused[s], r.ZombieAttempted[s])
	}
	for _, v := range r.Violations {
		fmt.Fprintln(w, "  violation:", v)
	}
}

// sinkRun is one run's state.
type sinkRun struct {
	o       SinkOptions
	dir     string
	rng     *rand.Rand
	redis   *redisproc.Server
	rdb     *redis.Client
	pgURL   string
	cluster *cluster
	base    string // the consumers' coordinator: a proxy to a live one
	admin   *client.Coordinator
	prefix  string
	group   string
	keys    string // key prefix of the Redis sink and the counters
	fences  string // the PostgreSQL sink's tables
	effects string
	procs   []*sinkConsumer
	n       int
	res     *SinkResult
	// cut holds the ids of the members whose heartbeats the proxy drops
	// (a partition between them and the coordinators).
	cut sync.Map
}

// sinkConsumer is one consumer process.
type sinkConsumer struct {
	id  string
	cmd *exec.Cmd
	// done is closed when the process has exited.
	done chan struct{}
}

// RunSinks runs the sink scenario with o.
func RunSinks(ctx context.Context, o SinkOptions) (res *SinkResult, err error) {
	if o.Binary == "" || o.Self == "" {
		return nil, errors.New("sinks: no coordinator binary or no executable to start consumers from")
	}
	r := &sinkRun{o: o, rng: rand.New(rand.NewPCG(uint64(o.Seed), 0x5e)), group: "sinks",
		res: &SinkResult{Seed: o.Seed, Applied: map[string]int{}, Replays: map[string]int{}, Duplicates: map[string]int{},
			Missing: map[string]int{}, ZombieAttempted: map[string]int{}, ZombieRefused: map[string]int{}, Faults: map[string]int{}}}
	suffix := randomSuffix()
	r.prefix, r.keys = "sinks-"+suffix, "sinks:"+suffix+":"
	r.fences, r.effects = "fences_"+suffix, "effects_"+suffix
	if r.dir = o.Dir; r.dir == "" {
		if r.dir, err = os.MkdirTemp("", "coord-chaos-sinks-"); err != nil {
			return nil, err
		}
		defer func() {
			if err == nil && !res.Failed() {
				removeDir(r.dir)
			}
		}()
	}
	if err := os.MkdirAll(filepath.Join(r.dir, "redis"), 0o750); err != nil {
		return nil, err
	}
	if r.redis, err = redisproc.Start(ctx, filepath.Join(r.dir, "redis")); err != nil {
		return nil, err
	}
	defer r.redis.Kill()
	r.rdb = redis.NewClient(&redis.Options{Addr: r.redis.Addr})
	defer r.rdb.Close()
	schema, err := newPGSchema(ctx, o.PostgresURL)
	if err != nil {
		return nil, err
	}
	defer func() { _ = schema.drop(context.WithoutCancel(ctx)) }()
	if r.pgURL, err = schema.url(); err != nil {
		return nil, err
	}
	if err := r.setupPG(ctx); err != nil {
		return nil, err
	}
	cfg := coordproc.ServerConfig{Store: coordproc.StoreRedis, KeyPrefix: "coord:" + suffix + ":", RedisAddr: r.redis.Addr,
		GroupCommit: true, Interval: o.Interval, LeaseTTL: o.LeaseTTL, RebalanceTimeout: 4 * o.LeaseTTL}
	if r.cluster, err = startCluster(ctx, o.Binary, r.dir, cfg, 2); err != nil {
		return nil, err
	}
	defer r.cluster.close()
	stopProxy, err := r.proxy()
	if err != nil {
		return nil, err
	}
	defer stopProxy()
	r.admin = client.NewCoordinator(r.base, client.WithBasicAuth("admin", "password"))
	if _, err := r.admin.CreateGroup(ctx, r.prefix, r.group, o.Shards, "coord-chaos"); err != nil {
		return nil, fmt.Errorf("create group: %w", err)
	}
	for range o.Consumers {
		if err := r.start(); err != nil {
			return nil, err
		}
	}
	defer func() {
		for _, p := range r.procs {
			p.kill()
		}
	}()
	faults, cancelFaults := context.WithTimeout(ctx, o.Duration)
	defer cancelFaults()
	var wg sync.WaitGroup
	wg.Go(func() { r.produce(faults) })
	r.faults(faults)
	wg.Wait()
	r.heal(ctx)
	for _, p := range r.procs {
		p.stop()
	}
	r.procs = nil
	r.check(ctx)
	return r.res, nil
}

// setupPG creates the PostgreSQL sink's tables.
func (r *sinkRun) setupPG(ctx context.Context) error {
	conn, err := pgx.Connect(ctx, r.pgURL)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE TABLE "+r.effects+" (seq bigserial PRIMARY KEY, stream text NOT NULL, entry text NOT NULL, token bigint NOT NULL, member text NOT NULL)"); err != nil {
		return err
	}
	s, err := pgsink.New(pgsink.Config{DB: conn, Group: r.group, Table: r.fences})
	if err != nil {
		return err
	}
	return s.Setup(ctx)
}

// proxy serves the consumers' coordinator address: each request goes to
// a live coordinator at random.
func (r *sinkRun) proxy() (func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	var mu sync.Mutex
	rng := rand.New(rand.NewPCG(uint64(r.o.Seed), 0x9e))
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			mu.Lock()
			_, base, ok := r.cluster.pick(rng)
			mu.Unlock()
			if !ok {
				base = "http://127.0.0.1:1" + contract.BasePath
			}
			u, _ := pr.In.URL.Parse(base)
			pr.Out.URL.Scheme, pr.Out.URL.Host = u.Scheme, u.Host
		},
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			http.Error(w, err.Error(), http.StatusBadGateway)
		},
	}
	handler := http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if _, rest, ok := strings.Cut(req.URL.Path, "/members/"); ok {
			if _, cut := r.cut.Load(strings.TrimSuffix(rest, "/heartbeat")); cut {
				http.Error(w, "partitioned", http.StatusBadGateway)
				return
			}
		}
		rp.ServeHTTP(w, req)
	})
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	r.base = "http://" + ln.Addr().String() + contract.BasePath
	return func() { _ = srv.Close() }, nil
}

// start starts a new consumer process.
func (r *sinkRun) start() error {
	r.n++
	p := &sinkConsumer{id: fmt.Sprintf("sink-%03d", r.n), done: make(chan struct{})}
	conf, _ := json.Marshal(sinkProc{
		Base: r.base, RedisAddr: r.redis.Addr, PostgresURL: r.pgURL, Prefix: r.prefix, Group: r.group, MemberID: p.id,
		KeyPrefix: r.keys, FenceTable: r.fences, EffectsTable: r.effects, Lease: r.o.LeaseTTL, Work: 20 * time.Millisecond,
	})
	logf, err := os.Create(filepath.Join(r.dir, p.id+".log"))
	if err != nil {
		return err
	}
	p.cmd = exec.Command(r.o.Self)
	p.cmd.Env = append(os.Environ(), SinkConsumerEnv+"="+string(conf))
	p.cmd.Stdout, p.cmd.Stderr = logf, logf
	if err := p.cmd.Start(); err != nil {
		_ = logf.Close()
		return err
	}
	go func() {
		_ = p.cmd.Wait()
		_ = logf.Close()
		close(p.done)
	}()
	r.procs = append(r.procs, p)
	return nil
}

// kill SIGKILLs p (a stopped process too) and waits for it.
func (p *sinkConsumer) kill() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// stop ends p gracefully (SIGTERM: it drains and leaves), SIGKILLing it
// after 15 s.
func (p *sinkConsumer) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGCONT)
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(15 * time.Second):
		p.kill()
	}
}

// produce writes Rate entries a second, spread over the shards, until ctx
// ends; a failed write is retried.
func (r *sinkRun) produce(ctx context.Context) {
	tick := time.NewTicker(time.Second / time.Duration(max(1, r.o.Rate)))
	defer tick.Stop()
	for i := 0; ctx.Err() == nil; i++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		key := contract.StreamKey(r.prefix, i%r.o.Shards)
		for ctx.Err() == nil {
			if err := r.rdb.XAdd(context.WithoutCancel(ctx), &redis.XAddArgs{Stream: key, Values: []any{"n", i}}).Err(); err == nil {
				r.res.Written++
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// faults injects a fault every 0.5–1.5 s until ctx ends, one at a time:
// first one of each kind, a stop past the lease first (so that every run
// has a zombie), then kinds drawn with the seed.
func (r *sinkRun) faults(ctx context.Context) {
	kinds := []func(context.Context){r.zombie, r.liveReset, r.killCoordinator, r.killConsumer, r.partition}
	for i := 0; ctx.Err() == nil; i++ {
		select {
		case <-ctx.Done():
			return
		case <-time.After(500*time.Millisecond + time.Duration(r.rng.IntN(1000))*time.Millisecond):
		}
		f := kinds[r.rng.IntN(len(kinds))]
		if i < len(kinds) {
			f = kinds[i]
		}
		f(ctx)
	}
}

// killConsumer SIGKILLs a consumer process and starts another.
func (r *sinkRun) killConsumer(context.Context) {
	i := r.rng.IntN(len(r.procs))
	r.procs[i].kill()
	r.procs = slices.Delete(r.procs, i, i+1)
	r.res.Faults["consumer SIGKILL"]++
	if err := r.start(); err != nil {
		r.res.Violations = append(r.res.Violations, "consumer not started: "+err.Error())
	}
}

// partition cuts a consumer that holds shards off from the coordinators
// (its heartbeats fail; it keeps reaching Redis and PostgreSQL) for the
// lease and 2 s more, so that its lease lapses and its shards move, then
// heals it.
func (r *sinkRun) partition(ctx context.Context) {
	for _, p := range r.procs {
		if len(r.heldBy(ctx, p.id)) == 0 {
			continue
		}
		r.cut.Store(p.id, true)
		r.res.Faults["consumer partitioned past its lease"]++
		select {
		case <-ctx.Done():
		case <-time.After(r.o.LeaseTTL + 2*time.Second):
		}
		r.cut.Delete(p.id)
		return
	}
}

// killCoordinator SIGKILLs one of the two coordinators and restarts it.
func (r *sinkRun) killCoordinator(ctx context.Context) {
	i := r.rng.IntN(2)
	if r.cluster.kill(i) {
		r.res.Faults["coordinator SIGKILL"]++
	}
	time.Sleep(time.Duration(r.rng.IntN(1000)) * time.Millisecond)
	if err := r.cluster.restart(ctx, i); err != nil && ctx.Err() == nil {
		r.res.Violations = append(r.res.Violations, "coordinator not restarted: "+err.Error())
	}
}

// liveReset moves a shard back by 20 entries with a live reset and waits
// for it to end.
func (r *sinkRun) liveReset(ctx context.Context) {
	shard := r.rng.IntN(r.o.Shards)
	lr, err := r.admin.LiveReset(ctx, r.prefix, r.group, contract.OffsetReset{To: "BY", By: -20, Shards: []int{shard}, RequestedBy: "coord-chaos", Reason: "sinks"})
	if err != nil {
		return // refused (another reset runs, a coordinator is down): no fault
	}
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if end, err := r.admin.WaitReset(wctx, r.prefix, r.group, lr.ResetID, 100*time.Millisecond); err == nil {
		lr = end
	}
	r.res.Faults["live reset "+string(lr.State)]++
}

// zombie stops a consumer process that holds shards (SIGSTOP) while one
// of its handler calls stalls, waits until every shard it held was
// granted again and written to both sinks with a higher token, then lets
// it run again (SIGCONT): the handler calls it was running write then, as
// a zombie.
func (r *sinkRun) zombie(ctx context.Context) {
	var victim *sinkConsumer
	var held []int
	for _, p := range r.procs {
		if held = r.heldBy(ctx, p.id); len(held) > 0 {
			victim = p
			break
		}
	}
	if victim == nil {
		return
	}
	before := map[int][2]int64{}
	for _, s := range held {
		before[s] = r.fenceTokens(ctx, s)
	}
	// Stop it while a handler call stalls, so that it has a write to make
	// when it runs again; a consumer that handles nothing for 15 s is not
	// stopped.
	_ = r.rdb.Set(ctx, stallKey(r.keys, victim.id), "1", 0).Err()
	for end := time.Now().Add(15 * time.Second); time.Now().Before(end) && r.rdb.Exists(ctx, stalledKey(r.keys, victim.id)).Val() == 0; {
		time.Sleep(10 * time.Millisecond)
	}
	stalledShard, err := r.rdb.Get(ctx, stalledKey(r.keys, victim.id)).Int()
	_ = r.rdb.Del(ctx, stallKey(r.keys, victim.id), stalledKey(r.keys, victim.id)).Err()
	if err != nil {
		return
	}
	// The stalled call's shard is waited for too (the consumer may have
	// been granted it after held was read): its zombie write must come
	// after a later grant wrote, or the sink has no higher token to
	// refuse it with.
	if _, ok := before[stalledShard]; !ok {
		before[stalledShard] = r.fenceTokens(ctx, stalledShard)
		held = append(held, stalledShard)
	}
	_ = victim.cmd.Process.Signal(syscall.SIGSTOP)
	r.res.Faults["consumer SIGSTOP past the lease"]++
	deadline := time.Now().Add(r.o.LeaseTTL + 20*time.Second)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		taken := true
		for _, s := range held {
			now := r.fenceTokens(ctx, s)
			if now[0] <= before[s][0] || now[1] <= before[s][1] {
				taken = false
			}
		}
		if taken {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	_ = victim.cmd.Process.Signal(syscall.SIGCONT)
}

// heldBy returns the shards the coordinator lists member id as reading.
func (r *sinkRun) heldBy(ctx context.Context, id string) []int {
	members, err := r.admin.Members(ctx, r.prefix, r.group)
	if err != nil {
		return nil
	}
	for _, m := range members {
		if m.MemberID == id {
			return m.CurrentAssignment
		}
	}
	return nil
}

// fenceTokens returns shard's fence token in the Redis sink and in the
// PostgreSQL sink (0 before any write).
func (r *sinkRun) fenceTokens(ctx context.Context, shard int) [2]int64 {
	stream := contract.StreamKey(r.prefix, shard)
	var out [2]int64
	if v, err := r.rdb.HGet(ctx, r.keys+"{"+stream+"}:fence:"+r.group, "token").Result(); err == nil {
		out[0], _ = strconv.ParseInt(v, 10, 64)
	}
	if conn, err := pgx.Connect(ctx, r.pgURL); err == nil {
		_ = conn.QueryRow(ctx, "SELECT token FROM "+r.fences+" WHERE stream = $1 AND consumer_group = $2", stream, r.group).Scan(&out[1])
		conn.Close(ctx)
	}
	return out
}

// heal keeps the consumers running until both sinks applied every
// written entry, or SettleTimeout passes.
func (r *sinkRun) heal(ctx context.Context) {
	deadline := time.Now().Add(r.o.SettleTimeout)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		done := true
		for s := range r.o.Shards {
			stream := contract.StreamKey(r.prefix, s)
			last, err := r.rdb.XRevRangeN(ctx, stream, "+", "-", 1).Result()
			if err != nil || len(last) == 0 {
				continue
			}
			_, redisAt, _ := r.redisPosition(ctx, stream)
			if redisAt != last[0].ID || r.pgPosition(ctx, stream) != last[0].ID {
				done = false
			}
		}
		if done {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	r.res.Violations = append(r.res.Violations, fmt.Sprintf("the sinks did not catch up within %v", r.o.SettleTimeout))
}

func (r *sinkRun) redisPosition(ctx context.Context, stream string) (int64, string, error) {
	rs, err := redissink.New(redissink.Config{Redis: r.rdb, Group: r.group, KeyPrefix: r.keys})
	if err != nil {
		return 0, "", err
	}
	return rs.Position(ctx, stream)
}

func (r *sinkRun) pgPosition(ctx context.Context, stream string) string {
	conn, err := pgx.Connect(ctx, r.pgURL)
	if err != nil {
		return ""
	}
	defer conn.Close(ctx)
	ps, err := pgsink.New(pgsink.Config{DB: conn, Group: r.group, Table: r.fences})
	if err != nil {
		return ""
	}
	_, at, _ := ps.Position(ctx, stream)
	return at
}

// check runs the oracle on both sinks' logs and reads the zombie counters.
func (r *sinkRun) check(ctx context.Context) {
	resets, err := r.admin.Resets(ctx, r.prefix, r.group)
	if err != nil {
		r.res.Violations = append(r.res.Violations, "live resets not read: "+err.Error())
	}
	setIDs := map[int][]string{} // shard → the ids its resets set
	for _, lr := range resets {
		for _, s := range lr.Shards {
			if s.SetID != "" {
				setIDs[s.ShardIndex] = append(setIDs[s.ShardIndex], s.SetID)
			}
		}
	}
	conn, err := pgx.Connect(ctx, r.pgURL)
	if err != nil {
		r.res.Violations = append(r.res.Violations, "postgres: "+err.Error())
		return
	}
	defer conn.Close(ctx)
	for s := range r.o.Shards {
		stream := contract.StreamKey(r.prefix, s)
		entries, err := r.rdb.XRange(ctx, stream, "-", "+").Result()
		if err != nil {
			r.res.Violations = append(r.res.Violations, "XRANGE: "+err.Error())
			continue
		}
		ids := make([]string, len(entries))
		for i, e := range entries {
			ids[i] = e.ID
		}
		logs := map[string][]string{}
		rlog, err := r.rdb.LRange(ctx, r.keys+"{"+stream+"}:applied", 0, -1).Result()
		if err != nil {
			r.res.Violations = append(r.res.Violations, "LRANGE: "+err.Error())
		}
		for _, l := range rlog {
			id, _, _ := strings.Cut(l, "|")
			logs["redis"] = append(logs["redis"], id)
		}
		rows, err := conn.Query(ctx, "SELECT entry FROM "+r.effects+" WHERE stream = $1 ORDER BY seq", stream)
		if err != nil {
			r.res.Violations = append(r.res.Violations, "effects: "+err.Error())
			continue
		}
		pg, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			r.res.Violations = append(r.res.Violations, "effects: "+err.Error())
		}
		logs["pg"] = pg
		for _, name := range sinkNames {
			g := generations(ids, logs[name], setIDs[s])
			r.res.Applied[name] += len(logs[name])
			r.res.Replays[name] += max(0, g.generations-1)
			r.res.Duplicates[name] += g.duplicates
			r.res.Missing[name] += g.missing
			for _, v := range g.violations {
				r.res.Violations = append(r.res.Violations, fmt.Sprintf("%s sink, shard %d: %s", name, s, v))
			}
		}
	}
	for _, name := range sinkNames {
		r.res.ZombieAttempted[name], _ = r.rdb.Get(ctx, zombieKey(r.keys, "attempted", name)).Int()
		r.res.ZombieRefused[name], _ = r.rdb.Get(ctx, zombieKey(r.keys, "refused", name)).Int()
	}
}

// generationCheck is the oracle's verdict on one shard's log of one sink.
type generationCheck struct {
	generations, duplicates, missing int
	violations                       []string
}

// generations checks log, a sink's applied entry ids of one shard in the
// order they were applied, against ids, the shard's entries in stream
// order, and setIDs, the ids the shard's live resets set. The log splits
// into generations where an id is not above the one before: each such
// start must be the first entry after one of setIDs (a reset's replay);
// within a generation ids rise one entry of the stream at a time (an id
// twice is a duplicate; a skipped entry is missing); the first generation
// starts at the stream's first entry and the last ends at its last.
func generations(ids, log, setIDs []string) generationCheck {
	var g generationCheck
	if len(ids) == 0 {
		if len(log) > 0 {
			g.violations = append(g.violations, fmt.Sprintf("%d effects of a shard without entries", len(log)))
		}
		return g
	}
	pos := make(map[string]int, len(ids))
	for i, id := range ids {
		pos[id] = i
	}
	// starts[i] counts the resets whose set id ids[i] is the first entry after.
	starts := map[int]int{}
	for _, set := range setIDs {
		at, err := sink.ParseID(set)
		if err != nil {
			continue
		}
		starts[sort.Search(len(ids), func(i int) bool {
			x, _ := sink.ParseID(ids[i])
			return x.Compare(at) > 0
		})]++
	}
	if len(log) == 0 {
		g.missing = len(ids)
		return g
	}
	g.generations = 1
	prev := -1
	for n, id := range log {
		i, ok := pos[id]
		switch {
		case !ok:
			g.violations = append(g.violations, "effect of an unknown entry "+id)
			continue
		case n == 0 && i != 0:
			g.missing += i
		case n == 0:
		case i == prev:
			g.duplicates++
		case i > prev+1:
			g.missing += i - prev - 1
		case i < prev:
			g.generations++
			if starts[i] == 0 {
				g.duplicates += prev - i + 1
				g.violations = append(g.violations, fmt.Sprintf("applied again from %s, where no live reset moved the group", id))
			} else {
				starts[i]--
			}
		}
		prev = i
	}
	if prev != len(ids)-1 {
		g.missing += len(ids) - 1 - prev
	}
	return g
}
