package redissink_test

import (
	"context"
	"log"
	"os"
	"os/signal"
	"syscall"

	"github.com/redis/go-redis/v9"

	"github.com/redis-stream-coordinator/coordinator/client"
	"github.com/redis-stream-coordinator/coordinator/client/sink/redissink"
)

// An Ordered consumer that keeps a running total per customer in Redis,
// each entry counted once: the script refuses a zombie's write, skips an
// entry applied already, and acknowledges the entry with its writes.
func ExampleSink() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	coord := client.NewCoordinator("http://127.0.0.1:8080/coord/v1", client.WithBasicAuth("admin", "password"))
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	s, err := redissink.New(redissink.Config{Redis: rdb, Group: "billing"})
	if err != nil {
		log.Fatal(err)
	}
	c, err := client.NewConsumer(client.ConsumerConfig{
		Member:  client.MemberConfig{Coordinator: coord, StreamPrefix: "orders", Group: "billing"},
		Redis:   rdb,
		Ordered: true, // the sink keeps one applied position per shard
		Handler: s.Handler(func(_ context.Context, m client.Message, w *redissink.Writes) error {
			amount, _ := m.Values["amount"].(string)
			// Keys in the shard's hash slot ({orders:3}:…), as Redis Cluster needs.
			w.Do("HINCRBYFLOAT", s.Key(m.Stream, "totals"), m.Key, amount)
			w.RPush(s.Key(m.Stream, "audit"), m.ID)
			return nil
		}),
	})
	if err != nil {
		log.Fatal(err)
	}
	if err := c.Run(ctx); err != nil {
		log.Fatal(err)
	}
}
