package pgsink

import (
	"context"
	"crypto/rand"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/redis-stream-coordinator/coordinator/client"
	"github.com/redis-stream-coordinator/coordinator/client/sink"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/testredis"
)

// dsn is the test database.
const dsn = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// newSink returns a sink on a pool of the test database whose fence table
// and effects table (returned) are the test's own, dropped at cleanup.
func newSink(t *testing.T) (*Sink, *pgxpool.Pool, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if err := pool.Ping(ctx); err != nil {
		testredis.Unavailable(t, "postgres: %v", err)
	}
	name := "t" + strings.ToLower(rand.Text()[:12])
	fences, effects := name+"_fences", name+"_effects"
	t.Cleanup(func() {
		_, _ = pool.Exec(context.Background(), "DROP TABLE IF EXISTS "+fences+", "+effects)
	})
	s, err := New(Config{DB: pool, Group: "g", Table: fences})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, "CREATE TABLE "+effects+" (entry text NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	return s, pool, effects
}

func msg(id string, token int64, from string) client.Message {
	return client.Message{Stream: "p:0", ID: id, Fence: client.Fence{Token: token, From: from}}
}

// The transaction's rules, as the Redis sink's: apply; skip an entry
// applied already; refuse a lower token (rolled back: nothing written);
// a higher token keeps the position unless From is below it (a replay).
func TestTransactionRules(t *testing.T) {
	s, pool, effects := newSink(t)
	ctx := context.Background()
	insert := func(ctx context.Context, m client.Message, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, "INSERT INTO "+effects+" (entry) VALUES ($1)", m.ID)
		return err
	}
	step := func(m client.Message, want sink.Outcome) {
		t.Helper()
		got, err := s.Apply(ctx, m, insert)
		if got != want {
			t.Fatalf("%s (token %d, from %s): outcome %d (%v), want %d", m.ID, m.Fence.Token, m.Fence.From, got, err, want)
		}
		if (want == sink.OutcomeRefused) != errors.Is(err, client.ErrFenced) {
			t.Fatalf("%s: error %v", m.ID, err)
		}
	}
	step(msg("1-0", 5, "0-0"), sink.OutcomeApplied)
	step(msg("2-0", 5, "0-0"), sink.OutcomeApplied)
	step(msg("2-0", 5, "0-0"), sink.OutcomeSkipped)
	step(msg("3-0", 4, "0-0"), sink.OutcomeRefused)
	step(msg("2-0", 6, "2-0"), sink.OutcomeSkipped)
	step(msg("3-0", 6, "2-0"), sink.OutcomeApplied)
	step(msg("3-0", 5, "0-0"), sink.OutcomeRefused)
	step(msg("1-0", 9, "0-0"), sink.OutcomeApplied) // a live reset back to the start: replayed
	step(msg("2-0", 9, "0-0"), sink.OutcomeApplied)
	step(msg("2-0", 9, "0-0"), sink.OutcomeSkipped)
	var n int
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM "+effects).Scan(&n); err != nil || n != 5 {
		t.Fatalf("%d effects (%v), want 5", n, err)
	}
	if tok, applied, err := s.Position(ctx, "p:0"); err != nil || tok != 9 || applied != "2-0" {
		t.Fatalf("fence %d %q %v", tok, applied, err)
	}
	if st := s.Stats(); st != (sink.Stats{Applied: 5, Skipped: 3, Refused: 2}) {
		t.Fatalf("stats %+v", st)
	}
	// A failing statement rolls everything back: the fence does not move.
	boom := func(context.Context, client.Message, pgx.Tx) error { return errors.New("boom") }
	if _, err := s.Apply(ctx, msg("3-0", 10, "2-0"), boom); err == nil || errors.Is(err, client.ErrFenced) {
		t.Fatalf("failing statements: %v", err)
	}
	if tok, applied, _ := s.Position(ctx, "p:0"); tok != 9 || applied != "2-0" {
		t.Fatalf("fence after a rollback %d %q", tok, applied)
	}
}

// A zombie's transaction that starts while the owner's holds the fence row
// waits for it, then finds the higher token and is refused.
func TestZombieWaitsForTheOwnerThenIsRefused(t *testing.T) {
	s, _, effects := newSink(t)
	ctx := context.Background()
	if _, err := s.Apply(ctx, msg("1-0", 3, "0-0"), func(context.Context, client.Message, pgx.Tx) error { return nil }); err != nil {
		t.Fatal(err)
	}
	inOwner, release := make(chan struct{}), make(chan struct{})
	ownerDone := make(chan error, 1)
	go func() {
		_, err := s.Apply(ctx, msg("2-0", 4, "1-0"), func(ctx context.Context, m client.Message, tx pgx.Tx) error {
			close(inOwner)
			<-release
			_, err := tx.Exec(ctx, "INSERT INTO "+effects+" (entry) VALUES ($1)", m.ID)
			return err
		})
		ownerDone <- err
	}()
	<-inOwner
	zombie := make(chan error, 1)
	go func() {
		_, err := s.Apply(ctx, msg("2-0", 3, "0-0"), func(ctx context.Context, m client.Message, tx pgx.Tx) error {
			_, err := tx.Exec(ctx, "INSERT INTO "+effects+" (entry) VALUES ('zombie')")
			return err
		})
		zombie <- err
	}()
	close(release)
	if err := <-ownerDone; err != nil {
		t.Fatal(err)
	}
	if err := <-zombie; !errors.Is(err, client.ErrFenced) {
		t.Fatalf("zombie's write: %v, want refused", err)
	}
}
