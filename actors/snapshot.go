package actors

import (
	"sync/atomic"

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
}

// snapshotCell is what a group actor shares with the readers of its group
// (System.committed). Only the actor writes it.
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

// current returns the published snapshot if it is the current version.
// Only the group's owner writes the group, so its committed state needs no
// revalidation against the store.
func (c *snapshotCell) current() *snapshot {
	v := c.version.Load()
	s := c.cur.Load()
	if s == nil || s.version != v {
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

// snapshot answers a reader that found no current snapshot: the snapshot
// is published (built if the published one is out of date) and its group
// returned.
func (a *groupActor) snapshot() (*group.Group, error) { return a.publish().g, nil }

// publish makes the current committed state the published snapshot,
// cloning committed when the published one is out of date. It does
// nothing while the group fails closed.
func (a *groupActor) publish() *snapshot {
	if a.core.Failed() != nil {
		return nil
	}
	v := a.cell.version.Load()
	if s := a.cell.cur.Load(); s != nil && s.version == v {
		return s
	}
	s := &snapshot{g: a.core.Committed().Clone(), version: v}
	a.cell.cur.Store(s)
	return s
}

// withdrawIfFailed drops the published snapshot while the group fails
// closed, so that readers get the load error from the actor.
func (a *groupActor) withdrawIfFailed() {
	if a.core.Failed() != nil && a.cell.cur.Load() != nil {
		a.cell.cur.Store(nil)
	}
}
