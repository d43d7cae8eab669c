package sql

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/persistence"
)

// Table names without prefix.
const (
	MetadataTable = "redis_stream_coordinator_metadata"
	MembersTable  = "redis_stream_coordinator_members"
	// CoordinatorsTable is the coordinator registry, OwnersTable the
	// groups' ownership records (persistence.Cluster).
	CoordinatorsTable = "redis_stream_coordinator_coordinators"
	OwnersTable       = "redis_stream_coordinator_owners"
	// CountsTable keeps the number of groups per stream prefix, and of
	// all groups under the empty prefix, updated by the statements that
	// insert and delete metadata rows (Count).
	CountsTable = "redis_stream_coordinator_counts"
)

// DefaultMaxConns is the pool size when Options.MaxConns is zero.
const DefaultMaxConns = 8

// Options configure a Store.
type Options struct {
	// DSN is a pgx connection string, e.g.
	// postgres://user@host:5432/db?sslmode=disable.
	DSN string
	// TablePrefix is prepended to both table names: lower-case letters,
	// digits and underscores, at most 30 characters (identifiers stay
	// within PostgreSQL's 63).
	TablePrefix string
	// MaxConns bounds the open connections; zero means DefaultMaxConns.
	MaxConns int
}

var tablePrefixPattern = regexp.MustCompile(`^[a-z0-9_]{0,30}$`)

func (o *Options) validate() error {
	switch {
	case o.DSN == "":
		return errors.New("sql store: DSN is required")
	case !tablePrefixPattern.MatchString(o.TablePrefix):
		return fmt.Errorf("sql store: TablePrefix %q must match %s", o.TablePrefix, tablePrefixPattern)
	case o.MaxConns < 0 || o.MaxConns > math.MaxInt32:
		return fmt.Errorf("sql store: MaxConns %d must be between 0 and %d", o.MaxConns, math.MaxInt32)
	}
	return nil
}

// errNoConn marks failures to obtain a connection: no statement was sent.
var errNoConn = errors.New("no database connection")

// Store is the PostgreSQL persistence.Store. It is safe for concurrent use.
type Store struct {
	pool    *pgxpool.Pool
	q       queries
	meta    string // metadata table name
	members string // members table name
	// tables is set once the tables are known to exist.
	tables atomic.Bool
	prefix string // Options.TablePrefix
	// fences are the ownerships this store acquired (persistence.Cluster).
	fences persistence.Fences
	// acquires and releases batch concurrent Acquire and Release calls
	// (batch.go).
	acquires batcher[persistence.Owner]
	releases batcher[struct{}]
}

var (
	_ persistence.Store   = (*Store)(nil)
	_ persistence.Cluster = (*Store)(nil)
)

// New connects, creates the tables if they are missing and returns the
// store. A database that cannot be reached does not fail New: the store is
// returned and every call is ErrUnavailable until the database answers, the
// first call that reaches it creating the tables. Any other failure to
// create them is an ErrUnavailable error.
func New(ctx context.Context, o Options) (*Store, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	cfg, err := pgxpool.ParseConfig(o.DSN)
	if err != nil {
		return nil, fmt.Errorf("sql store: DSN: %w", err)
	}
	cfg.MaxConns = int32(cmp.Or(o.MaxConns, DefaultMaxConns)) // #nosec G115 -- o.validate bounds MaxConns to 0..MaxInt32
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("sql store: pool: %w", err)
	}
	s := &Store{
		pool:    pool,
		meta:    o.TablePrefix + MetadataTable,
		members: o.TablePrefix + MembersTable,
		prefix:  o.TablePrefix,
	}
	s.acquires.send, s.releases.send = s.acquireBatch, s.releaseBatch
	s.q = newQueries(s.meta, s.members, o.TablePrefix+CoordinatorsTable, o.TablePrefix+OwnersTable, o.TablePrefix+CountsTable)
	err = s.with(ctx, func(*pgx.Conn) error { return nil }, func(err error) error { return err })
	if err != nil && !errors.Is(err, errNoConn) {
		pool.Close()
		return nil, err
	}
	return s, nil
}

// createTables runs the DDL on c under a transaction-scoped advisory lock,
// so coordinators starting together do not race on CREATE TABLE.
func (s *Store) createTables(ctx context.Context, c *pgx.Conn) error {
	err := pgx.BeginFunc(ctx, c, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext($1))`, s.meta); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, s.q.createTables)
		return err
	})
	if err != nil {
		return fmt.Errorf("sql store: create tables: %w: %w", persistence.ErrUnavailable, err)
	}
	s.tables.Store(true)
	return nil
}

// with runs f on a pooled connection, creating the tables first while they
// are not known to exist; failures of f (including acquiring the connection,
// which wrap errNoConn) are mapped by classify. The pool destroys a
// connection that is broken or mid-transaction on release.
func (s *Store) with(ctx context.Context, f func(*pgx.Conn) error, classify func(error) error) error {
	c, err := s.pool.Acquire(ctx)
	if err != nil {
		return classify(fmt.Errorf("%w: %w", errNoConn, err))
	}
	defer c.Release()
	if !s.tables.Load() {
		if err := s.createTables(ctx, c.Conn()); err != nil {
			return err
		}
	}
	if err := f(c.Conn()); err != nil {
		return classify(err)
	}
	return nil
}

// Load reads the metadata row and every member row in one statement.
func (s *Store) Load(ctx context.Context, key group.Key) (persistence.Document, persistence.Revision, error) {
	var (
		agg, updated, members string
		rev                   int64
		schema, layout        int
	)
	err := s.with(ctx, func(c *pgx.Conn) error {
		return c.QueryRow(ctx, s.q.load, key.StreamPrefix, key.ConsumerGroup).
			Scan(&agg, &rev, &schema, &layout, &updated, &members)
	}, readError("load", key))
	if err != nil {
		return persistence.Document{}, 0, err
	}
	doc, err := document(agg, schema, layout, updated, members)
	if err != nil {
		return persistence.Document{}, 0, fmt.Errorf("sql store: load %s: %w", key, err)
	}
	return doc, persistence.Revision(rev), nil
}

// document assembles a Document from the columns Load reads.
func document(agg string, schema, layout int, updated, members string) (persistence.Document, error) {
	if err := persistence.CheckVersions(schema, layout); err != nil {
		return persistence.Document{}, err
	}
	at, err := persistence.ParseTime(updated)
	if err != nil {
		return persistence.Document{}, err
	}
	var docs map[string]json.RawMessage
	if err := json.Unmarshal([]byte(members), &docs); err != nil {
		return persistence.Document{}, fmt.Errorf("member rows: %w: %w", persistence.ErrCorrupt, err)
	}
	doc := persistence.Document{
		Aggregate:     []byte(agg),
		Members:       make(map[string][]byte, len(docs)),
		SchemaVersion: schema,
		LayoutVersion: layout,
		UpdatedAt:     at,
	}
	for id, b := range docs {
		doc.Members[id] = b
	}
	return doc, nil
}

// Revision reads store_revision only.
func (s *Store) Revision(ctx context.Context, key group.Key) (persistence.Revision, error) {
	var rev int64
	err := s.with(ctx, func(c *pgx.Conn) error {
		return c.QueryRow(ctx, s.q.revision, key.StreamPrefix, key.ConsumerGroup).Scan(&rev)
	}, readError("revision", key))
	return persistence.Revision(rev), err
}

// Exists reads whether the metadata row exists.
func (s *Store) Exists(ctx context.Context, key group.Key) (bool, error) {
	var ok bool
	err := s.with(ctx, func(c *pgx.Conn) error {
		return c.QueryRow(ctx, s.q.exists, key.StreamPrefix, key.ConsumerGroup).Scan(&ok)
	}, readError("exists", key))
	return ok, err
}

// Create inserts the metadata row at revision 1 and the member rows, in
// one statement.
func (s *Store) Create(ctx context.Context, key group.Key, doc persistence.Document) (persistence.Revision, error) {
	ids, docs := memberArrays(doc.Members)
	var created int64
	err := s.with(ctx, func(c *pgx.Conn) error {
		return c.QueryRow(ctx, s.q.create, key.StreamPrefix, key.ConsumerGroup, string(doc.Aggregate),
			doc.SchemaVersion, doc.LayoutVersion, persistence.FormatTime(doc.UpdatedAt), ids, docs, s.fences.Of(key).String()).Scan(&created)
	}, writeError("create", key))
	if err != nil {
		return 0, err
	}
	if created == 0 {
		if err := s.checkFence(ctx, "create", key); err != nil {
			return 0, err
		}
		return 0, fmt.Errorf("sql store: create %s: %w", key, persistence.ErrAlreadyExists)
	}
	return 1, nil
}

// Commit updates the metadata row if store_revision equals expected and
// the versions are supported, and applies the member puts and deletes, in
// one statement.
func (s *Store) Commit(ctx context.Context, key group.Key, expected persistence.Revision, m persistence.Mutation) (persistence.Revision, error) {
	var agg *string
	if m.Aggregate != nil {
		a := string(m.Aggregate)
		agg = &a
	}
	ids, docs := memberArrays(m.PutMembers)
	deletes := m.DeleteMembers
	if deletes == nil {
		deletes = []string{}
	}
	var rev int64
	err := s.with(ctx, func(c *pgx.Conn) error {
		return c.QueryRow(ctx, s.q.commit, key.StreamPrefix, key.ConsumerGroup, int64(expected), agg,
			persistence.LayoutVersion, persistence.FormatTime(m.UpdatedAt), ids, docs, deletes, s.fences.Of(key).String()).Scan(&rev)
	}, writeError("commit", key))
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, s.refused(ctx, "commit", key, expected)
	}
	if err != nil {
		return 0, err
	}
	return persistence.Revision(rev), nil
}

// Delete removes the metadata row if store_revision equals expected, and
// its member rows and ownership row, in one statement.
func (s *Store) Delete(ctx context.Context, key group.Key, expected persistence.Revision) error {
	var deleted int64
	err := s.with(ctx, func(c *pgx.Conn) error {
		return c.QueryRow(ctx, s.q.delete, key.StreamPrefix, key.ConsumerGroup, int64(expected), s.fences.Of(key).String()).Scan(&deleted)
	}, writeError("delete", key))
	if err != nil {
		return err
	}
	if deleted == 0 {
		return s.refused(ctx, "delete", key, expected)
	}
	s.fences.Drop(key)
	return nil
}

// refused explains why a guarded write matched no row: this store no
// longer owns the group, the group is gone, its revision moved, or its
// stored versions are unsupported.
func (s *Store) refused(ctx context.Context, op string, key group.Key, expected persistence.Revision) error {
	if err := s.checkFence(ctx, op, key); err != nil {
		return err
	}
	var (
		rev            int64
		schema, layout int
	)
	err := s.with(ctx, func(c *pgx.Conn) error {
		return c.QueryRow(ctx, s.q.versions, key.StreamPrefix, key.ConsumerGroup).Scan(&rev, &schema, &layout)
	}, readError(op, key))
	switch {
	case err != nil:
		return err
	case persistence.Revision(rev) != expected:
		return fmt.Errorf("sql store: %s %s: at revision %d, expected %d: %w", op, key, rev, expected, persistence.ErrConflict)
	default:
		if err := persistence.CheckVersions(schema, layout); err != nil {
			return fmt.Errorf("sql store: %s %s: %w", op, key, err)
		}
		return fmt.Errorf("sql store: %s %s: row changed concurrently: %w", op, key, persistence.ErrConflict)
	}
}

// List returns every group key in byte order (COLLATE "C").
func (s *Store) List(ctx context.Context) ([]group.Key, error) {
	var keys []group.Key
	err := s.with(ctx, func(c *pgx.Conn) error {
		rows, err := c.Query(ctx, s.q.list)
		if err != nil {
			return err
		}
		keys, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (group.Key, error) {
			var k group.Key
			err := r.Scan(&k.StreamPrefix, &k.ConsumerGroup)
			return k, err
		})
		return err
	}, readError("list", group.Key{}))
	return keys, err
}

// Count reads two rows of the counts table (CountsTable), in one
// statement: O(1) in the groups. Create and Delete update the counts in
// the statement that inserts or deletes the metadata row, so the counts
// are exact for the groups written through this version. The first
// process to create the counts table fills it from the metadata rows;
// groups that a process of an older version (which keeps no counts)
// creates or deletes later are not counted.
func (s *Store) Count(ctx context.Context, streamPrefix string) (all, inPrefix int, err error) {
	err = s.with(ctx, func(c *pgx.Conn) error {
		return c.QueryRow(ctx, s.q.count, streamPrefix).Scan(&all, &inPrefix)
	}, readError("count", group.Key{StreamPrefix: streamPrefix}))
	return all, inPrefix, err
}

// Shared is true: other coordinator processes may write the same rows.
func (s *Store) Shared() bool { return true }

// Close closes the pool, waiting for connections in use to be released.
// Call it after the last use.
func (s *Store) Close() error {
	s.pool.Close()
	return nil
}

// memberArrays splits member documents into parallel id and JSON arrays,
// sorted by id.
func memberArrays(members map[string][]byte) (ids, docs []string) {
	ids = slices.Sorted(maps.Keys(members))
	docs = make([]string, len(ids))
	for i, id := range ids {
		docs[i] = string(members[id])
	}
	if ids == nil {
		ids = []string{}
	}
	return ids, docs
}

// readError maps a failed read: ErrNotFound for no row, ErrUnavailable
// otherwise (nothing can have been written).
func readError(op string, key group.Key) func(error) error {
	return func(err error) error {
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("sql store: %s %s: %w", op, key, persistence.ErrNotFound)
		}
		return fmt.Errorf("sql store: %s %s: %w: %w", op, key, persistence.ErrUnavailable, err)
	}
}

// writeError maps a failed write. pgx.ErrNoRows passes through unwrapped
// (the guard matched nothing; the caller asks why). ErrUnavailable when
// the statement cannot have taken effect: PostgreSQL rejected it (it
// rolled back), or it was never sent (no connection, or pgx says so);
// otherwise the outcome is unknown.
func writeError(op string, key group.Key) func(error) error {
	return func(err error) error {
		var pgErr *pgconn.PgError
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			return err
		case errors.As(err, &pgErr), errors.Is(err, errNoConn), pgconn.SafeToRetry(err):
			return fmt.Errorf("sql store: %s %s: %w: %w", op, key, persistence.ErrUnavailable, err)
		}
		return fmt.Errorf("sql store: %s %s: outcome unknown: %w", op, key, err)
	}
}
