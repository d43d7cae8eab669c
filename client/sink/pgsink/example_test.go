package pgsink_test

import (
	"context"
	"log"
	"os"
	"os/signal"
	"syscall"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/redis-stream-coordinator/coordinator/client"
	"github.com/redis-stream-coordinator/coordinator/client/sink/pgsink"
)

// An Ordered consumer that inserts each order into PostgreSQL once: the
// fence row, the applied-id check and the insert commit together, and the
// entry is acknowledged after the commit.
func ExampleSink() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	coord := client.NewCoordinator("http://127.0.0.1:8080/coord/v1", client.WithBasicAuth("admin", "password"))
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	pool, err := pgxpool.New(ctx, "postgres://app@127.0.0.1:5432/shop")
	if err != nil {
		log.Fatal(err)
	}
	s, err := pgsink.New(pgsink.Config{DB: pool, Group: "billing"})
	if err != nil {
		log.Fatal(err)
	}
	if err := s.Setup(ctx); err != nil { // CREATE TABLE IF NOT EXISTS stream_fences
		log.Fatal(err)
	}
	c, err := client.NewConsumer(client.ConsumerConfig{
		Member:  client.MemberConfig{Coordinator: coord, StreamPrefix: "orders", Group: "billing"},
		Redis:   rdb,
		Ordered: true,
		Handler: s.Handler(func(ctx context.Context, m client.Message, tx pgx.Tx) error {
			_, err := tx.Exec(ctx, "INSERT INTO orders (id, customer, amount) VALUES ($1, $2, $3)",
				m.Values["order"], m.Key, m.Values["amount"])
			return err
		}),
	})
	if err != nil {
		log.Fatal(err)
	}
	if err := c.Run(ctx); err != nil {
		log.Fatal(err)
	}
}
