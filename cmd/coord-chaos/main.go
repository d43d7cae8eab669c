// Command coord-chaos runs the fault-injection suite of package chaos:
// for each seed, N coordinator processes on one shared store (a throwaway
// redis-server, or a schema of its own in PostgreSQL), simulated members
// and a seeded schedule of faults, then the heal phase and the oracle
// checks. It prints one summary line per run and every violation with its
// timeline, and exits 1 when any run failed. `make chaos` runs 50 seeds on
// each store. With -store redis it then runs the sink scenario
// (chaos.RunSinks: consumer processes writing through the fenced Redis and
// PostgreSQL sinks, SIGKILLed, stopped past their lease and resumed,
// coordinators killed, live resets) for -sinks seeds; its consumer
// processes are this executable again (chaos.SinkConsumerEnv).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/redis-stream-coordinator/coordinator/chaos"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/coordproc"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/membersim"
)

func main() {
	chaos.MaybeSinkConsumer()
	d := chaos.Defaults()
	fs := flag.NewFlagSet("coord-chaos", flag.ExitOnError)
	seed := fs.Int64("seed", 1, "first seed")
	seeds := fs.Int("seeds", 1, "number of consecutive seeds to run")
	parallel := fs.Int("parallel", 1, "runs at once")
	fs.DurationVar(&d.Duration, "duration", d.Duration, "fault phase of each run")
	fs.StringVar(&d.Store, "store", d.Store, "store: redis or jdbc")
	fs.StringVar(&d.PostgresURL, "postgres", d.PostgresURL, "PostgreSQL URL of the jdbc store (a schema per run)")
	fs.IntVar(&d.Coordinators, "coordinators", d.Coordinators, "coordinator processes")
	fs.IntVar(&d.Members, "members", d.Members, "simulated members")
	routing := fs.String("routing", string(d.Routing), "simulated members' coordinator per heartbeat: spread (a live one at random) or follow (the owner named by X-Coordinator-Owner, while it answers)")
	fs.IntVar(&d.RealMembers, "real", d.RealMembers, "real client.Consumers beside the simulated members (-1: none)")
	fs.IntVar(&d.Shards, "shards", d.Shards, "initial shard count")
	fs.DurationVar(&d.Interval, "interval", d.Interval, "heartbeat interval")
	fs.DurationVar(&d.LeaseTTL, "lease", d.LeaseTTL, "member lease TTL")
	fs.DurationVar(&d.RebalanceTimeout, "rebalance-timeout", d.RebalanceTimeout, "rebalance timeout")
	fs.Float64Var(&d.LostRate, "lost", d.LostRate, "share of heartbeat answers lost")
	fs.Float64Var(&d.DupRate, "dup", d.DupRate, "share of heartbeats duplicated and delayed")
	fs.BoolVar(&d.IgnoreLease, "ignore-lease", false, "control run: members ignore their local lease (the overlap oracle must fire)")
	fs.DurationVar(&d.SettleTimeout, "settle", d.SettleTimeout, "bound of the heal phase")
	sinkSeeds := fs.Int("sinks", -1, "sink scenario runs after the others, from the first seed (-1: 5 with -store redis, 0 with jdbc)")
	sinkDuration := fs.Duration("sinks-duration", chaos.SinkDefaults().Duration, "fault phase of each sink scenario run")
	keep := fs.String("keep", "", "keep every run's configurations and logs in `dir`/<store>-<seed> (default: a failed run's only, in a temporary directory)")
	_ = fs.Parse(os.Args[1:])
	var err error
	if d.Routing, err = membersim.ParseRouting(*routing); err != nil {
		fatal(err)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	binDir, err := os.MkdirTemp("", "coord-chaos-bin-")
	if err != nil {
		fatal(err)
	}
	defer os.RemoveAll(binDir)
	if d.Binary, err = coordproc.BuildCoordinator(ctx, binDir); err != nil {
		fatal(err)
	}

	began := time.Now()
	var mu sync.Mutex
	failed, errored := 0, 0
	var overlaps int
	var worstSettle time.Duration
	jobs := make(chan int64)
	var wg sync.WaitGroup
	for range max(1, *parallel) {
		wg.Go(func() {
			for s := range jobs {
				o := d
				o.Seed = s
				if *keep != "" {
					o.Dir = filepath.Join(*keep, fmt.Sprintf("%s-%d", o.Store, s))
				}
				res, err := runIn(ctx, o)
				mu.Lock()
				switch {
				case err != nil:
					errored++
					fmt.Printf("ERROR seed %d store %s: %v\n", s, o.Store, err)
				default:
					res.Report(os.Stdout)
					if res.Failed() {
						failed++
					}
					overlaps += res.Overlaps
					worstSettle = max(worstSettle, res.SettleTime)
				}
				mu.Unlock()
			}
		})
	}
	for i := range *seeds {
		if ctx.Err() != nil {
			break
		}
		jobs <- *seed + int64(i)
	}
	close(jobs)
	wg.Wait()
	fmt.Printf("coord-chaos %s: %d runs (seeds %d…%d), %d failed, %d could not run, %d overlaps, slowest settle %.1fs, took %v\n",
		d.Store, *seeds, *seed, *seed+int64(*seeds)-1, failed, errored, overlaps, worstSettle.Seconds(), time.Since(began).Round(time.Second))
	if *sinkSeeds < 0 && d.Store == coordproc.StoreRedis {
		*sinkSeeds = 5
	}
	for i := range max(0, *sinkSeeds) {
		if ctx.Err() != nil {
			break
		}
		o := chaos.SinkDefaults()
		o.Seed, o.Duration, o.Binary, o.PostgresURL = *seed+int64(i), *sinkDuration, d.Binary, d.PostgresURL
		if o.Self, err = os.Executable(); err != nil {
			fatal(err)
		}
		if *keep != "" {
			o.Dir = filepath.Join(*keep, fmt.Sprintf("sinks-%d", o.Seed))
			if err := os.MkdirAll(o.Dir, 0o750); err != nil {
				fatal(err)
			}
		}
		res, err := chaos.RunSinks(ctx, o)
		switch {
		case err != nil:
			errored++
			fmt.Printf("ERROR sinks seed %d: %v\n", o.Seed, err)
		default:
			res.Report(os.Stdout)
			if res.Failed() {
				failed++
			}
		}
	}
	if failed+errored > 0 {
		os.Exit(1)
	}
}

// runIn runs o, creating o.Dir first when it is set.
func runIn(ctx context.Context, o chaos.Options) (*chaos.Result, error) {
	if o.Dir != "" {
		if err := os.MkdirAll(o.Dir, 0o750); err != nil {
			return nil, err
		}
	}
	return chaos.Run(ctx, o)
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "coord-chaos:", err)
	os.Exit(2)
}
