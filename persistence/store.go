package persistence

import (
	"context"
	"errors"
	"time"

	"github.com/redis-stream-coordinator/coordinator/group"
)

// Revision is a group's storeRevision: 1 after insert, +1 per commit.
type Revision int64

// Error classes every store returns (wrapped with %w).
var (
	// ErrNotFound: the group has no stored metadata.
	ErrNotFound = errors.New("group metadata not found")
	// ErrAlreadyExists: Create found an existing group.
	ErrAlreadyExists = errors.New("group metadata already exists")
	// ErrConflict: the expected revision did not match; nothing was written.
	ErrConflict = errors.New("store revision conflict")
	// ErrUnavailable: the backend is down or the breaker is open; nothing was written.
	ErrUnavailable = errors.New("metadata store unavailable")
	// ErrCorrupt: stored data cannot be decoded or has an unknown schema or
	// layout version. The group fails closed: nothing is rebuilt or overwritten.
	ErrCorrupt = errors.New("group metadata corrupt")
	// ErrLockTimeout: the state mutex could not be acquired in time.
	ErrLockTimeout = errors.New("coordinator state mutex unavailable")
)

// Any other error from Commit is "unknown": the write may or may not have
// happened, so callers reload and compare revisions before answering.

// Document is one group's stored form: the aggregate JSON (docs/protocol.md §8.5, without
// member records and targets when Members is used) and one JSON document per
// member (the member record plus its target). Stores keep the JSON, not
// necessarily its bytes: the SQL store normalises what it stores.
type Document struct {
	Aggregate     []byte
	Members       map[string][]byte
	SchemaVersion int
	LayoutVersion int
	UpdatedAt     time.Time
}

// Mutation is the delta one commit writes. Member puts are applied before
// deletes, so an id in both ends up deleted. A non-nil Aggregate is in
// layout LayoutVersion: the store records that layout with it.
type Mutation struct {
	Aggregate     []byte            // nil: unchanged
	PutMembers    map[string][]byte // member id → document
	DeleteMembers []string
	UpdatedAt     time.Time
}

// Store keeps group metadata with compare-and-set on the revision.
type Store interface {
	// Load returns the whole document and its revision, ErrNotFound or
	// ErrCorrupt (also for an unsupported schema or layout version).
	Load(ctx context.Context, key group.Key) (Document, Revision, error)
	// Revision returns the current revision cheaply (ErrNotFound if absent).
	Revision(ctx context.Context, key group.Key) (Revision, error)
	// Exists reports whether key's group is stored, in one read that
	// decodes nothing: a stored group that Load would find corrupt exists.
	Exists(ctx context.Context, key group.Key) (bool, error)
	// Create inserts a new group at revision 1, or returns ErrAlreadyExists.
	Create(ctx context.Context, key group.Key, doc Document) (Revision, error)
	// Commit applies m if the stored revision equals expected and returns the
	// new revision (expected+1); ErrConflict if it differs, ErrNotFound if the
	// group is gone, ErrCorrupt if the stored group is unreadable (unknown
	// versions, missing revision or aggregate): a corrupt group is never
	// overwritten. It also rewrites the aggregate's storeRevision.
	Commit(ctx context.Context, key group.Key, expected Revision, m Mutation) (Revision, error)
	// Delete removes the group if its revision equals expected (ErrConflict
	// otherwise, ErrNotFound if absent), member documents included, and
	// with it the group's ownership record (Cluster), if any.
	Delete(ctx context.Context, key group.Key, expected Revision) error
	// List returns every stored group key, sorted by prefix then group.
	List(ctx context.Context) ([]group.Key, error)
	// Count returns how many groups are stored in all and how many of them
	// have streamPrefix, without reading the groups: from a count the
	// store keeps (memory, Redis) or an index scan (SQL). A Create that
	// runs at the same time may or may not be counted, so a cap checked
	// with Count before a Create is exceeded by at most the number of
	// concurrent creators.
	Count(ctx context.Context, streamPrefix string) (all, inPrefix int, err error)
	// Shared reports whether other coordinator processes may write the same
	// data (Redis, SQL), so cached state must be revalidated.
	Shared() bool
	Close() error
}

// Locker is the per-group state mutex (docs/protocol.md §8.2). Lock blocks until the mutex is
// held, ctx ends, or the acquire timeout passes (ErrLockTimeout).
type Locker interface {
	Lock(ctx context.Context, key group.Key) (unlock func(), err error)
}

// NoLocker is the Locker for stores that need no mutex (memory, SQL).
type NoLocker struct{}

// Lock returns immediately.
func (NoLocker) Lock(context.Context, group.Key) (func(), error) { return func() {}, nil }
