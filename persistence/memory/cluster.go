package memory

import (
	"context"
	"maps"
	"slices"
	"time"

	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/persistence"
)

// The registry and ownership records (persistence.Cluster), with leases on
// this process's monotonic clock.

// Register adds or renews self's entry unless a live entry of its id has
// another token.
func (s *Store) Register(_ context.Context, self persistence.Peer, ttl time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	if cur, ok := s.coords[self.ID]; ok && cur.Token != self.Token && now.Before(cur.ExpiresAt) {
		return persistence.ErrIdentityInUse
	}
	self.ExpiresAt = now.Add(ttl)
	s.coords[self.ID] = self
	return nil
}

// Renew extends self's live entry.
func (s *Store) Renew(_ context.Context, self persistence.Peer, ttl time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	cur, ok := s.coords[self.ID]
	if !ok || cur.Token != self.Token || !now.Before(cur.ExpiresAt) {
		return persistence.ErrNotRegistered
	}
	cur.ExpiresAt = now.Add(ttl)
	s.coords[self.ID] = cur
	return nil
}

// Deregister removes self's entry.
func (s *Store) Deregister(_ context.Context, self persistence.Peer) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if cur, ok := s.coords[self.ID]; ok && cur.Token == self.Token {
		delete(s.coords, self.ID)
	}
	return nil
}

// Coordinators lists the live entries by id.
func (s *Store) Coordinators(context.Context) ([]persistence.Peer, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	now := time.Now()
	var out []persistence.Peer
	for _, id := range slices.Sorted(maps.Keys(s.coords)) {
		if c := s.coords[id]; now.Before(c.ExpiresAt) {
			out = append(out, c)
		}
	}
	return out, nil
}

// Acquire takes key unless a live other coordinator owns it.
func (s *Store) Acquire(_ context.Context, key group.Key, self persistence.Peer) (persistence.Owner, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.live(self.ID, self.Token) {
		return persistence.Owner{}, persistence.ErrNotRegistered
	}
	cur := s.owners[key]
	switch {
	case cur.Coordinator == self.ID && cur.Token == self.Token:
	case cur.Coordinator != "" && s.live(cur.Coordinator, cur.Token):
		return persistence.Owner{}, &persistence.OwnedError{Owner: s.coords[cur.Coordinator]}
	default:
		cur = persistence.Owner{Coordinator: self.ID, Token: self.Token, Epoch: cur.Epoch + 1}
		s.owners[key] = cur
	}
	s.fences.Hold(key, cur)
	return cur, nil
}

// Release clears self's ownership of key, keeping the epoch, or removes
// the record when the group is not stored.
func (s *Store) Release(_ context.Context, key group.Key, self persistence.Peer) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fences.Drop(key)
	cur, ok := s.owners[key]
	switch {
	case !ok || cur.Coordinator != self.ID || cur.Token != self.Token:
	case s.groups[key] == nil:
		delete(s.owners, key)
	default:
		s.owners[key] = persistence.Owner{Epoch: cur.Epoch}
	}
	return nil
}

// PruneOwners removes the records of groups not stored that no live
// coordinator holds, under the lock that every write takes.
func (s *Store) PruneOwners(context.Context) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for key, o := range s.owners {
		if s.groups[key] == nil && !s.live(o.Coordinator, o.Token) {
			delete(s.owners, key)
			n++
		}
	}
	return n, nil
}

// Owners returns the records of keys.
func (s *Store) Owners(_ context.Context, keys []group.Key) ([]persistence.Owner, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]persistence.Owner, len(keys))
	for i, k := range keys {
		out[i] = s.owners[k]
	}
	return out, nil
}

// live reports whether id's entry has token and has not ended. The caller
// holds s.mu.
func (s *Store) live(id, token string) bool {
	c, ok := s.coords[id]
	return ok && c.Token == token && time.Now().Before(c.ExpiresAt)
}
