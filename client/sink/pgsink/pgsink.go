package pgsink

import (
	"context"
	"errors"
	"fmt"
	"math"
	"regexp"

	"github.com/jackc/pgx/v5"

	"github.com/redis-stream-coordinator/coordinator/client"
	"github.com/redis-stream-coordinator/coordinator/client/sink"
)

// Beginner begins transactions: a *pgxpool.Pool, or a *pgx.Conn used by
// one goroutine at a time.
type Beginner interface {
	Begin(ctx context.Context) (pgx.Tx, error)
}

// Config configures a Sink.
type Config struct {
	// DB is where the fences and the handler's statements go (required).
	DB Beginner
	// Group is the consumer group the entries are read by (required).
	Group string
	// Table is the fence table (default "stream_fences"): lower-case
	// letters, digits and '_'.
	Table string
}

var tableName = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

// Sink applies entries' statements to PostgreSQL under their shards'
// fences.
type Sink struct {
	cfg    Config
	table  string // quoted
	upsert string
	update string
	counts sink.Counters
}

// New checks cfg and returns a sink.
func New(cfg Config) (*Sink, error) {
	if cfg.DB == nil || cfg.Group == "" {
		return nil, errors.New("pgsink: Config needs DB and Group")
	}
	if cfg.Table == "" {
		cfg.Table = "stream_fences"
	}
	if !tableName.MatchString(cfg.Table) {
		return nil, fmt.Errorf("pgsink: table name %q: want lower-case letters, digits and '_'", cfg.Table)
	}
	t := pgx.Identifier{cfg.Table}.Sanitize()
	return &Sink{cfg: cfg, table: t,
		// The fence: a token not below the stored one takes the row; a
		// higher one moves the applied id back to the grant's From when
		// that is lower (a replay). No row back: refused.
		upsert: `INSERT INTO ` + t + ` AS f (stream, consumer_group, token, applied_ms, applied_seq) VALUES ($1, $2, $3, -1, -1)
ON CONFLICT (stream, consumer_group) DO UPDATE SET token = EXCLUDED.token,
  applied_ms = CASE WHEN f.token < EXCLUDED.token AND (f.applied_ms, f.applied_seq) > ($4::bigint, $5::bigint) THEN $4 ELSE f.applied_ms END,
  applied_seq = CASE WHEN f.token < EXCLUDED.token AND (f.applied_ms, f.applied_seq) > ($4::bigint, $5::bigint) THEN $5 ELSE f.applied_seq END
WHERE f.token <= EXCLUDED.token
RETURNING applied_ms, applied_seq`,
		update: `UPDATE ` + t + ` SET applied_ms = $3, applied_seq = $4 WHERE stream = $1 AND consumer_group = $2`,
	}, nil
}

// Setup creates the fence table when it does not exist.
func (s *Sink) Setup(ctx context.Context) error {
	tx, err := s.cfg.DB.Begin(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS `+s.table+` (
  stream text NOT NULL, consumer_group text NOT NULL, token bigint NOT NULL,
  applied_ms bigint NOT NULL, applied_seq bigint NOT NULL,
  PRIMARY KEY (stream, consumer_group))`); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// Stats returns the sink's counts: entries applied, skipped as applied
// already, and writes refused by a fence.
func (s *Sink) Stats() sink.Stats { return s.counts.Stats() }

// Statements runs an entry's statements in the sink's transaction; an
// error rolls it back and leaves the entry unapplied (to be run again).
type Statements func(ctx context.Context, msg client.Message, tx pgx.Tx) error

// Handler returns the consumer handler that applies each entry's
// statements under its shard's fence; the consumer must be Ordered and
// acknowledges the entry after the commit. A refused fence returns an
// error wrapping client.ErrFenced.
func (s *Sink) Handler(fn Statements) client.Handler {
	return func(ctx context.Context, msg client.Message) error {
		_, err := s.Apply(ctx, msg, fn)
		return err
	}
}

// Apply runs msg's transaction: the fence, the applied-id check, fn and
// the move of the applied id, then the commit.
func (s *Sink) Apply(ctx context.Context, msg client.Message, fn Statements) (sink.Outcome, error) {
	if err := sink.Check(&msg); err != nil {
		return sink.OutcomeRefused, err
	}
	id, err := idOf(msg.ID)
	if err != nil {
		return sink.OutcomeRefused, err
	}
	from, err := idOf(msg.Fence.From)
	if err != nil {
		return sink.OutcomeRefused, err
	}
	tx, err := s.cfg.DB.Begin(ctx)
	if err != nil {
		return sink.OutcomeRefused, fmt.Errorf("pgsink: %w", err)
	}
	defer func() { _ = tx.Rollback(ctx) }() // after a commit, a no-op
	var applied [2]int64
	err = tx.QueryRow(ctx, s.upsert, msg.Stream, s.cfg.Group, msg.Fence.Token, from[0], from[1]).Scan(&applied[0], &applied[1])
	if errors.Is(err, pgx.ErrNoRows) {
		var fence int64
		if err := tx.QueryRow(ctx, `SELECT token FROM `+s.table+` WHERE stream = $1 AND consumer_group = $2`, msg.Stream, s.cfg.Group).Scan(&fence); err != nil {
			return sink.OutcomeRefused, fmt.Errorf("pgsink: %w", err)
		}
		s.counts.Refused()
		return sink.OutcomeRefused, sink.Refused(&msg, fence)
	}
	if err != nil {
		return sink.OutcomeRefused, fmt.Errorf("pgsink: fence: %w", err)
	}
	if id[0] < applied[0] || (id[0] == applied[0] && id[1] <= applied[1]) {
		if err := tx.Commit(ctx); err != nil {
			return sink.OutcomeRefused, fmt.Errorf("pgsink: commit: %w", err)
		}
		s.counts.Skipped()
		return sink.OutcomeSkipped, nil
	}
	if err := fn(ctx, msg, tx); err != nil {
		return sink.OutcomeRefused, err
	}
	if _, err := tx.Exec(ctx, s.update, msg.Stream, s.cfg.Group, id[0], id[1]); err != nil {
		return sink.OutcomeRefused, fmt.Errorf("pgsink: applied id: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return sink.OutcomeRefused, fmt.Errorf("pgsink: commit: %w", err)
	}
	s.counts.Applied()
	return sink.OutcomeApplied, nil
}

// idOf returns an entry id as two bigints.
func idOf(s string) ([2]int64, error) {
	id, err := sink.ParseID(s)
	if err != nil {
		return [2]int64{}, err
	}
	if id.Ms > math.MaxInt64 || id.Seq > math.MaxInt64 {
		return [2]int64{}, fmt.Errorf("pgsink: entry id %s beyond bigint", s)
	}
	return [2]int64{int64(id.Ms), int64(id.Seq)}, nil
}

// Position returns the fence of the shard whose stream is stream: its
// token and applied entry id ("" before any entry, and without a row).
func (s *Sink) Position(ctx context.Context, stream string) (token int64, applied string, err error) {
	tx, err := s.cfg.DB.Begin(ctx)
	if err != nil {
		return 0, "", err
	}
	defer func() { _ = tx.Rollback(ctx) }()
	var ms, seq int64
	err = tx.QueryRow(ctx, `SELECT token, applied_ms, applied_seq FROM `+s.table+` WHERE stream = $1 AND consumer_group = $2`,
		stream, s.cfg.Group).Scan(&token, &ms, &seq)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return 0, "", nil
	case err != nil:
		return 0, "", err
	case ms < 0 || seq < 0:
		return token, "", nil
	}
	// #nosec G115 -- both are non-negative: checked above
	return token, sink.ID{Ms: uint64(ms), Seq: uint64(seq)}.String(), nil
}
