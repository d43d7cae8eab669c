package memory

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/persistence"
)

// Store is the in-memory persistence.Store and persistence.Cluster. The
// zero value is not usable; call New. It is safe for concurrent use.
//
// A Store is one coordinator's handle on the data: Handle returns another
// handle on the same data with fences of its own, so that several
// coordinators in one process (tests) share one store as they would share
// Redis.
type Store struct {
	*data
	fences persistence.Fences
}

// data is what the handles of one store share. Leases are measured on the
// process's monotonic clock.
type data struct {
	mu     sync.RWMutex
	groups map[group.Key]*entry
	// inPrefix counts the groups per stream prefix (Count); a prefix
	// without groups has no entry.
	inPrefix map[string]int
	coords   map[string]persistence.Peer // by id, with ExpiresAt
	owners   map[group.Key]persistence.Owner
}

// entry is one stored group. Its byte slices are owned by the store.
type entry struct {
	doc persistence.Document
	rev persistence.Revision
}

var (
	_ persistence.Store   = (*Store)(nil)
	_ persistence.Cluster = (*Store)(nil)
)

// New returns an empty store.
func New() *Store {
	return &Store{data: &data{groups: map[group.Key]*entry{}, inPrefix: map[string]int{},
		coords: map[string]persistence.Peer{}, owners: map[group.Key]persistence.Owner{}}}
}

// Handle returns another handle on s's data, holding no fences.
func (s *Store) Handle() *Store { return &Store{data: s.data} }

// Load returns a copy of the stored document.
func (s *Store) Load(_ context.Context, key group.Key) (persistence.Document, persistence.Revision, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	e, ok := s.groups[key]
	if !ok {
		return persistence.Document{}, 0, notFound(key)
	}
	if err := persistence.CheckVersions(e.doc.SchemaVersion, e.doc.LayoutVersion); err != nil {
		return persistence.Document{}, 0, fmt.Errorf("memory store: load %s: %w", key, err)
	}
	return copyDocument(e.doc), e.rev, nil
}

// Revision returns the stored revision.
func (s *Store) Revision(_ context.Context, key group.Key) (persistence.Revision, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	e, ok := s.groups[key]
	if !ok {
		return 0, notFound(key)
	}
	return e.rev, nil
}

// Exists reports whether key is stored.
func (s *Store) Exists(_ context.Context, key group.Key) (bool, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.groups[key] != nil, nil
}

// Create stores a copy of doc at revision 1.
func (s *Store) Create(_ context.Context, key group.Key, doc persistence.Document) (persistence.Revision, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.fenced("create", key); err != nil {
		return 0, err
	}
	if _, ok := s.groups[key]; ok {
		return 0, fmt.Errorf("memory store: create %s: %w", key, persistence.ErrAlreadyExists)
	}
	e := &entry{doc: copyDocument(doc), rev: 1}
	e.doc.Aggregate = persistence.WithStoreRevision(e.doc.Aggregate, e.rev)
	s.groups[key] = e
	s.inPrefix[key.StreamPrefix]++
	return e.rev, nil
}

// Commit applies a copy of m when the revision matches and the stored
// versions are supported (ErrCorrupt otherwise): the aggregate is
// replaced when m.Aggregate is not nil (and the layout becomes
// persistence.LayoutVersion), PutMembers are upserted, then DeleteMembers
// removed; the aggregate's storeRevision follows the new revision.
func (s *Store) Commit(_ context.Context, key group.Key, expected persistence.Revision, m persistence.Mutation) (persistence.Revision, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.fenced("commit", key); err != nil {
		return 0, err
	}
	e, err := s.current(key, expected)
	if err != nil {
		return 0, err
	}
	if err := persistence.CheckVersions(e.doc.SchemaVersion, e.doc.LayoutVersion); err != nil {
		return 0, fmt.Errorf("memory store: commit %s: %w", key, err)
	}
	e.rev++
	if m.Aggregate != nil {
		e.doc.Aggregate = slices.Clone(m.Aggregate)
		e.doc.LayoutVersion = persistence.LayoutVersion
	}
	e.doc.Aggregate = persistence.WithStoreRevision(e.doc.Aggregate, e.rev)
	if e.doc.Members == nil && len(m.PutMembers) > 0 {
		e.doc.Members = map[string][]byte{}
	}
	for id, b := range m.PutMembers {
		e.doc.Members[id] = slices.Clone(b)
	}
	for _, id := range m.DeleteMembers {
		delete(e.doc.Members, id)
	}
	e.doc.UpdatedAt = m.UpdatedAt
	return e.rev, nil
}

// Delete removes the group and its ownership record when the revision
// matches.
func (s *Store) Delete(_ context.Context, key group.Key, expected persistence.Revision) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.fenced("delete", key); err != nil {
		return err
	}
	if _, err := s.current(key, expected); err != nil {
		return err
	}
	delete(s.groups, key)
	delete(s.owners, key)
	s.fences.Drop(key)
	if s.inPrefix[key.StreamPrefix]--; s.inPrefix[key.StreamPrefix] == 0 {
		delete(s.inPrefix, key.StreamPrefix)
	}
	return nil
}

// List returns every stored key sorted by prefix then group.
func (s *Store) List(context.Context) ([]group.Key, error) {
	s.mu.RLock()
	keys := slices.Collect(maps.Keys(s.groups))
	s.mu.RUnlock()
	slices.SortFunc(keys, func(a, b group.Key) int {
		return cmp.Or(cmp.Compare(a.StreamPrefix, b.StreamPrefix), cmp.Compare(a.ConsumerGroup, b.ConsumerGroup))
	})
	return keys, nil
}

// Count reads the map's size and the prefix's counter: O(1), and exact
// (Create and Delete update both under the lock).
func (s *Store) Count(_ context.Context, streamPrefix string) (all, inPrefix int, err error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.groups), s.inPrefix[streamPrefix], nil
}

// Shared is false: the map lives in this process only.
func (s *Store) Shared() bool { return false }

// fenced checks the fence this handle holds for key against its ownership
// record. The caller holds s.mu.
func (s *Store) fenced(op string, key group.Key) error {
	f := s.fences.Of(key)
	if !f.Fenced() {
		return nil
	}
	if o := s.owners[key]; o.Coordinator != f.Coordinator || o.Token != f.Token || o.Epoch != f.Epoch {
		return persistence.NotOwner("memory store", op, key, f)
	}
	return nil
}

// Close does nothing; the data stays readable until the Store is dropped.
func (s *Store) Close() error { return nil }

// current returns the entry of key if its revision equals expected. The
// caller holds s.mu.
func (s *Store) current(key group.Key, expected persistence.Revision) (*entry, error) {
	e, ok := s.groups[key]
	if !ok {
		return nil, notFound(key)
	}
	if e.rev != expected {
		return nil, fmt.Errorf("memory store: %s at revision %d, expected %d: %w", key, e.rev, expected, persistence.ErrConflict)
	}
	return e, nil
}

func notFound(key group.Key) error {
	return fmt.Errorf("memory store: %s: %w", key, persistence.ErrNotFound)
}

// copyDocument deep-copies the byte slices and the member map of d.
func copyDocument(d persistence.Document) persistence.Document {
	c := d
	c.Aggregate = slices.Clone(d.Aggregate)
	if d.Members != nil {
		c.Members = make(map[string][]byte, len(d.Members))
		for id, b := range d.Members {
			c.Members[id] = slices.Clone(b)
		}
	}
	return c
}
