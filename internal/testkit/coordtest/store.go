package coordtest

import (
	"context"
	"crypto/rand"
	"math/big"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/redis-stream-coordinator/coordinator/internal/testkit/testredis"
	"github.com/redis-stream-coordinator/coordinator/persistence"
	"github.com/redis-stream-coordinator/coordinator/persistence/memory"
	redisstore "github.com/redis-stream-coordinator/coordinator/persistence/redis"
	sqlstore "github.com/redis-stream-coordinator/coordinator/persistence/sql"
)

// Store is what a coordinator needs of its store: the groups and the
// cluster's registry and ownership records.
type Store interface {
	persistence.Store
	persistence.Cluster
}

// Backend is the data one test's coordinators share. Each Handle is a
// store of its own on that data, holding its own ownership fences, as one
// coordinator process's connection does.
type Backend struct {
	mu     sync.Mutex
	handle func() Store
}

// Handle returns a new handle on the backend's data.
func (b *Backend) Handle() Store {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.handle()
}

// Opened is the backend of one store the test opened itself: every
// Handle is s (a test of cmd/coordinator's wiring opens its store as the
// process does).
func Opened(s Store) *Backend { return &Backend{handle: func() Store { return s }} }

// Memory is a memory store's data, new and empty.
func Memory() *Backend {
	root := memory.New()
	first := true
	return &Backend{handle: func() Store {
		if first {
			first = false
			return root
		}
		return root.Handle()
	}}
}

// Redis is the shared test Redis (internal/testkit/testredis) under a key prefix
// no other test uses, deleted when t ends. A Redis that does not answer
// ends t (testredis.Unavailable).
func Redis(t testing.TB) *Backend {
	t.Helper()
	client := testredis.Shared(t)
	prefix := testredis.Prefix(t, client)
	return &Backend{handle: func() Store {
		s, err := redisstore.New(redisstore.Options{Client: client, KeyPrefix: prefix})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}}
}

// PostgresDSN is the test database.
const PostgresDSN = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// SQL is the test PostgreSQL (PostgresDSN) on tables no other test uses,
// dropped when t ends. A database that does not answer ends t
// (testredis.Unavailable).
func SQL(t testing.TB) *Backend {
	t.Helper()
	n, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	if err != nil {
		t.Fatal(err)
	}
	prefix := "ct" + n.Text(36) + "_"
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, PostgresDSN)
	if err != nil {
		testredis.Unavailable(t, "postgres: %v", err)
	}
	_ = conn.Close(ctx)
	t.Cleanup(func() { dropTables(t, prefix) })
	return &Backend{handle: func() Store {
		s, err := sqlstore.New(context.Background(), sqlstore.Options{DSN: PostgresDSN, TablePrefix: prefix})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	}}
}

// dropTables drops every table whose name begins with prefix. It runs
// after the stores' own cleanups closed them.
func dropTables(t testing.TB, prefix string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, PostgresDSN)
	if err != nil {
		t.Errorf("drop tables: %v", err)
		return
	}
	defer c.Close(ctx)
	rows, err := c.Query(ctx, "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() AND starts_with(tablename, $1)", prefix)
	if err != nil {
		t.Errorf("drop tables: %v", err)
		return
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Errorf("drop tables: %v", err)
		return
	}
	for _, name := range tables {
		if _, err := c.Exec(ctx, "DROP TABLE IF EXISTS "+pgx.Identifier{name}.Sanitize()); err != nil {
			t.Errorf("drop table %s: %v", name, err)
		}
	}
}
