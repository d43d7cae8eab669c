// Command sample-producer writes keyed records to a sharded stream through
// the coordinator's producer routing: record i has key "key-<i mod keys>"
// and the per-key sequence number seq, in the fields key, seq and payload
// (JSON of both).
//
//	go run ./cmd/sample-producer -stream demo -group demo-workers -rate 200
//
// Every flag has an environment variable (shown in -help); flags win.
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
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-stream-coordinator/coordinator/client"
	"github.com/redis-stream-coordinator/coordinator/contract"
)

func main() {
	coordURL := flag.String("coordinator", env("COORDINATOR_URL", "http://127.0.0.1:8080"+contract.BasePath), "coordinator base URL ($COORDINATOR_URL)")
	user := flag.String("user", env("COORDINATOR_USER", "admin"), "user with the READ role ($COORDINATOR_USER)")
	password := flag.String("password", env("COORDINATOR_PASSWORD", "password"), "its password ($COORDINATOR_PASSWORD)")
	redisAddrs := flag.String("redis", env("REDIS_ADDR", "127.0.0.1:6379"), "Redis host:port, or a Redis Cluster's nodes comma-separated ($REDIS_ADDR)")
	redisCluster := flag.Bool("redis-cluster", env("REDIS_CLUSTER", "") == "true", "-redis is a Redis Cluster even when it names one node ($REDIS_CLUSTER=true)")
	stream := flag.String("stream", env("STREAM_PREFIX", "demo"), "stream prefix ($STREAM_PREFIX)")
	group := flag.String("group", env("CONSUMER_GROUP", "demo-workers"), "consumer group whose routing is used ($CONSUMER_GROUP)")
	rate := flag.Float64("rate", envFloat("RATE", 100), "records per second, 0 = as fast as possible ($RATE)")
	count := flag.Int("count", int(envFloat("COUNT", 0)), "records to write, 0 = until stopped ($COUNT)")
	keys := flag.Int("keys", int(envFloat("KEYS", 100)), "distinct keys ($KEYS)")
	refresh := flag.Duration("refresh", 5*time.Second, "routing refresh interval")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	producer, err := client.NewProducer(client.ProducerConfig{
		Coordinator:  client.NewCoordinator(*coordURL, client.WithBearerLogin(*user, *password)),
		Redis:        redis.NewUniversalClient(&redis.UniversalOptions{Addrs: strings.Split(*redisAddrs, ","), IsClusterMode: *redisCluster}),
		StreamPrefix: *stream, Group: *group,
		MaxLen: 1_000_000, NoMkStream: true, RefreshInterval: *refresh,
	})
	if err != nil {
		fatal(err)
	}

	var tick <-chan time.Time
	if *rate > 0 {
		t := time.NewTicker(time.Duration(float64(time.Second) / *rate))
		defer t.Stop()
		tick = t.C
	}
	seqs := make([]int, *keys)
	start, sent := time.Now(), 0
	for *count == 0 || sent < *count {
		if tick != nil {
			select {
			case <-ctx.Done():
			case <-tick:
			}
		}
		if ctx.Err() != nil {
			break
		}
		k := sent % *keys
		key := "key-" + strconv.Itoa(k)
		payload, _ := json.Marshal(map[string]any{"key": key, "seq": seqs[k]})
		values := map[string]any{"key": key, "seq": seqs[k], "payload": payload}
		if _, _, err := producer.Send(ctx, key, values); err != nil {
			if ctx.Err() != nil {
				break
			}
			slog.Warn("send failed; retrying", "key", key, "err", err)
			time.Sleep(200 * time.Millisecond)
			continue
		}
		seqs[k]++
		sent++
		if sent%10000 == 0 {
			slog.Info("progress", "sent", sent)
		}
	}
	el := time.Since(start)
	slog.Info("done", "sent", sent, "seconds", el.Seconds(), "perSecond", float64(sent)/el.Seconds())
}

func env(name, def string) string {
	if v, ok := os.LookupEnv(name); ok {
		return v
	}
	return def
}

func envFloat(name string, def float64) float64 {
	if v, err := strconv.ParseFloat(os.Getenv(name), 64); err == nil {
		return v
	}
	return def
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "sample-producer:", err)
	os.Exit(1)
}
