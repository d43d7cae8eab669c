package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/redis-stream-coordinator/coordinator/bench"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/coordproc"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "coord-bench:", err)
		os.Exit(1)
	}
}

// run parses the flags, runs the scenarios and prints the tables.
func run(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("coord-bench", flag.ContinueOnError)
	fs.SetOutput(stdout)
	o := bench.Options{Log: stdout}
	scenarios := fs.String("scenarios", strings.Join(bench.DefaultScenarios, ","),
		"comma-separated scenarios: "+strings.Join(bench.Scenarios, ","))
	fs.StringVar(&o.Name, "name", "bench", "run name: the output is <out>/<date>-<name>.json")
	fs.StringVar(&o.OutDir, "out", "bench/results", "output directory")
	fs.StringVar(&o.Store, "store", coordproc.StoreRedis, "store of ceiling, steady, baseline and churn: memory, redis or jdbc")
	fs.IntVar(&o.Groups, "groups", 1, "groups (ceiling, steady, baseline, store)")
	fs.IntVar(&o.Members, "members", 10000, "members per group (ceiling, steady, baseline, store)")
	fs.IntVar(&o.Shards, "shards", 10000, "shards per group (ceiling, steady, baseline, store)")
	fs.DurationVar(&o.Interval, "interval", time.Second, "heartbeat interval (coordinator setting; churn members' schedule)")
	fs.DurationVar(&o.LeaseTTL, "lease-ttl", 10*time.Second, "member lease TTL of the measured phases")
	fs.DurationVar(&o.SetupLeaseTTL, "setup-lease-ttl", time.Minute, "member lease TTL while thousands of members join (see bench.Options)")
	fs.DurationVar(&o.Duration, "duration", 10*time.Second, "length of every measured load phase")
	fs.DurationVar(&o.SettleTimeout, "settle-timeout", 90*time.Second, "longest wait for members to settle")
	fs.DurationVar(&o.PassBudget, "pass-budget", 1500*time.Microsecond, "expected setup time per member of one pass: the setup lease is at least 2 passes, the settle timeout at least 10")
	fs.IntVar(&o.WaveMembers, "wave", 10000, "members joining per wave during setup (whole groups when smaller)")
	fs.IntVar(&o.Connections, "connections", 256, "HTTP connections and closed-loop workers")
	fs.Float64Var(&o.OpenRate, "rate", 0, "open-loop offered rate per second (0: -open-fraction of the ceiling, else members/interval)")
	fs.Float64Var(&o.OpenFraction, "open-fraction", 0.5, "open-loop rate as a fraction of the ceiling's closed-loop throughput")
	fs.IntVar(&o.Coordinators, "coordinators", 3, "coordinator processes of the multi and cluster scenarios")
	fs.DurationVar(&o.MultiDuration, "multi-duration", 75*time.Second, "length of multi/closed (P8a: it must cross the end of the setup leases) and of multi-owner/closed (P8e)")
	clusterSize := fs.String("cluster-size", "30x1000x1000", "groups x members x shards of the cluster scenario (P8b-d), each group on a stream prefix of its own")
	storeList := fs.String("store-list", "", "stores of the store scenario (default: jdbc when steady runs on redis, else memory,redis,jdbc)")
	fs.IntVar(&o.ManyGroups, "many-groups", 100, "groups of the groups scenario")
	fs.IntVar(&o.ManyMembers, "many-members", 1000, "members per group of the groups scenario")
	fs.IntVar(&o.ManyShards, "many-shards", 1000, "shards per group of the groups scenario")
	refs := fs.String("many-refs", "1x10000x10000,10x1000x1000",
		"sizes (groups x members x shards) the groups scenario measures before the many-group run, for the same-run ratio P6c (empty: none)")
	fs.DurationVar(&o.ScrapeInterval, "scrape-interval", 5*time.Second, "how often the groups scenario scrapes /actuator/prometheus, and the scrape scenario starts a round")
	fs.IntVar(&o.ScrapeGroups, "scrape-groups", 10000, "groups of the scrape scenario (one member each)")
	fs.IntVar(&o.ScrapeShards, "scrape-shards", 16, "shards per group of the scrape scenario")
	fs.IntVar(&o.ScrapeClients, "scrape-clients", 3, "concurrent /metrics scrapes per round of the scrape scenario (a round every -scrape-interval)")
	fs.IntVar(&o.DataPlaneEntries, "dataplane-entries", 200000, "entries the dataplane scenario writes to its 4 shards; each of its runs consumes them all")
	fs.IntVar(&o.DataPlaneRounds, "dataplane-rounds", 2, "runs of each loop of the dataplane scenario (client.Consumer and a plain go-redis loop, alternating)")
	fs.IntVar(&o.FleetGroups, "fleet-groups", 10000, "groups of the fleet scenario, each on a stream prefix of its own (defaults.max-groups is set to this)")
	fs.IntVar(&o.FleetShards, "fleet-shards", 16, "shards per group of the fleet scenario")
	fs.IntVar(&o.FleetMembers, "fleet-members", 10, "members per group of the fleet scenario, each heartbeating every 10 s")
	fs.IntVar(&o.ChurnMembers, "churn-members", 1000, "members of the churn group")
	fs.IntVar(&o.ChurnShards, "churn-shards", 10000, "shards of the churn group")
	releases := fs.String("release", bench.ReleasePrompt+","+bench.ReleaseInterval,
		"churn release policies, one churn run each: prompt (released shards reported at once) or interval (at the next heartbeat)")
	fs.StringVar(&o.RedisAddr, "redis", "", "external Redis host:port (default: a throwaway redis-server for the run; the shared "+bench.SharedRedisAddr+" if it cannot start)")
	fs.StringVar(&o.PostgresURL, "postgres", "", "external PostgreSQL URL (default: a throwaway PostgreSQL for the run; the shared "+bench.SharedPostgresURL+" if it cannot start)")
	fs.StringVar(&o.CoordinatorBin, "coordinator-bin", "", "prebuilt coordinator binary (default: build ./cmd/coordinator)")
	fs.DurationVar(&o.Profile, "profile", 0, "take a coordinator CPU profile this long during every closed loop, and heap profiles at P6a-coord's two steps (0: none)")
	fs.StringVar(&o.AssignorBenchtime, "assignor-benchtime", "1s", "go test -benchtime of the assignor benchmarks")
	cpuProfile := fs.String("cpuprofile", "", "write the load generator's own CPU profile to this file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	// The load generator allocates per request; collecting less often
	// leaves more CPU to the coordinator it shares the machine with.
	debug.SetGCPercent(400)
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	o.Scenarios = strings.Split(*scenarios, ",")
	o.Releases = strings.Split(*releases, ",")
	var err error
	if o.ManyReferences, err = bench.ParseSizes(*refs); err != nil {
		return err
	}
	switch sizes, err := bench.ParseSizes(*clusterSize); {
	case err != nil:
		return err
	case len(sizes) != 1:
		return fmt.Errorf("-cluster-size %q: want one size", *clusterSize)
	default:
		o.ClusterSize = sizes[0]
	}
	if *storeList != "" {
		o.StoreList = strings.Split(*storeList, ",")
	}
	report, err := bench.Run(ctx, o, "coord-bench "+strings.Join(args, " "))
	if report != nil {
		fmt.Fprintln(stdout)
		report.PrintTables(stdout)
	}
	return err
}
