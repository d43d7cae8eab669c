package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	goredis "github.com/redis/go-redis/v9"

	"github.com/redis-stream-coordinator/coordinator/client"
	"github.com/redis-stream-coordinator/coordinator/client/sink"
	"github.com/redis-stream-coordinator/coordinator/client/sink/pgsink"
	"github.com/redis-stream-coordinator/coordinator/client/sink/redissink"
	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/coordproc"
)

// The sinks scenario's size: its shards, the entries each throughput run
// consumes, the runs of each loop, the zombie cycles, and the lease of its
// coordinator.
const (
	sinkShards  = 8
	sinkEntries = 20000
	sinkRounds  = 2
	sinkZombies = 3
	sinkLease   = 2 * time.Second
)

// Loops of the sinks scenario (SinkFigures.Runs).
const (
	LoopRedisSink = "redis-sink"
	LoopPlainSink = "plain-writes"
	LoopPGSink    = "pg-sink"
)

// SinkFigures are the sinks scenario's figures (goals P14a–c, issue 46).
// The throughput runs consume the same pre-filled entries, each with a
// consumer group of its own: LoopRedisSink, an Ordered client.Consumer
// whose handler appends the entry's id to a list through the Redis sink
// (one script per entry: fence, skip check, RPUSH, XACK); LoopPlainSink,
// a client.Consumer with its defaults whose handler appends it with a
// plain RPUSH (one round trip per entry too, unfenced, acknowledged in
// batches); LoopPGSink, an Ordered consumer inserting a row per entry
// through the PostgreSQL sink. The zombie cycles each stall a consumer's
// handler call while its heartbeats are cut off, until its lease lapsed
// and another consumer wrote the shard under a later grant, then let the
// call write to both sinks.
type SinkFigures struct {
	Entries int `json:"entries"`
	Shards  int `json:"shards"`
	// Runs in the order they ran (a warm-up of each loop first, not
	// counted); RedisSink, Plain and PGSink add up each loop's.
	WarmUp    []DataPlaneRun `json:"warmUp"`
	Runs      []DataPlaneRun `json:"runs"`
	RedisSink DataPlaneRun   `json:"redisSink"`
	Plain     DataPlaneRun   `json:"plain"`
	PGSink    DataPlaneRun   `json:"pgSink"`
	// ZombieAttempted are the writes of the stalled handler calls, two per
	// cycle (one per sink), ZombieRefused those the fences refused.
	ZombieAttempted int    `json:"zombieAttempted"`
	ZombieRefused   int    `json:"zombieRefused"`
	ZombieError     string `json:"zombieError,omitempty"`
	// Held compares the other keys' throughput of a HoldFailedKeys
	// consumer when some keys' entries fail with a run without failures
	// (issue 46 item 3).
	Held *HeldFigures `json:"held,omitempty"`
}

// HeldFigures are the held-keys runs: a client.Consumer with
// HoldFailedKeys over the scenario's entries (1,000 keys), its handler
// working 100 µs per entry, once failing every entry of 10 keys twice
// before it succeeds, once without failures. OtherKeys counts the entries of the other keys;
// Clean and Failing are their entries/s, from the first shard's start to
// the last of them handled; OutOfOrder counts the entries that succeeded
// before an earlier entry of their key (both runs).
type HeldFigures struct {
	OtherKeys  int     `json:"otherKeys"`
	Clean      float64 `json:"cleanEntriesPerSecond"`
	Failing    float64 `json:"failingEntriesPerSecond"`
	Ratio      float64 `json:"ratio"`
	Retried    int     `json:"retried"`
	OutOfOrder int     `json:"outOfOrder"`
}

// runSinks runs the sinks scenario: a coordinator (memory store, a 2 s
// lease) on the run's Redis, the throughput runs in alternating order and
// the zombie cycles; PostgreSQL is the run's server, in a schema of the
// scenario's own.
func (r *Runner) runSinks(ctx context.Context) error {
	s, err := r.openSession(ctx, "sinks", coordproc.StoreMemory, true, sinkShards, sinkLease)
	if err != nil {
		return err
	}
	defer s.close(ctx)
	prefix := "coord-bench:" + r.runID + "_sinks"
	probe := newRedisProbe(r.redis, prefix)
	rdb := goredis.NewClient(&goredis.Options{Addr: r.redis.addr, PoolSize: 32})
	pgp, err := newPGProbe(ctx, r.postgres, schemaName("coord_bench_"+r.runID+"_sinks"))
	if err != nil {
		return err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		if err := errors.Join(probe.Cleanup(cctx), pgp.Cleanup(cctx)); err != nil {
			r.logf("sinks: cleanup: %v", err)
		}
		_ = rdb.Close()
	}()
	pgURL, err := withSearchPath(r.postgres.addr, pgp.schema)
	if err != nil {
		return err
	}
	pool, err := pgxpool.New(ctx, pgURL)
	if err != nil {
		return err
	}
	defer pool.Close()
	keys := make([]string, sinkShards)
	for i := range keys {
		keys[i] = contract.StreamKey(prefix, i)
	}
	r.logf("sinks: writing %d entries to %d shards", sinkEntries, sinkShards)
	if err := fillStreams(ctx, rdb, keys, sinkEntries); err != nil {
		return err
	}
	f := &SinkFigures{Entries: sinkEntries, Shards: sinkShards}
	r.report.Sinks = f
	coord := client.NewCoordinator(s.api.Base, client.WithBasicAuth(s.api.User, s.api.Password))
	env := &sinkEnv{coord: coord, rdb: rdb, pool: pool, prefix: prefix, keys: keys}
	if _, err := pool.Exec(ctx, "CREATE TABLE effects (stream text NOT NULL, entry text NOT NULL)"); err != nil {
		return err
	}
	for i := -1; i < sinkRounds; i++ {
		loops := []string{LoopRedisSink, LoopPlainSink, LoopPGSink}
		if i%2 != 0 {
			loops = []string{LoopPlainSink, LoopRedisSink, LoopPGSink}
		}
		for _, loop := range loops {
			name := loop + "-" + strconv.Itoa(i)
			if i < 0 {
				name = loop + "-warm-up"
			}
			for _, key := range keys {
				if err := rdb.XGroupCreate(ctx, key, name, "0").Err(); err != nil {
					return fmt.Errorf("sinks: group %s on %s: %w", name, key, err)
				}
			}
			if err := s.api.CreateGroup(ctx, group.Key{StreamPrefix: prefix, ConsumerGroup: name}, sinkShards); err != nil {
				return err
			}
			run, err := env.run(ctx, loop, name, &loopMeter{probe: probe})
			if err != nil {
				return fmt.Errorf("sinks: %s: %w", name, err)
			}
			if i < 0 {
				f.WarmUp = append(f.WarmUp, run)
				continue
			}
			f.Runs = append(f.Runs, run)
			r.logf("sinks/%s: %d entries in %.3f s: %.0f entries/s, %.2f µs client CPU per entry", name, run.Entries, run.Seconds, run.Throughput, run.CPUMicrosPerEntry)
		}
	}
	for _, run := range f.Runs {
		switch run.Loop {
		case LoopRedisSink:
			f.RedisSink.add(run)
		case LoopPlainSink:
			f.Plain.add(run)
		case LoopPGSink:
			f.PGSink.add(run)
		}
	}
	f.RedisSink.Loop, f.Plain.Loop, f.PGSink.Loop = LoopRedisSink, LoopPlainSink, LoopPGSink
	if f.Held, err = env.heldRuns(ctx, s); err != nil {
		return fmt.Errorf("sinks: held keys: %w", err)
	}
	r.logf("sinks/held: other keys %.0f entries/s with 10 keys failing, %.0f without (%.3f); %d runs failed, %d entries out of order",
		f.Held.Failing, f.Held.Clean, f.Held.Ratio, f.Held.Retried, f.Held.OutOfOrder)
	for c := range sinkZombies {
		name := "zombie-" + strconv.Itoa(c)
		if err := s.api.CreateGroup(ctx, group.Key{StreamPrefix: prefix + "-" + name, ConsumerGroup: "g"}, 1); err != nil {
			return err
		}
		attempted, refused, err := env.zombie(ctx, prefix+"-"+name)
		f.ZombieAttempted += attempted
		f.ZombieRefused += refused
		if err != nil {
			f.ZombieError = err.Error()
			r.logf("sinks/%s: %v", name, err)
			break
		}
		r.logf("sinks/%s: zombie writes refused %d of %d", name, refused, attempted)
	}
	return nil
}

// sinkEnv is what the sinks scenario's runs share.
type sinkEnv struct {
	coord  *client.Coordinator
	rdb    *goredis.Client
	pool   *pgxpool.Pool
	prefix string
	keys   []string
}

// run consumes every entry once with loop on consumer group grp and
// returns its figures; the clocks start at the first shard's start and
// stop once every entry is acknowledged.
func (e *sinkEnv) run(ctx context.Context, loop, grp string, m *loopMeter) (DataPlaneRun, error) {
	var handled atomic.Int64
	n := int64(sinkEntries)
	all := make(chan struct{})
	count := func() {
		if handled.Add(1) == n {
			close(all)
		}
	}
	cfg := client.ConsumerConfig{
		Member:       client.MemberConfig{Coordinator: e.coord, StreamPrefix: e.prefix, Group: grp, MemberID: grp, Logger: slog.New(slog.DiscardHandler)},
		Redis:        e.rdb,
		OnShardStart: func(int) { m.begin(ctx) },
	}
	switch loop {
	case LoopRedisSink:
		s, err := redissink.New(redissink.Config{Redis: e.rdb, Group: grp, KeyPrefix: e.prefix + ":"})
		if err != nil {
			return DataPlaneRun{}, err
		}
		write := s.Handler(func(_ context.Context, msg client.Message, w *redissink.Writes) error {
			w.RPush(s.Key(msg.Stream, grp), msg.ID)
			return nil
		})
		cfg.Ordered = true
		cfg.Handler = func(ctx context.Context, msg client.Message) error {
			err := write(ctx, msg)
			if err == nil {
				count()
			}
			return err
		}
	case LoopPlainSink:
		cfg.Handler = func(ctx context.Context, msg client.Message) error {
			err := e.rdb.RPush(ctx, e.prefix+":{"+msg.Stream+"}:"+grp, msg.ID).Err()
			if err == nil {
				count()
			}
			return err
		}
	case LoopPGSink:
		s, err := pgsink.New(pgsink.Config{DB: e.pool, Group: grp, Table: "fences"})
		if err != nil {
			return DataPlaneRun{}, err
		}
		if err := s.Setup(ctx); err != nil {
			return DataPlaneRun{}, err
		}
		write := s.Handler(func(ctx context.Context, msg client.Message, tx pgx.Tx) error {
			_, err := tx.Exec(ctx, "INSERT INTO effects (stream, entry) VALUES ($1, $2)", msg.Stream, msg.ID)
			return err
		})
		cfg.Ordered = true
		cfg.Handler = func(ctx context.Context, msg client.Message) error {
			err := write(ctx, msg)
			if err == nil {
				count()
			}
			return err
		}
	}
	c, err := client.NewConsumer(cfg)
	if err != nil {
		return DataPlaneRun{}, err
	}
	cctx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan error, 1)
	go func() { done <- c.Run(cctx) }()
	select {
	case <-all:
	case err := <-done:
		return DataPlaneRun{}, fmt.Errorf("the consumer stopped after %d of %d entries: %v", handled.Load(), n, err)
	case <-ctx.Done():
		return DataPlaneRun{}, ctx.Err()
	}
	if err := awaitAcked(ctx, e.rdb, e.keys, grp); err != nil {
		return DataPlaneRun{}, err
	}
	run, err := m.end(ctx, loop, handled.Load())
	stop()
	return run, errors.Join(err, <-done)
}

// heldRuns runs the held-keys comparison (HeldFigures) on the scenario's
// streams, each run with a consumer group of its own.
func (e *sinkEnv) heldRuns(ctx context.Context, s *session) (*HeldFigures, error) {
	failing := func(key string) bool { // k0 … k9 of the 1,000 keys
		n, err := strconv.Atoi(strings.TrimPrefix(key, "k"))
		return err == nil && n < 10
	}
	h := &HeldFigures{}
	for _, fail := range []bool{false, true} {
		grp := "held-clean"
		if fail {
			grp = "held-failing"
		}
		for _, key := range e.keys {
			if err := e.rdb.XGroupCreate(ctx, key, grp, "0").Err(); err != nil {
				return nil, err
			}
		}
		if err := s.api.CreateGroup(ctx, group.Key{StreamPrefix: e.prefix, ConsumerGroup: grp}, sinkShards); err != nil {
			return nil, err
		}
		var mu sync.Mutex
		runs := map[string]int{}
		last := map[string]string{} // stream/key → the id that succeeded last
		others, outOfOrder, retried := 0, 0, 0
		var start, othersDone time.Time
		total := 0
		all := make(chan struct{})
		c, err := client.NewConsumer(client.ConsumerConfig{
			Member: client.MemberConfig{Coordinator: e.coord, StreamPrefix: e.prefix, Group: grp, MemberID: grp, Logger: slog.New(slog.DiscardHandler)},
			Redis:  e.rdb, HoldFailedKeys: true, ClaimMinIdle: 50 * time.Millisecond, ClaimInterval: 20 * time.Millisecond, MaxDeliveries: 10,
			OnShardStart: func(int) {
				mu.Lock()
				if start.IsZero() {
					start = time.Now()
				}
				mu.Unlock()
			},
			Handler: func(_ context.Context, m client.Message) error {
				time.Sleep(100 * time.Microsecond) // the entry's work
				mu.Lock()
				defer mu.Unlock()
				id := m.Stream + "/" + m.ID
				runs[id]++
				if fail && failing(m.Key) && runs[id] <= 2 {
					retried++
					return errors.New("failing key")
				}
				k := m.Stream + "/" + m.Key
				if prev := last[k]; prev != "" && !idBefore(prev, m.ID) {
					outOfOrder++
				}
				last[k] = m.ID
				if !failing(m.Key) {
					if others++; others == sinkEntries*99/100 {
						othersDone = time.Now()
					}
				}
				if total++; total == sinkEntries {
					close(all)
				}
				return nil
			},
		})
		if err != nil {
			return nil, err
		}
		cctx, stop := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- c.Run(cctx) }()
		select {
		case <-all:
		case err := <-done:
			stop()
			return nil, fmt.Errorf("the consumer stopped: %v", err)
		case <-time.After(5 * time.Minute):
		}
		stop()
		<-done
		mu.Lock()
		if total != sinkEntries {
			mu.Unlock()
			return nil, fmt.Errorf("%s handled %d of %d entries", grp, total, sinkEntries)
		}
		rate := ratio(float64(others), othersDone.Sub(start).Seconds())
		h.OtherKeys, h.OutOfOrder = others, h.OutOfOrder+outOfOrder
		if fail {
			h.Failing, h.Retried = rate, retried
		} else {
			h.Clean = rate
		}
		mu.Unlock()
	}
	h.Ratio = ratio(h.Failing, h.Clean)
	return h, nil
}

// cutTransport fails every request while cut is set: the member's
// heartbeats do not get through (a partition), its Redis still does.
type cutTransport struct{ cut *atomic.Bool }

func (t cutTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.cut.Load() {
		return nil, errors.New("cut off")
	}
	return http.DefaultTransport.RoundTrip(req)
}

// zombie runs one zombie cycle on the one-shard group g of stream prefix
// p: consumer a writes entries through both sinks until one of its
// handler calls stalls; its heartbeats are then cut off, so its lease
// lapses and the coordinator expires it; consumer b takes the shard over
// and writes under a later grant; then a's stalled call writes to both
// sinks. It returns the writes attempted by the stalled call and those
// refused.
func (e *sinkEnv) zombie(ctx context.Context, p string) (attempted, refused int, err error) {
	key := contract.StreamKey(p, 0)
	if err := fillStreams(ctx, e.rdb, []string{key}, 200); err != nil {
		return 0, 0, err
	}
	rs, err := redissink.New(redissink.Config{Redis: e.rdb, Group: "g", KeyPrefix: p + ":"})
	if err != nil {
		return 0, 0, err
	}
	ps, err := pgsink.New(pgsink.Config{DB: e.pool, Group: "g", Table: "fences"})
	if err != nil {
		return 0, 0, err
	}
	if err := ps.Setup(ctx); err != nil {
		return 0, 0, err
	}
	pgWrite := func(context.Context, client.Message, pgx.Tx) error { return nil }
	redisWrite := func(_ context.Context, msg client.Message, w *redissink.Writes) error {
		w.RPush(rs.Key(msg.Stream, "log"), msg.ID)
		return nil
	}
	var mu sync.Mutex
	stalled, release := make(chan client.Message, 1), make(chan struct{})
	var outcomes []error
	applied := atomic.Int64{}
	handler := func(stall bool) client.Handler {
		return func(ctx context.Context, msg client.Message) error {
			if stall && applied.Load() >= 20 {
				select {
				case stalled <- msg:
					<-release // the stall: the call ignores its cancelled context, as a stuck one would
					wctx := context.WithoutCancel(ctx)
					_, perr := ps.Apply(wctx, msg, pgWrite)
					_, rerr := rs.Apply(wctx, msg, redisWrite)
					mu.Lock()
					outcomes = append(outcomes, perr, rerr)
					mu.Unlock()
					return errors.Join(perr, rerr)
				default:
				}
			}
			if _, err := ps.Apply(ctx, msg, pgWrite); err != nil {
				return err
			}
			if _, err := rs.Apply(ctx, msg, redisWrite); err != nil {
				return err
			}
			applied.Add(1)
			return nil
		}
	}
	var cut atomic.Bool
	start := func(id string, h client.Handler, tr http.RoundTripper) (func(), error) {
		coord := client.NewCoordinator(e.coord.BaseURL(), client.WithBasicAuth("admin", "password"), client.WithHTTPClient(&http.Client{Timeout: time.Second, Transport: tr}))
		c, err := client.NewConsumer(client.ConsumerConfig{
			Member: client.MemberConfig{Coordinator: coord, StreamPrefix: p, Group: "g", MemberID: id, Logger: slog.New(slog.DiscardHandler)},
			Redis:  e.rdb, Ordered: true, Handler: h,
		})
		if err != nil {
			return nil, err
		}
		cctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- c.Run(cctx) }()
		return func() { cancel(); <-done }, nil
	}
	stopA, err := start("a", handler(true), cutTransport{&cut})
	if err != nil {
		return 0, 0, err
	}
	defer stopA()
	var msg client.Message
	select {
	case msg = <-stalled:
	case <-time.After(time.Minute):
		return 0, 0, errors.New("a never stalled")
	}
	cut.Store(true)
	stopB, err := start("b", handler(false), http.DefaultTransport)
	if err != nil {
		close(release)
		return 0, 0, err
	}
	defer stopB()
	// b writes the shard under a later grant: both fences pass a's token
	// and b's applied position reaches the stalled entry.
	deadline := time.Now().Add(time.Minute)
	for {
		rt, rAt, err1 := rs.Position(ctx, key)
		pt, pAt, err2 := ps.Position(ctx, key)
		if err1 == nil && err2 == nil && rt > msg.Fence.Token && pt > msg.Fence.Token && rAt != "" && pAt != "" && !idBefore(rAt, msg.ID) && !idBefore(pAt, msg.ID) {
			break
		}
		if time.Now().After(deadline) {
			close(release)
			return 0, 0, errors.New("b never wrote the shard under a later grant")
		}
		time.Sleep(20 * time.Millisecond)
	}
	close(release)
	for {
		mu.Lock()
		n := len(outcomes)
		mu.Unlock()
		if n == 2 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, err := range outcomes {
		attempted++
		if errors.Is(err, client.ErrFenced) {
			refused++
		}
	}
	return attempted, refused, nil
}

// idBefore reports whether entry id a is before b.
func idBefore(a, b string) bool {
	x, err1 := sink.ParseID(a)
	y, err2 := sink.ParseID(b)
	return err1 == nil && err2 == nil && x.Compare(y) < 0
}

// sinkGoals evaluates P14a–c (issue 46) from the sinks scenario.
func (r *Report) sinkGoals() []Goal {
	f := r.Sinks
	if f == nil {
		f = &SinkFigures{}
	}
	rs, p, pg := f.RedisSink, f.Plain, f.PGSink
	runs := fmt.Sprintf("%d entries, %d shards, %d runs of each loop alternating", f.Entries, f.Shards, len(f.Runs)/3)
	perCore := ratio(pg.Throughput, ratio(pg.CPUSeconds, pg.Seconds))
	p14b := goal("P14b", "PostgreSQL sink entries/s per core of the consumer (Ordered, one transaction per entry)", perCore, 0, false, pg.Entries > 0,
		fmt.Sprintf("%.0f entries/s at %.2f client cores (%.1f µs client CPU per entry; PostgreSQL's CPU not counted); %s",
			pg.Throughput, ratio(pg.CPUSeconds, pg.Seconds), pg.CPUMicrosPerEntry, runs))
	if p14b.Status != NotRun {
		p14b.Status = Info
	}
	zombies := fmt.Sprintf("%d of %d zombie writes refused over %d cycles (one per sink each)", f.ZombieRefused, f.ZombieAttempted, sinkZombies)
	if f.ZombieError != "" {
		zombies += "; " + f.ZombieError
	}
	return []Goal{
		goal("P14a", "Redis-sink consumer throughput over a plain client.Consumer's writing the same effect", ratio(rs.Throughput, p.Throughput), 0.7, false,
			rs.Entries > 0 && p.Entries > 0,
			fmt.Sprintf("%.0f ÷ %.0f entries/s (Ordered, a script per entry: fence, skip check, RPUSH, XACK ÷ defaults, a plain RPUSH per entry); %s",
				rs.Throughput, p.Throughput, runs)),
		p14b,
		goal("P14c", "zombie writes refused ÷ zombie writes attempted", ratio(float64(f.ZombieRefused), float64(f.ZombieAttempted)), 1, false,
			f.ZombieAttempted > 0 && f.ZombieError == "", zombies),
	}
}

// printSinks writes the sinks scenario's runs, if any.
func (r *Report) printSinks(w io.Writer) {
	f := r.Sinks
	if f == nil || len(f.Runs) == 0 {
		return
	}
	fmt.Fprintf(w, "sinks: %d entries on %d shards, the Redis sink and the PostgreSQL sink against a client.Consumer with a plain RPUSH per entry; zombie writes refused %d of %d:\n",
		f.Entries, f.Shards, f.ZombieRefused, f.ZombieAttempted)
	if h := f.Held; h != nil {
		fmt.Fprintf(w, "held keys (HoldFailedKeys): the other keys' %d entries at %.0f entries/s with 10 of 1,000 keys failing twice per entry, %.0f without: %.3f; %d failed runs; %d entries out of order\n",
			h.OtherKeys, h.Failing, h.Clean, h.Ratio, h.Retried, h.OutOfOrder)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "run\tentries\tseconds\tentries/s\tclient CPU µs/entry\t")
	for _, run := range append(append([]DataPlaneRun{}, f.Runs...), f.RedisSink, f.Plain, f.PGSink) {
		fmt.Fprintf(tw, "%s\t%d\t%.3f\t%.0f\t%.2f\t\n", run.Loop, run.Entries, run.Seconds, run.Throughput, run.CPUMicrosPerEntry)
	}
	tw.Flush()
}
