package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/debug"
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

// The dataplane scenario's group: its shards and the read COUNT of both
// loops (the consumer's default BatchSize).
const (
	dataPlaneShards = 4
	dataPlaneBatch  = 100
)

// Loops of the dataplane scenario (DataPlaneRun.Loop).
const (
	LoopConsumer = "consumer"
	LoopPlain    = "plain"
)

// DataPlaneFigures are the dataplane scenario's figures (goals P12a–b,
// issue 35): client.Consumer with its defaults and a no-op handler against
// a plain go-redis loop on the same pre-filled shard streams, each run on
// a consumer group of its own, the two loops alternating.
type DataPlaneFigures struct {
	Entries int `json:"entries"`
	Shards  int `json:"shards"`
	Batch   int `json:"batch"`
	// WarmUp are a first run of each loop, not counted: the process's
	// first run also grows its heap and dials its connections.
	WarmUp []DataPlaneRun `json:"warmUp"`
	// Runs in the order they ran; Consumer and Plain add up each loop's.
	Runs     []DataPlaneRun `json:"runs"`
	Consumer DataPlaneRun   `json:"consumer"`
	Plain    DataPlaneRun   `json:"plain"`
}

// DataPlaneRun is one loop consuming every entry once: from its first read
// until every entry is acknowledged. CPUSeconds is the harness process's
// CPU time over the run (the loop under test is the only thing it runs
// then: the client's CPU), RedisCPUSeconds the Redis server's.
type DataPlaneRun struct {
	Loop              string  `json:"loop"`
	Entries           int64   `json:"entries"`
	Seconds           float64 `json:"seconds"`
	CPUSeconds        float64 `json:"cpuSeconds"`
	RedisCPUSeconds   float64 `json:"redisCpuSeconds"`
	Throughput        float64 `json:"entriesPerSecond"`
	CPUMicrosPerEntry float64 `json:"cpuMicrosPerEntry"`
	// RedisCommands are the commands Redis served during the run, by name
	// (INFO commandstats: every client's, the harness's INFO included).
	RedisCommands map[string]int64 `json:"redisCommands,omitempty"`
}

// add adds o's entries, time and CPU to d and recomputes its rates.
func (d *DataPlaneRun) add(o DataPlaneRun) {
	d.Entries += o.Entries
	d.Seconds += o.Seconds
	d.CPUSeconds += o.CPUSeconds
	d.RedisCPUSeconds += o.RedisCPUSeconds
	for name, n := range o.RedisCommands {
		if d.RedisCommands == nil {
			d.RedisCommands = map[string]int64{}
		}
		d.RedisCommands[name] += n
	}
	d.Throughput = ratio(float64(d.Entries), d.Seconds)
	d.CPUMicrosPerEntry = ratio(d.CPUSeconds, float64(d.Entries)) * 1e6
}

// runDataPlane measures the Go client's data plane (issue 35). A
// coordinator (memory store) serves the consumer's membership; the
// shard streams live on the run's Redis under a key prefix of the run's
// own, filled with DataPlaneEntries entries over dataPlaneShards shards.
// After a warm-up run of each loop (not counted), DataPlaneRounds rounds
// each run the consumer and the plain loop, in alternating order
// (consumer first in even rounds), every run with a consumer group of its
// own created at the start of the streams. The
// garbage collector runs at Go's default (GOGC 100) meanwhile, as in an
// application.
func (r *Runner) runDataPlane(ctx context.Context) error {
	o := r.opts
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	s, err := r.openSession(ctx, "dataplane", coordproc.StoreMemory, true, dataPlaneShards, o.LeaseTTL)
	if err != nil {
		return err
	}
	defer s.close(ctx)
	prefix := "coord-bench:" + r.runID + "_dataplane"
	probe := newRedisProbe(r.redis, prefix)
	rdb := goredis.NewClient(&goredis.Options{Addr: r.redis.addr})
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		if err := probe.Cleanup(cctx); err != nil {
			r.logf("dataplane: Redis cleanup: %v", err)
		}
		_ = rdb.Close()
	}()
	r.env.Redis = probe.Version(ctx)
	keys := make([]string, dataPlaneShards)
	for i := range keys {
		keys[i] = contract.StreamKey(prefix, i)
	}
	r.logf("dataplane: writing %d entries to %d shards", o.DataPlaneEntries, dataPlaneShards)
	if err := fillStreams(ctx, rdb, keys, o.DataPlaneEntries); err != nil {
		return err
	}
	f := &DataPlaneFigures{Entries: o.DataPlaneEntries, Shards: dataPlaneShards, Batch: dataPlaneBatch}
	r.report.DataPlane = f
	coord := client.NewCoordinator(s.api.Base, client.WithBasicAuth(s.api.User, s.api.Password))
	for i := -1; i < o.DataPlaneRounds; i++ {
		loops := []string{LoopConsumer, LoopPlain}
		if i%2 != 0 {
			loops = []string{LoopPlain, LoopConsumer}
		}
		for _, loop := range loops {
			name := loop + "-" + strconv.Itoa(i)
			if i < 0 {
				name = loop + "-warm-up"
			}
			for _, key := range keys {
				if err := rdb.XGroupCreate(ctx, key, name, "0").Err(); err != nil {
					return fmt.Errorf("dataplane: group %s on %s: %w", name, key, err)
				}
			}
			m := &loopMeter{probe: probe}
			var run DataPlaneRun
			if loop == LoopConsumer {
				if err := s.api.CreateGroup(ctx, group.Key{StreamPrefix: prefix, ConsumerGroup: name}, dataPlaneShards); err != nil {
					return err
				}
				run, err = consumerRun(ctx, coord, rdb, prefix, name, keys, int64(o.DataPlaneEntries), m)
			} else {
				run, err = plainRun(ctx, rdb, keys, name, m)
			}
			if err != nil {
				return fmt.Errorf("dataplane: %s: %w", name, err)
			}
			if i < 0 {
				f.WarmUp = append(f.WarmUp, run)
			} else {
				f.Runs = append(f.Runs, run)
			}
			r.logf("dataplane/%s: %d entries in %.3f s: %.0f entries/s, %.2f µs CPU per entry (Redis %.2f µs); Redis commands %s",
				name, run.Entries, run.Seconds, run.Throughput, run.CPUMicrosPerEntry, ratio(run.RedisCPUSeconds, float64(run.Entries))*1e6,
				formatCounts(run.RedisCommands))
		}
	}
	for _, run := range f.Runs {
		if run.Loop == LoopConsumer {
			f.Consumer.add(run)
		} else {
			f.Plain.add(run)
		}
	}
	f.Consumer.Loop, f.Plain.Loop = LoopConsumer, LoopPlain
	return nil
}

// fillStreams writes n entries round-robin to keys, in pipelines: a key
// field of 1,000 values and a sequence number each.
func fillStreams(ctx context.Context, rdb *goredis.Client, keys []string, n int) error {
	const chunk = 1000
	for from := 0; from < n; from += chunk {
		pipe := rdb.Pipeline()
		for i := from; i < min(from+chunk, n); i++ {
			pipe.XAdd(ctx, &goredis.XAddArgs{Stream: keys[i%len(keys)], Values: []any{"key", "k" + strconv.Itoa(i%1000), "seq", i}})
		}
		if _, err := pipe.Exec(ctx); err != nil {
			return fmt.Errorf("dataplane: filling the streams: %w", err)
		}
	}
	return nil
}

// loopMeter samples the wall clock, the harness's CPU time and the Redis
// server's around one run.
type loopMeter struct {
	probe     *redisProbe
	startOnce sync.Once
	start     time.Time
	cpu       time.Duration
	redis     StoreCounters
	startErr  error
}

// sample reads the three clocks and Redis's command counts.
func (m *loopMeter) sample(ctx context.Context) (time.Time, time.Duration, StoreCounters, error) {
	self, err := readProc(os.Getpid())
	if err != nil {
		return time.Time{}, 0, StoreCounters{}, err
	}
	store, err := m.probe.Sample(ctx)
	return time.Now(), self.CPU, store, err
}

// begin starts the run's clocks (once).
func (m *loopMeter) begin(ctx context.Context) {
	m.startOnce.Do(func() { m.start, m.cpu, m.redis, m.startErr = m.sample(ctx) })
}

// end stops the clocks and returns the run's figures for entries.
func (m *loopMeter) end(ctx context.Context, loop string, entries int64) (DataPlaneRun, error) {
	now, cpu, redis, err := m.sample(ctx)
	if err = errors.Join(m.startErr, err); err != nil {
		return DataPlaneRun{}, err
	}
	store := redis.Sub(m.redis)
	run := DataPlaneRun{Loop: loop}
	run.add(DataPlaneRun{Entries: entries, Seconds: now.Sub(m.start).Seconds(), CPUSeconds: (cpu - m.cpu).Seconds(),
		RedisCPUSeconds: store.CPU.Seconds(), RedisCommands: store.ByCommand})
	return run, nil
}

// plainRun is the plain go-redis loop: one goroutine per shard sends, in
// one pipeline, the XACK of the entries it read last and the next
// XREADGROUP COUNT dataPlaneBatch, until a read finds nothing.
func plainRun(ctx context.Context, rdb *goredis.Client, keys []string, grp string, m *loopMeter) (DataPlaneRun, error) {
	var total atomic.Int64
	errs := make([]error, len(keys))
	var wg sync.WaitGroup
	m.begin(ctx)
	for i, key := range keys {
		wg.Go(func() {
			args := &goredis.XReadGroupArgs{Group: grp, Consumer: "plain", Streams: []string{key, ">"}, Count: dataPlaneBatch, Block: -1}
			var read []string
			for {
				pipe := rdb.Pipeline()
				if len(read) > 0 {
					pipe.XAck(ctx, key, grp, read...)
				}
				cmd := pipe.XReadGroup(ctx, args)
				if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, goredis.Nil) {
					errs[i] = err
					return
				}
				read = read[:0]
				for _, st := range cmd.Val() {
					for _, msg := range st.Messages {
						read = append(read, msg.ID)
					}
				}
				if len(read) == 0 {
					return
				}
				total.Add(int64(len(read)))
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return DataPlaneRun{}, err
	}
	return m.end(ctx, LoopPlain, total.Load())
}

// consumerRun runs a client.Consumer with its defaults and a no-op
// handler on group grp until it has handled n entries and nothing is
// pending, then stops it (the leave is not timed). The clocks start when
// the member is given its first shard, before any read.
func consumerRun(ctx context.Context, coord *client.Coordinator, rdb *goredis.Client, prefix, grp string, keys []string, n int64, m *loopMeter) (DataPlaneRun, error) {
	var handled atomic.Int64
	all := make(chan struct{})
	c, err := client.NewConsumer(client.ConsumerConfig{
		Member: client.MemberConfig{Coordinator: coord, StreamPrefix: prefix, Group: grp, MemberID: grp, Logger: slog.New(slog.DiscardHandler)},
		Redis:  rdb,
		Handler: func(context.Context, client.Message) error {
			if handled.Add(1) == n {
				close(all)
			}
			return nil
		},
		OnShardStart: func(int) { m.begin(ctx) },
	})
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
	if err := awaitAcked(ctx, rdb, keys, grp); err != nil {
		return DataPlaneRun{}, err
	}
	run, err := m.end(ctx, LoopConsumer, handled.Load())
	stop()
	return run, errors.Join(err, <-done)
}

// awaitAcked polls until group grp has nothing pending on keys.
func awaitAcked(ctx context.Context, rdb *goredis.Client, keys []string, grp string) error {
	for {
		pipe := rdb.Pipeline()
		cmds := make([]*goredis.XPendingCmd, len(keys))
		for i, key := range keys {
			cmds[i] = pipe.XPending(ctx, key, grp)
		}
		if _, err := pipe.Exec(ctx); err != nil {
			return err
		}
		var pending int64
		for _, cmd := range cmds {
			pending += cmd.Val().Count
		}
		if pending == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Millisecond):
		}
	}
}

// dataPlaneGoals evaluates P12a–b (issue 35) from the dataplane scenario.
func (r *Report) dataPlaneGoals() []Goal {
	f := r.DataPlane
	if f == nil {
		f = &DataPlaneFigures{}
	}
	c, p := f.Consumer, f.Plain
	ok := c.Entries > 0 && p.Entries > 0
	runs := fmt.Sprintf("%d entries, %d shards, %d runs of each loop alternating", f.Entries, f.Shards, len(f.Runs)/2)
	return []Goal{
		goal("P12a", "client.Consumer throughput over a plain go-redis loop's", ratio(c.Throughput, p.Throughput), 0.8, false, ok,
			fmt.Sprintf("%.0f ÷ %.0f entries/s; %s", c.Throughput, p.Throughput, runs)),
		goal("P12b", "client.Consumer CPU per entry over a plain go-redis loop's", ratio(c.CPUMicrosPerEntry, p.CPUMicrosPerEntry), 2, true,
			ok && p.CPUMicrosPerEntry > 0,
			fmt.Sprintf("%.2f ÷ %.2f µs of client CPU per entry (Redis %.2f and %.2f µs)", c.CPUMicrosPerEntry, p.CPUMicrosPerEntry,
				ratio(c.RedisCPUSeconds, float64(c.Entries))*1e6, ratio(p.RedisCPUSeconds, float64(p.Entries))*1e6)),
	}
}

// printDataPlane writes the dataplane runs, if any.
func (r *Report) printDataPlane(w io.Writer) {
	f := r.DataPlane
	if f == nil || len(f.Runs) == 0 {
		return
	}
	fmt.Fprintf(w, "dataplane: %d entries on %d shards, client.Consumer (defaults, no-op handler) vs a plain go-redis loop (XREADGROUP COUNT %d + pipelined XACK):\n",
		f.Entries, f.Shards, f.Batch)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "run\tentries\tseconds\tentries/s\tclient CPU µs/entry\tRedis CPU µs/entry\t")
	row := func(name string, run DataPlaneRun) {
		fmt.Fprintf(tw, "%s\t%d\t%.3f\t%.0f\t%.2f\t%.2f\t\n", name, run.Entries, run.Seconds, run.Throughput,
			run.CPUMicrosPerEntry, ratio(run.RedisCPUSeconds, float64(run.Entries))*1e6)
	}
	for _, run := range f.Runs {
		row(run.Loop, run)
	}
	row("consumer, all runs", f.Consumer)
	row("plain, all runs", f.Plain)
	tw.Flush()
}
