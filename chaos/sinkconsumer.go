package chaos

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/redis-stream-coordinator/coordinator/client"
	"github.com/redis-stream-coordinator/coordinator/client/sink/pgsink"
	"github.com/redis-stream-coordinator/coordinator/client/sink/redissink"
)

// SinkConsumerEnv makes a process a consumer of the sink scenario
// (sinks.go) when set: its value is the JSON of the consumer's settings.
// The scenario starts its consumers as copies of its own executable (the
// test binary, or coord-chaos) with it set; their main functions call
// MaybeSinkConsumer first.
const SinkConsumerEnv = "COORD_CHAOS_SINK_CONSUMER"

// sinkProc is a sink consumer's settings.
type sinkProc struct {
	Base, RedisAddr, PostgresURL string
	Prefix, Group, MemberID      string
	// KeyPrefix starts the Redis sink's keys and the zombie counters;
	// FenceTable and EffectsTable are the PostgreSQL sink's tables.
	KeyPrefix, FenceTable, EffectsTable string
	Lease                               time.Duration
	Work                                time.Duration
}

// MaybeSinkConsumer runs a sink consumer and exits when SinkConsumerEnv is
// set; otherwise it returns at once.
func MaybeSinkConsumer() {
	v := os.Getenv(SinkConsumerEnv)
	if v == "" {
		return
	}
	var p sinkProc
	if err := json.Unmarshal([]byte(v), &p); err != nil {
		fmt.Fprintln(os.Stderr, "sink consumer:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := p.run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "sink consumer:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// stallKey is the Redis key that asks consumer member to stall its next
// handler call (the scenario sets it, then stops the process while the
// call stalls); stalledKey the one the consumer sets when it does.
func stallKey(keyPrefix, member string) string   { return keyPrefix + "stall:" + member }
func stalledKey(keyPrefix, member string) string { return keyPrefix + "stalled:" + member }

// zombieKey is the Redis counter of zombie writes of kind ("attempted" or
// "refused") to sink ("redis" or "pg").
func zombieKey(keyPrefix, kind, sink string) string {
	return keyPrefix + "zombie:" + kind + ":" + sink
}

// run is the consumer process: an Ordered client.Consumer whose handler
// works for p.Work (a stall it does not interrupt, as a GC pause or a
// blocking call would not; a second when the scenario asks, through
// stallKey, so that it can stop the process in a handler call), then
// writes the entry's effect to the
// PostgreSQL sink and to the Redis sink. Its sink calls do not honour the
// handler's cancellation: a handler call that was running when the
// process was stopped past its lease (more than the lease passed since it
// began) writes when the process runs again, a zombie's write, which the
// fences must refuse. It counts those writes in Redis.
func (p *sinkProc) run(ctx context.Context) error {
	silenceRedis()
	rdb := redis.NewClient(&redis.Options{Addr: p.RedisAddr})
	defer rdb.Close()
	pool, err := pgxpool.New(ctx, p.PostgresURL)
	if err != nil {
		return err
	}
	defer pool.Close()
	rs, err := redissink.New(redissink.Config{Redis: rdb, Group: p.Group, KeyPrefix: p.KeyPrefix})
	if err != nil {
		return err
	}
	ps, err := pgsink.New(pgsink.Config{DB: pool, Group: p.Group, Table: p.FenceTable})
	if err != nil {
		return err
	}
	insert := `INSERT INTO ` + pgx.Identifier{p.EffectsTable}.Sanitize() + ` (stream, entry, token, member) VALUES ($1, $2, $3, $4)`
	pgWrite := func(ctx context.Context, m client.Message, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, insert, m.Stream, m.ID, m.Fence.Token, p.MemberID)
		return err
	}
	redisWrite := func(_ context.Context, m client.Message, w *redissink.Writes) error {
		w.RPush(rs.Key(m.Stream, "applied"), m.ID+"|"+strconv.FormatInt(m.Fence.Token, 10)+"|"+p.MemberID)
		return nil
	}
	count := func(kind, sink string) {
		_ = rdb.Incr(context.Background(), zombieKey(p.KeyPrefix, kind, sink)).Err()
	}
	handler := func(ctx context.Context, m client.Message) error {
		start := time.Now()
		if rdb.GetDel(ctx, stallKey(p.KeyPrefix, p.MemberID)).Val() != "" {
			_ = rdb.Set(ctx, stalledKey(p.KeyPrefix, p.MemberID), m.Shard, 0).Err()
			// The scenario stops the process meanwhile: 3 s leave it time
			// to see the stall and send SIGSTOP on a loaded machine, and
			// once the process runs again the sleep has passed, so the
			// call writes at once.
			time.Sleep(3 * time.Second)
		}
		time.Sleep(p.Work)
		wctx := context.WithoutCancel(ctx)
		// Stopped past the lease since the call began: the shard's lease
		// lapsed meanwhile, so this write is a zombie's.
		zombie := time.Since(start) > p.Lease
		_, perr := ps.Apply(wctx, m, pgWrite)
		_, rerr := rs.Apply(wctx, m, redisWrite)
		if zombie {
			count("attempted", "pg")
			count("attempted", "redis")
			if errors.Is(perr, client.ErrFenced) {
				count("refused", "pg")
			}
			if errors.Is(rerr, client.ErrFenced) {
				count("refused", "redis")
			}
		}
		return errors.Join(perr, rerr)
	}
	c, err := client.NewConsumer(client.ConsumerConfig{
		Member: client.MemberConfig{
			Coordinator:  client.NewCoordinator(p.Base, client.WithHTTPClient(&http.Client{Timeout: time.Second})),
			StreamPrefix: p.Prefix, Group: p.Group, MemberID: p.MemberID, LeaveTimeout: 5 * time.Second,
			Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
		},
		Redis: rdb, Workers: 2, BatchSize: 20, Ordered: true, RetryBackoff: 20 * time.Millisecond, MaxDeliveries: 1 << 30,
		Handler: handler,
	})
	if err != nil {
		return err
	}
	return c.Run(ctx)
}
