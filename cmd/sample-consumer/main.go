// Command sample-consumer joins a consumer group of a sharded stream and
// handles the records of the shards the coordinator gives it. With -log it
// appends one JSON line per handled record ({"ev":"rec","shard","key",
// "seq","id","d" (deliveries),"t" (Unix ns)}) and per ownership change
// ({"ev":"start"|"stop","shard","t"}) to a file. SIGINT/SIGTERM leave the
// group gracefully.
//
//	go run ./cmd/sample-consumer -stream demo -group demo-workers -member c1
//
// Every flag has an environment variable (shown in -help); flags win.
// When the coordinator authenticates members (api.authenticate-member-api,
// as in make demo and deploy/), -user and -password (COORDINATOR_USER,
// COORDINATOR_PASSWORD) name a user with the MEMBER role: the consumer
// logs in (POST /auth/login) and sends the Bearer token, renewed before it
// expires and after a 401 (docs/client.md, "How a member gets a
// credential"). Without them its heartbeats are answered 401 and it reads
// nothing.
// -redis names one Redis server, or a Redis Cluster's nodes
// comma-separated (-redis-cluster: also when it names one node); the
// client is go-redis's UniversalClient, a cluster client for a cluster.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-stream-coordinator/coordinator/client"
	"github.com/redis-stream-coordinator/coordinator/contract"
)

func main() {
	coordURL := flag.String("coordinator", env("COORDINATOR_URL", "http://127.0.0.1:8080"+contract.BasePath), "coordinator base URL ($COORDINATOR_URL)")
	user := flag.String("user", env("COORDINATOR_USER", ""), "user with the MEMBER role, when the coordinator authenticates members ($COORDINATOR_USER)")
	password := flag.String("password", env("COORDINATOR_PASSWORD", ""), "its password ($COORDINATOR_PASSWORD)")
	redisAddrs := flag.String("redis", env("REDIS_ADDR", "127.0.0.1:6379"), "Redis host:port, or a Redis Cluster's nodes comma-separated ($REDIS_ADDR)")
	redisCluster := flag.Bool("redis-cluster", env("REDIS_CLUSTER", "") == "true", "-redis is a Redis Cluster even when it names one node ($REDIS_CLUSTER=true)")
	stream := flag.String("stream", env("STREAM_PREFIX", "demo"), "stream prefix ($STREAM_PREFIX)")
	group := flag.String("group", env("CONSUMER_GROUP", "demo-workers"), "consumer group ($CONSUMER_GROUP)")
	member := flag.String("member", env("MEMBER_ID", ""), "member id, unique per process (default host-pid-random) ($MEMBER_ID)")
	workers := flag.Int("workers", envInt("WORKERS", 4), "concurrent handlers ($WORKERS)")
	lease := flag.Duration("lease", envDuration("LEASE_TTL", 0), "override of the member lease TTL the coordinator answers; 0: the coordinator's ($LEASE_TTL)")
	claimIdle := flag.Duration("claim-min-idle", envDuration("CLAIM_MIN_IDLE", 5*time.Second), "reclaim pending entries idle this long ($CLAIM_MIN_IDLE)")
	work := flag.Duration("work", envDuration("WORK", 0), "simulated handling time per record ($WORK)")
	logPath := flag.String("log", env("RECORD_LOG", ""), "append a JSON line per record and ownership change to this file ($RECORD_LOG)")
	flag.Parse()

	var opts []client.CoordinatorOption
	if *user != "" {
		opts = append(opts, client.WithBearerLogin(*user, *password))
	}
	rec := newRecorder(*logPath)
	var handled atomic.Int64
	consumer, err := client.NewConsumer(client.ConsumerConfig{
		Member: client.MemberConfig{
			Coordinator:  client.NewCoordinator(*coordURL, opts...),
			StreamPrefix: *stream, Group: *group, MemberID: *member, LeaseTTL: *lease,
		},
		Redis:        redis.NewUniversalClient(&redis.UniversalOptions{Addrs: strings.Split(*redisAddrs, ","), IsClusterMode: *redisCluster}),
		Workers:      *workers,
		ClaimMinIdle: *claimIdle,
		Handler: func(ctx context.Context, m client.Message) error {
			time.Sleep(*work) // the real work goes here
			seq, _ := strconv.Atoi(fmt.Sprint(m.Values["seq"]))
			rec.write(map[string]any{"ev": "rec", "shard": m.Shard, "key": m.Values["key"], "seq": seq, "id": m.ID, "d": m.Deliveries})
			handled.Add(1)
			return nil
		},
		OnShardStart: func(s int) { rec.write(map[string]any{"ev": "start", "shard": s}) },
		OnShardStop:  func(s int) { rec.write(map[string]any{"ev": "stop", "shard": s}) },
	})
	if err != nil {
		fatal(err)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		for range time.Tick(5 * time.Second) {
			slog.Info("progress", "member", consumer.Member().ID(), "handled", handled.Load(), "shards", consumer.Member().Owned())
		}
	}()
	if err := consumer.Run(ctx); err != nil {
		fatal(err)
	}
	slog.Info("left the group", "member", consumer.Member().ID(), "handled", handled.Load())
}

// recorder appends JSON lines to a file, one write per line (nothing is
// buffered in the process, so a SIGKILL loses no line already written).
type recorder struct {
	mu sync.Mutex
	f  *os.File
}

func newRecorder(path string) *recorder {
	if path == "" {
		return &recorder{}
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600) // #nosec G304 -- the -record file the user named
	if err != nil {
		fatal(err)
	}
	return &recorder{f: f}
}

func (r *recorder) write(ev map[string]any) {
	if r.f == nil {
		return
	}
	ev["t"] = time.Now().UnixNano()
	line, _ := json.Marshal(ev)
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, err := r.f.Write(append(line, '\n')); err != nil {
		fatal(err)
	}
}

func env(name, def string) string {
	if v, ok := os.LookupEnv(name); ok {
		return v
	}
	return def
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return v
	}
	return def
}

func envDuration(name string, def time.Duration) time.Duration {
	if v, err := time.ParseDuration(os.Getenv(name)); err == nil {
		return v
	}
	return def
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "sample-consumer:", err)
	os.Exit(1)
}
