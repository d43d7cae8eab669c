package sql

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/persistence"
)

// Release clears self's ownership of key, or deletes the row of a group
// that is not stored, in one statement (q.ownerRelease) with the releases
// other callers make at the same time (batcher).
func (s *Store) Release(ctx context.Context, key group.Key, self persistence.Peer) error {
	s.fences.Drop(key)
	if _, err := s.releases.do(ctx, key, self); err != nil {
		return readError("release", key)(err)
	}
	return nil
}

// releaseBatch runs q.ownerRelease for keys (the send of Store.releases).
func (s *Store) releaseBatch(ctx context.Context, self persistence.Peer, keys []group.Key) ([]struct{}, []error, error) {
	prefixes, groups := keyArrays(keys)
	err := s.with(ctx, func(c *pgx.Conn) error {
		_, err := c.Exec(ctx, s.q.ownerRelease, prefixes, groups, self.ID, self.Token)
		return err
	}, func(err error) error { return err })
	return make([]struct{}, len(keys)), make([]error, len(keys)), err
}
