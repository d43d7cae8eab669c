package sql

import (
	"context"
	"crypto/rand"
	"errors"
	"io"
	"math/big"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/storetest"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/testredis"
	"github.com/redis-stream-coordinator/coordinator/persistence"
)

// dsn is the test database.
const dsn = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// newStore returns a store on tables of its own, dropped at cleanup.
func newStore(t testing.TB) *Store {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	n, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	if err != nil {
		t.Fatal(err)
	}
	s := newStoreAt(t, dsn, "t"+n.Text(36)+"_")
	if _, err := s.Revision(ctx, group.Key{StreamPrefix: "p", ConsumerGroup: "g"}); err != nil && !errors.Is(err, persistence.ErrNotFound) {
		testredis.Unavailable(t, "postgres: %v", err)
	}
	// Cleanups run last-in first-out: the contract suite closes the store
	// before this runs, so the tables are dropped on a connection of their own.
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = s.Close()
		c, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Errorf("drop tables: %v", err)
			return
		}
		defer c.Close(ctx)
		if _, err := c.Exec(ctx, "DROP TABLE IF EXISTS "+s.meta+", "+s.members+", "+s.prefix+CoordinatorsTable+", "+s.prefix+OwnersTable+", "+s.prefix+CountsTable); err != nil {
			t.Errorf("drop tables: %v", err)
		}
	})
	return s
}

// newStoreAt opens a store on the tables of prefix at dsn (New does not fail
// on a database that is down).
func newStoreAt(t testing.TB, dsn, prefix string) *Store {
	s, err := New(t.Context(), Options{DSN: dsn, TablePrefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// exec runs a statement on a pooled connection (tests only).
func (s *Store) exec(ctx context.Context, sql string, args ...any) (int64, error) {
	var n int64
	err := s.with(ctx, func(c *pgx.Conn) error {
		tag, err := c.Exec(ctx, sql, args...)
		n = tag.RowsAffected()
		return err
	}, func(err error) error { return err })
	return n, err
}

func TestContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) persistence.Store { return newStore(t) }, storetest.Options{
		Corrupt: func(t *testing.T, s persistence.Store, key group.Key) {
			ss := s.(*Store)
			n, err := ss.exec(t.Context(), "UPDATE "+ss.meta+` SET metadata_json = '"not an object"' WHERE stream_prefix = $1 AND consumer_group = $2`,
				key.StreamPrefix, key.ConsumerGroup)
			if err != nil || n != 1 {
				t.Fatalf("corrupt: %d rows, %v", n, err)
			}
		},
	})
}

func TestRows(t *testing.T) {
	s := newStore(t)
	ctx := t.Context()
	key := storetest.Key(t)
	storetest.CreatePruned(t, s, key, time.Date(2024, 5, 6, 7, 8, 9, 123e6, time.UTC))
	var (
		rev, jsonRev, members int64
		updated, kind         string
	)
	err := s.with(ctx, func(c *pgx.Conn) error {
		return c.QueryRow(ctx, `SELECT store_revision, (metadata_json->>'storeRevision')::bigint, updated_at,
  pg_typeof(metadata_json)::text, (SELECT count(*) FROM `+s.members+` WHERE stream_prefix = $1 AND consumer_group = $2)
FROM `+s.meta+` WHERE stream_prefix = $1 AND consumer_group = $2`, key.StreamPrefix, key.ConsumerGroup).
			Scan(&rev, &jsonRev, &updated, &kind, &members)
	}, func(err error) error { return err })
	if err != nil {
		t.Fatal(err)
	}
	if rev != 2 || jsonRev != 2 || updated != "2024-05-06T07:08:09.123Z" || kind != "jsonb" || members != 1 {
		t.Errorf("row: revision %d, storeRevision %d, updated_at %s, %s, %d member rows", rev, jsonRev, updated, kind, members)
	}
}

func TestCorruptRows(t *testing.T) {
	s := newStore(t)
	ctx := t.Context()
	for name, set := range map[string]string{
		"schema 9":      "schema_version = 9",
		"layout 5":      "layout_version = 5",
		"bad timestamp": "updated_at = 'noon'",
	} {
		t.Run(name, func(t *testing.T) {
			key := storetest.Key(t)
			g := storetest.Group(key, "m-1")
			if _, err := s.Create(ctx, key, persistence.Encode(g)); err != nil {
				t.Fatal(err)
			}
			if _, err := s.exec(ctx, "UPDATE "+s.meta+" SET "+set+" WHERE stream_prefix = $1", key.StreamPrefix); err != nil {
				t.Fatal(err)
			}
			if _, _, err := s.Load(ctx, key); !errors.Is(err, persistence.ErrCorrupt) {
				t.Errorf("load: %v, want ErrCorrupt", err)
			}
		})
	}
}

func TestOptions(t *testing.T) {
	for name, o := range map[string]Options{
		"no DSN":         {},
		"bad prefix":     {DSN: dsn, TablePrefix: "x; DROP TABLE y"},
		"long prefix":    {DSN: dsn, TablePrefix: "abcdefghijabcdefghijabcdefghijk"},
		"negative conns": {DSN: dsn, MaxConns: -1},
		"unparsable DSN": {DSN: "postgres://%zz"},
	} {
		if _, err := New(t.Context(), o); err == nil || errors.Is(err, persistence.ErrUnavailable) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// A database that is down when the store opens makes every call
// ErrUnavailable; once it answers, the first call creates the tables and the
// store works.
func TestDatabaseDownAtOpen(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	var up atomic.Bool
	go func() { // refuses every connection until up, then forwards to PostgreSQL
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go forward(c, up.Load())
		}
	}()
	s := newStoreAt(t, strings.Replace(dsn, "127.0.0.1:5432", ln.Addr().String(), 1), "down"+strings.ToLower(rand.Text()[:10])+"_")
	key := group.Key{StreamPrefix: "down", ConsumerGroup: "at-open"}
	if _, err := s.Revision(t.Context(), key); !errors.Is(err, persistence.ErrUnavailable) {
		t.Fatalf("revision while down: %v, want ErrUnavailable", err)
	}
	up.Store(true)
	if _, err := s.Revision(t.Context(), key); !errors.Is(err, persistence.ErrNotFound) {
		testredis.Unavailable(t, "postgres: %v", err)
	}
	_ = s.Close()
	// The revision read above ran on the tables: drop them.
	direct := newStoreAt(t, dsn, s.meta[:len(s.meta)-len(MetadataTable)])
	defer direct.Close()
	if _, err := direct.exec(t.Context(), "DROP TABLE IF EXISTS "+direct.meta+", "+direct.members+", "+direct.prefix+CoordinatorsTable+", "+direct.prefix+OwnersTable+", "+direct.prefix+CountsTable); err != nil {
		t.Error(err)
	}
}

// forward closes c at once (a database that is down), or relays it to the
// test database until either side closes.
func forward(c net.Conn, up bool) {
	defer c.Close()
	if !up {
		return
	}
	db, err := net.Dial("tcp", "127.0.0.1:5432")
	if err != nil {
		return
	}
	defer db.Close()
	go func() { _, _ = io.Copy(db, c); _ = db.Close() }()
	_, _ = io.Copy(c, db)
}

func TestClusterContract(t *testing.T) {
	storetest.RunCluster(t, func(t *testing.T) (a, b storetest.ClusterStore) {
		s := newStore(t)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		other, err := New(ctx, Options{DSN: dsn, TablePrefix: s.prefix})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = other.Close() })
		return s, other
	}, storetest.ClusterOptions{Released: func(t *testing.T, s storetest.ClusterStore, key group.Key) {
		ss := s.(*Store)
		_, err := ss.pool.Exec(t.Context(), `INSERT INTO `+ss.prefix+OwnersTable+` VALUES ($1, $2, '', '', 1)`, key.StreamPrefix, key.ConsumerGroup)
		if err != nil {
			t.Fatal(err)
		}
	}})
}
