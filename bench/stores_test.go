package bench

import (
	"context"
	"io"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/redis-stream-coordinator/coordinator/internal/testkit/coordproc"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/eventually"
)

// TestStoresExternal: addresses given in Options are used as they are and
// marked external; no throwaway server starts.
func TestStoresExternal(t *testing.T) {
	r := &Runner{opts: Options{Scenarios: []string{ScenarioSteady, ScenarioStore}, Store: coordproc.StoreRedis,
		RedisAddr: "127.0.0.1:1", PostgresURL: "postgres://x@127.0.0.1:1/db", Log: io.Discard}, report: &Report{}}
	r.env = &r.report.Environment
	r.startStores(context.Background())
	defer r.stopStores()
	if r.redis.addr != "127.0.0.1:1" || r.redis.kind != StoreExternal || r.redis.stop != nil {
		t.Errorf("redis %+v", r.redis)
	}
	if r.postgres.addr != "postgres://x@127.0.0.1:1/db" || r.postgres.kind != StoreExternal || r.postgres.stop != nil {
		t.Errorf("postgres %+v", r.postgres)
	}
}

// TestStoresOwn: without addresses, a run that needs both stores starts a
// redis-server and a PostgreSQL of its own.
func TestStoresOwn(t *testing.T) {
	r := &Runner{opts: Options{Scenarios: []string{ScenarioSteady, ScenarioStore}, Store: coordproc.StoreRedis, Log: io.Discard},
		report: &Report{}, tmp: t.TempDir()}
	r.env = &r.report.Environment
	r.startStores(context.Background())
	defer r.stopStores()
	if r.redis.kind != StoreOwn || r.postgres.kind != StoreOwn {
		t.Fatalf("redis %+v, postgres %+v: want servers of the run's own", r.redis, r.postgres)
	}
	if r.redis.addr == SharedRedisAddr || r.postgres.addr == SharedPostgresURL {
		t.Errorf("own servers at the shared addresses: %s, %s", r.redis.addr, r.postgres.addr)
	}
	p, err := newPGProbe(context.Background(), r.postgres, "t_probe")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	before, err := p.Sample(ctx)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, r.postgres.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE TABLE t_probe.kv (k int PRIMARY KEY, v int)"); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "INSERT INTO t_probe.kv VALUES (1, 1), (2, 2)"); err != nil {
		t.Fatal(err)
	}
	conn.Close(ctx) // a backend reports its table counters when it ends
	eventually.True(t, "two inserted rows counted", func() bool {
		after, err := p.Sample(ctx)
		if err != nil {
			t.Fatal(err)
		}
		d := after.Sub(before)
		return d.ByCommand["insert:kv"] == 2 && d.Bytes > 0
	})
	if err := p.Cleanup(context.Background()); err != nil {
		t.Error(err)
	}
}
