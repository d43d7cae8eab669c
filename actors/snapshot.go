package actors

import (
	"sync/atomic"
	"time"

	"github.com/redis-stream-coordinator/coordinator/group"
)

// snapshot is one published committed state of a group. It is immutable
// and shared by every reader that takes it: g is a clone of the actor's
// committed copy (maps copied, member records shared) that nobody modifies.
type snapshot struct {
	g *group.Group
	// version is the cell's version g was cloned at: the snapshot is
	// current while the cell still has that version.
	version uint64
	// validated is when g was last confirmed to be what a shared store
	// holds (a load, a commit or a revision read); unused on a store that
	// no other process writes.
	validated time.Time
}

// snapshotCell is what a group actor shares with the readers of its group
// (Coordinator.committed). Only the actor writes it.
//
// version counts the changes of the actor's committed copy (commits,
// loads, reloads): it is bumped before the requests of a commit are
// answered, so a reader that starts after an answer sees the new version
// and never takes a snapshot older than that answer. cur is the published
// snapshot, nil once it is out of date: a group nobody reads holds no
// snapshot beyond the commit that outdated its last one.
type snapshotCell struct {
	version atomic.Uint64
	cur     atomic.Pointer[snapshot]
}

// current returns the published snapshot if it is the current version and,
// with a shared store, was validated less than staleness before now.
func (c *snapshotCell) current(now time.Time, shared bool, staleness time.Duration) *snapshot {
	v := c.version.Load()
	s := c.cur.Load()
	if s == nil || s.version != v || shared && now.Sub(s.validated) >= staleness {
		return nil
	}
	return s
}

// committedChanged is called after every change of committed, before any
// request it answers is answered: the published snapshot is out of date
// and dropped (O(1); the next reader has one built).
func (a *groupActor) committedChanged() {
	a.cell.version.Add(1)
	a.cell.cur.Store(nil)
}

// snapshot answers a reader that found no current snapshot: on a shared
// store committed is revalidated (a revision read, a reload if another
// process wrote) unless it was validated less than ReadStaleness ago; then
// the snapshot is published (built if the published one is out of date)
// and its group returned.
func (a *groupActor) snapshot() (*group.Group, error) {
	if a.shared() && a.c.opts.Clock().Sub(a.validated) >= a.c.opts.ReadStaleness {
		at := a.c.opts.Clock()
		if err := a.resync(); err != nil {
			return nil, err
		}
		a.validated = at
	}
	return a.publish().g, nil
}

// publish makes the current committed state the published snapshot: it
// clones committed when the published snapshot is out of date, and only
// restamps its validation time otherwise. It does nothing while the group
// fails closed.
func (a *groupActor) publish() *snapshot {
	if a.loadErr != nil {
		return nil
	}
	v := a.cell.version.Load()
	s := a.cell.cur.Load()
	switch {
	case s == nil || s.version != v:
		s = &snapshot{g: a.committed.Clone(), version: v, validated: a.validated}
	case s.validated.Before(a.validated):
		s = &snapshot{g: s.g, version: v, validated: a.validated}
	default:
		return s
	}
	a.cell.cur.Store(s)
	return s
}

// distrust forgets that committed was validated, after a failed store
// call or command: on a shared store the next read revalidates (and meets
// an outage as an error) instead of taking the published snapshot.
func (a *groupActor) distrust() {
	a.validated = time.Time{}
	a.cell.cur.Store(nil)
}

// withdrawIfFailed drops the published snapshot while the group fails
// closed, so that readers get the load error from the actor.
func (a *groupActor) withdrawIfFailed() {
	if a.loadErr != nil && a.cell.cur.Load() != nil {
		a.cell.cur.Store(nil)
	}
}
