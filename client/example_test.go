package client_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"os/signal"
	"syscall"

	"github.com/redis/go-redis/v9"

	"github.com/redis-stream-coordinator/coordinator/client"
)

// A key's shard among 4 and 8 shards, as every client computes it.
func ExampleShardFor() {
	fmt.Println(client.ShardFor("order-123", 4), client.ShardFor("order-123", 8))
	// Output: 1 5
}

// A consumer of group "orders-consumer" of the sharded stream "orders"
// that handles entries on 8 workers until SIGINT or SIGTERM, then leaves
// the group.
func ExampleConsumer() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	coord := client.NewCoordinator("http://127.0.0.1:8080/coord/v1", client.WithBasicAuth("admin", "password"))
	c, err := client.NewConsumer(client.ConsumerConfig{
		Member:  client.MemberConfig{Coordinator: coord, StreamPrefix: "orders", Group: "orders-consumer"},
		Redis:   redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"}),
		Workers: 8,
		Handler: func(ctx context.Context, m client.Message) error {
			log.Printf("shard %d entry %s: %v", m.Shard, m.ID, m.Values)
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

// A producer writing one record keyed by its order id.
func ExampleProducer() {
	ctx := context.Background()
	coord := client.NewCoordinator("http://127.0.0.1:8080/coord/v1", client.WithBearerLogin("admin", "password"))
	p, err := client.NewProducer(client.ProducerConfig{
		Coordinator: coord, Redis: redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"}),
		StreamPrefix: "orders", Group: "orders-consumer", MaxLen: 100000, NoMkStream: true,
	})
	if err != nil {
		log.Fatal(err)
	}
	id, shard, err := p.Send(ctx, "order-123", map[string]any{"key": "order-123", "payload": `{"total":42}`})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("written", id, "to shard", shard)
}

// A bare member: the hooks say when to start and stop reading a shard.
func ExampleMember() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	m, err := client.NewMember(client.MemberConfig{
		Coordinator:  client.NewCoordinator("http://127.0.0.1:8080/coord/v1"),
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
