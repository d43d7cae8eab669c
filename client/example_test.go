package client_test

import (
	"cmp"
	"context"
	"fmt"
	"log"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-stream-coordinator/coordinator/client"
)

// The examples talk to the coordinator of `go run ./cmd/coordinator` and
// the local Redis unless COORDINATOR_URL and REDIS_ADDR say otherwise
// (TestExamples runs them against a coordinator of its own).
func coordinatorURL() string {
	return cmp.Or(os.Getenv("COORDINATOR_URL"), "http://127.0.0.1:8080/coord/v1")
}

func redisAddr() string { return cmp.Or(os.Getenv("REDIS_ADDR"), "127.0.0.1:6379") }

// A key's shard among 4 and 8 shards, as every client computes it.
func ExampleShardFor() {
	fmt.Println(client.ShardFor("order-123", 4), client.ShardFor("order-123", 8))
	// Output: 1 5
}

// The whole round trip: create the group, publish ten keyed records in one
// pipeline, consume them in three lines and stop once they are handled
// (cancelling the context is a graceful shutdown: the consumer stops,
// drains and leaves the group).
func Example() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	coord := client.NewCoordinator(coordinatorURL(), client.WithBasicAuth("admin", "password"))
	rdb := redis.NewClient(&redis.Options{Addr: redisAddr()})
	if _, err := coord.CreateGroup(ctx, "orders", "orders-consumer", 4, "example"); err != nil && !client.IsErrorCode(err, client.CodeGroupAlreadyExists) {
		log.Fatal(err)
	}

	p, err := client.NewProducer(client.ProducerConfig{Coordinator: coord, Redis: rdb, StreamPrefix: "orders", Group: "orders-consumer"})
	if err != nil {
		log.Fatal(err)
	}
	var records []client.Record
	for i := range 10 {
		records = append(records, client.Record{Key: fmt.Sprintf("order-%d", i), Values: map[string]any{"total": 42 + i}})
	}
	for _, r := range p.PublishBatch(ctx, records) {
		if r.Err != nil {
			log.Fatal(r.Err)
		}
	}

	ctx, cancel := context.WithCancel(ctx)
	var handled atomic.Int64
	err = client.Consume(ctx, coord, rdb, "orders", "orders-consumer", func(ctx context.Context, m client.Message) error {
		if handled.Add(1) >= 10 {
			cancel()
		}
		return nil
	})
	fmt.Println("handled", handled.Load(), "records; Consume returned", err)
}

// A consumer with its own settings that handles entries on 8 workers
// until SIGINT or SIGTERM (here at most 2 s or 100 entries), then stops reading,
// lets the running handler calls finish while it keeps heartbeating, and
// leaves the group. Handlers get a context that is cancelled when the
// member's local lease is about to lapse.
func ExampleConsumer() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	var handled atomic.Int64
	c, err := client.NewConsumer(client.ConsumerConfig{
		Member: client.MemberConfig{
			Coordinator:  client.NewCoordinator(coordinatorURL(), client.WithBearerLogin("admin", "password")),
			StreamPrefix: "orders", Group: "orders-consumer", CreateGroup: true,
			Hooks: client.Hooks{OnLeft: func(s client.Status) { log.Printf("left the group: %s", s) }},
		},
		Redis:   redis.NewClient(&redis.Options{Addr: redisAddr()}),
		Workers: 8, // entries with the same key stay in order
		Handler: func(ctx context.Context, m client.Message) error {
			log.Printf("shard %d entry %s key %s delivery %d", m.Shard, m.ID, m.Key, m.Deliveries)
			if handled.Add(1) == 100 {
				cancel()
			}
			return nil
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	if err := c.Run(ctx); err != nil {
		log.Fatal(err)
	}
}

// A producer writing one record keyed by its order id (the key goes to the
// "key" field, which the consumer keeps in order).
func ExampleProducer() {
	ctx := context.Background()
	coord := client.NewCoordinator(coordinatorURL(), client.WithBearerLogin("admin", "password"))
	p, err := client.NewProducer(client.ProducerConfig{
		Coordinator: coord, Redis: redis.NewClient(&redis.Options{Addr: redisAddr()}),
		StreamPrefix: "orders", Group: "orders-consumer", MaxLen: 100000,
	})
	if err != nil {
		log.Fatal(err)
	}
	id, shard, err := p.Send(ctx, "order-123", map[string]any{"payload": `{"total":42}`})
	if err != nil {
		log.Fatal(err)
	}
	log.Println("written", id, "to shard", shard)
}

// A bare member: the hooks say when to start and stop reading a shard;
// MayRead says whether a read may start now. It leaves the group when ctx
// ends (here after a second).
func ExampleMember() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	m, err := client.NewMember(client.MemberConfig{
		Coordinator:  client.NewCoordinator(coordinatorURL()),
		StreamPrefix: "orders", Group: "orders-consumer",
		Hooks: client.Hooks{
			OnAssigned: func(shard int) { log.Printf("start reading orders:%d", shard) },
			OnRevoked:  func(shard int) { log.Printf("stop reading orders:%d", shard) },
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	if err := m.Run(ctx); err != nil {
		log.Fatal(err)
	}
}
