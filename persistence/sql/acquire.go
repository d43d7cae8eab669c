package sql

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/persistence"
)

// Acquire takes key unless a live other coordinator owns it, in one
// transaction with the acquires other callers make at the same time
// (batcher): each key's ownership row is inserted if missing and locked,
// then taken unless self or a live other holds it (acquireBatch).
func (s *Store) Acquire(ctx context.Context, key group.Key, self persistence.Peer) (persistence.Owner, error) {
	o, err := s.acquires.do(ctx, key, self)
	if err != nil {
		if _, owned := errors.AsType[*persistence.OwnedError](err); owned {
			return persistence.Owner{}, err
		}
		if errors.Is(err, persistence.ErrNotRegistered) {
			return persistence.Owner{}, fmt.Errorf("sql store: acquire %s: %w", key, err)
		}
		return persistence.Owner{}, fmt.Errorf("sql store: acquire %s: %w: %w", key, persistence.ErrUnavailable, err)
	}
	s.fences.Hold(key, o)
	return o, nil
}

// acquireBatch runs q.ownerInsert, q.ownerLock and q.ownerTake for keys
// as one batch of statements: one round trip, one (implicit) transaction,
// each statement seeing what the previous ones did and committed by others
// (the send of Store.acquires). A key is refused with *OwnedError when a
// live other holds its row, every key with ErrNotRegistered when self is
// not live.
func (s *Store) acquireBatch(ctx context.Context, self persistence.Peer, keys []group.Key) ([]persistence.Owner, []error, error) {
	prefixes, groups := keyArrays(keys)
	type row struct {
		holder, token *string
		epoch         *int64
		url           string
	}
	rows := make(map[group.Key]row, len(keys))
	err := s.with(ctx, func(c *pgx.Conn) error {
		b := &pgx.Batch{}
		b.Queue(s.q.ownerInsert, prefixes, groups, self.ID, self.Token)
		b.Queue(s.q.ownerLock, prefixes, groups, self.ID, self.Token)
		b.Queue(s.q.ownerTake, prefixes, groups, self.ID, self.Token)
		res := c.SendBatch(ctx, b)
		if _, err := res.Exec(); err != nil {
			_ = res.Close()
			return err
		}
		if _, err := res.Exec(); err != nil {
			_ = res.Close()
			return err
		}
		taken, err := res.Query()
		if err == nil {
			var k group.Key
			var r row
			_, err = pgx.ForEachRow(taken, []any{&k.StreamPrefix, &k.ConsumerGroup, &r.holder, &r.token, &r.epoch, &r.url}, func() error {
				rows[k] = r
				return nil
			})
		}
		return errors.Join(err, res.Close())
	}, func(err error) error { return err })
	if err != nil {
		return nil, nil, err
	}
	outs, errs := make([]persistence.Owner, len(keys)), make([]error, len(keys))
	for i, k := range keys {
		r, ok := rows[k]
		switch {
		case !ok || r.holder == nil || r.token == nil || r.epoch == nil:
			errs[i] = persistence.ErrNotRegistered
		case *r.holder == self.ID && *r.token == self.Token:
			outs[i] = persistence.Owner{Coordinator: self.ID, Token: self.Token, Epoch: *r.epoch}
		default:
			errs[i] = &persistence.OwnedError{Owner: persistence.Peer{ID: *r.holder, URL: r.url}}
		}
	}
	return outs, errs, nil
}
