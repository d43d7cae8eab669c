package sql

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/persistence"
)

// The coordinator registry and the groups' ownership records
// (persistence.Cluster). Leases are measured on PostgreSQL's clock
// (clock_timestamp()): no coordinator compares its own clock with another's.

// Register adds or renews self's entry unless a live entry has another token.
func (s *Store) Register(ctx context.Context, self persistence.Peer, ttl time.Duration) error {
	return s.registryRow(ctx, "register", persistence.ErrIdentityInUse, s.q.register, self.ID, self.Token, self.URL, ttl.Milliseconds())
}

// Renew extends self's live entry.
func (s *Store) Renew(ctx context.Context, self persistence.Peer, ttl time.Duration) error {
	return s.registryRow(ctx, "renew", persistence.ErrNotRegistered, s.q.renew, self.ID, self.Token, ttl.Milliseconds())
}

// registryRow runs a registry statement that returns one row when it took
// effect, and refused when it returned none.
func (s *Store) registryRow(ctx context.Context, op string, refused error, query string, args ...any) error {
	var one int
	err := s.with(ctx, func(c *pgx.Conn) error { return c.QueryRow(ctx, query, args...).Scan(&one) }, func(err error) error { return err })
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return fmt.Errorf("sql store: %s coordinator %v: %w", op, args[0], refused)
	case err != nil:
		return fmt.Errorf("sql store: %s coordinator %v: %w: %w", op, args[0], persistence.ErrUnavailable, err)
	}
	return nil
}

// Deregister removes self's entry.
func (s *Store) Deregister(ctx context.Context, self persistence.Peer) error {
	return s.with(ctx, func(c *pgx.Conn) error {
		_, err := c.Exec(ctx, s.q.deregister, self.ID, self.Token)
		return err
	}, readError("deregister", group.Key{}))
}

// Coordinators lists the live entries by id.
func (s *Store) Coordinators(ctx context.Context) ([]persistence.Peer, error) {
	var out []persistence.Peer
	err := s.with(ctx, func(c *pgx.Conn) error {
		rows, err := c.Query(ctx, s.q.coordinators)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (persistence.Peer, error) {
			var co persistence.Peer
			err := r.Scan(&co.ID, &co.Token, &co.URL, &co.ExpiresAt)
			return co, err
		})
		return err
	}, readError("list coordinators", group.Key{}))
	return out, err
}

// PruneOwners locks the ownership rows of groups that are not stored,
// then deletes those whose group is still absent and whose holder is not
// live, in one transaction. Under READ COMMITTED the delete reads the
// registry after the rows are locked: a coordinator that holds one of
// them acquired it, and so was registered, before the lock, and is seen
// live while it is.
func (s *Store) PruneOwners(ctx context.Context) (int, error) {
	var pruned int64
	err := s.with(ctx, func(c *pgx.Conn) error {
		return pgx.BeginFunc(ctx, c, func(tx pgx.Tx) error {
			rows, err := tx.Query(ctx, s.q.orphansLock)
			if err != nil {
				return err
			}
			var prefixes, groups []string
			var prefix, grp string
			if _, err := pgx.ForEachRow(rows, []any{&prefix, &grp}, func() error {
				prefixes, groups = append(prefixes, prefix), append(groups, grp)
				return nil
			}); err != nil || len(prefixes) == 0 {
				return err
			}
			tag, err := tx.Exec(ctx, s.q.orphansDelete, prefixes, groups)
			pruned = tag.RowsAffected()
			return err
		})
	}, readError("prune owners", group.Key{}))
	if err != nil {
		return 0, err
	}
	return int(pruned), nil
}

// Owners reads the records of keys in one statement.
func (s *Store) Owners(ctx context.Context, keys []group.Key) ([]persistence.Owner, error) {
	prefixes, groups := make([]string, len(keys)), make([]string, len(keys))
	for i, k := range keys {
		prefixes[i], groups[i] = k.StreamPrefix, k.ConsumerGroup
	}
	var out []persistence.Owner
	err := s.with(ctx, func(c *pgx.Conn) error {
		rows, err := c.Query(ctx, s.q.owners, prefixes, groups)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (persistence.Owner, error) {
			var o persistence.Owner
			err := r.Scan(&o.Coordinator, &o.Epoch)
			return o, err
		})
		return err
	}, readError("read owners", group.Key{}))
	return out, err
}

// checkFence returns ErrNotOwner when this store holds a fence for key
// that the ownership row no longer matches.
func (s *Store) checkFence(ctx context.Context, op string, key group.Key) error {
	f := s.fences.Of(key)
	if !f.Fenced() {
		return nil
	}
	var holds bool
	err := s.with(ctx, func(c *pgx.Conn) error {
		return c.QueryRow(ctx, s.q.fence, key.StreamPrefix, key.ConsumerGroup, f.String()).Scan(&holds)
	}, readError(op, key))
	if err != nil {
		return err
	}
	if !holds {
		return persistence.NotOwner("sql store", op, key, f)
	}
	return nil
}
