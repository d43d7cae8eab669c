package actors

import (
	"errors"
	"fmt"
	"time"

	"github.com/redis-stream-coordinator/coordinator/cluster"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/messages"
	"github.com/redis-stream-coordinator/coordinator/persistence"
)

// ready retries the load of a group that failed closed and returns its
// error while it still fails. With Options.Ownership, a group is loaded
// only once this process owns it (own).
func (a *groupActor) ready() error {
	if a.c.opts.Ownership != nil && !a.owned {
		return errNotAcquired
	}
	if a.loadErr == nil {
		return nil
	}
	return a.reload()
}

// errNotAcquired fails a group whose actor has not acquired it.
var errNotAcquired = fmt.Errorf("group not acquired: %w", cluster.ErrNotOwner)

// own makes this process the group's owner before msg is handled, when
// Options.Ownership is set: it acquires the group (a store call, then a
// load) unless it already owns it, and refuses everything once the
// process stopped serving. forwardedBy is the coordinator that forwarded
// msg (it disclaims the group). A refusal is a *cluster.NotOwnerError
// naming whom to ask, or cluster.ErrNotServing.
func (a *groupActor) own(forwardedBy string) error {
	o := a.c.opts.Ownership
	if o == nil {
		return nil
	}
	if !o.Serving() {
		a.disown()
		return cluster.ErrNotServing
	}
	if a.owned {
		return nil
	}
	ctx, cancel := a.storeCtx()
	defer cancel()
	if _, err := o.Acquire(ctx, a.key, forwardedBy); err != nil {
		return err
	}
	a.owned = true
	a.c.opts.Observer.GroupOwned(a.key, true)
	return a.reload()
}

// disown forgets that this process owns the group, without a store call
// (its ownership has ended or been taken): nothing is answered from
// the state held until the group is acquired and loaded again.
func (a *groupActor) disown() {
	if !a.owned {
		return
	}
	a.owned = false
	a.c.opts.Observer.GroupOwned(a.key, false)
	a.c.opts.Observer.GroupCommitted(a.key, group.New(), nil) // its gauges go with it
}

// reload replaces committed and working with the stored group and re-runs
// the pending batch on the new working copy. A failure fails the group
// closed: the cached state is kept but never used until a reload succeeds.
func (a *groupActor) reload() error {
	g, rev, legacy, err := a.load()
	if err != nil {
		a.loadErr = err
		a.c.opts.Logger.Warn("load group", "group", a.key.String(), "err", err)
		return err
	}
	a.loadErr = nil
	a.install(g, rev, legacy, a.c.opts.Clock())
	a.rerun()
	return nil
}

// load reads and decodes the stored group; a group that is not stored
// loads as group.New() at revision 0. A panic while decoding is turned into
// messages.ErrInternal: re-panicking in Started would restart the actor in
// a loop.
func (a *groupActor) load() (g *group.Group, rev persistence.Revision, legacy bool, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("load group %s: %w: %v", a.key, outsideStore(messages.ErrInternal), r)
		}
	}()
	ctx, cancel := a.storeCtx()
	defer cancel()
	doc, rev, err := a.c.opts.Store.Load(ctx, a.key)
	if errors.Is(err, persistence.ErrNotFound) {
		return group.New(), 0, false, nil
	}
	if err != nil {
		return nil, 0, false, a.errorf("load", err)
	}
	if g, err = persistence.Decode(doc, rev); err != nil {
		return nil, 0, false, a.errorf("load", err)
	}
	return g, rev, doc.LayoutVersion == persistence.LegacyLayoutVersion, nil
}

// install makes g, stored at rev, the committed state and resets working
// (batch.install, which starts every lease afresh at now), then tells the
// readers and the observer.
func (a *groupActor) install(g *group.Group, rev persistence.Revision, legacy bool, now time.Time) {
	a.batch.install(g, rev, legacy, now)
	a.committedChanged()
	a.c.opts.Observer.GroupCommitted(a.key, g, nil)
	a.reportStats()
}
