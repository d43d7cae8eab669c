package actors

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	"github.com/redis-stream-coordinator/coordinator/actors/core"
	"github.com/redis-stream-coordinator/coordinator/cluster"
	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/persistence"
)

// The group actor's I/O with the store and the cluster: ownership, loads,
// the writes the core asks for, the state mutex.

// ready retries the load of a group that failed closed and returns its
// error while it still fails. With Options.Ownership, a group is loaded
// only once this process owns it (own).
func (a *groupActor) ready() error {
	if a.c.opts.Ownership != nil && !a.owned {
		return errNotAcquired
	}
	if a.core.Failed() == nil {
		return nil
	}
	return a.reload()
}

// errNotAcquired fails a group whose actor has not acquired it.
var errNotAcquired = fmt.Errorf("group not acquired: %w", persistence.ErrNotOwner)

// own makes this process the group's owner before msg is handled, when
// Options.Ownership is set, and refuses everything once the process
// stopped serving.
//
// It does not route: msg reached this actor because the HTTP edge decided
// (cluster.Node.Route) that it is served here, and own trusts that. What
// it does is fencing, which keeps one owner per group whatever the views
// of the placement: it answers only while the process is Serving (its
// registry lease cannot have ended), and acquires the group's ownership
// record in the store, whose epoch fences every write of the group
// (persistence.ErrNotOwner once another coordinator took it over).
//
// Unless it already owns the group, it reads whether the group is stored
// (a create skips the read) and acquires only a stored group, or one msg
// creates (a store call, then a load): a request for a group that is not
// stored gets errAbsent and writes nothing. A refusal is
// cluster.ErrNotServing, or a *cluster.NotOwnerError naming the live
// coordinator the store says owns the group.
func (a *groupActor) own(msg request) error {
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
	if _, create := msg.(*createMsg); !create {
		if stored, err := a.stored(); err != nil || !stored {
			return cmp.Or(err, errAbsent)
		}
	}
	ctx, cancel := a.storeCtx()
	defer cancel()
	if _, err := o.Acquire(ctx, a.key); err != nil {
		// A refusal wrote nothing; any other failure may have come after
		// the store took the group for this process.
		a.mayHold = a.mayHold || !errors.Is(err, persistence.ErrNotOwner)
		return err
	}
	a.owned, a.mayHold = true, true
	a.c.opts.Observer.GroupOwned(a.key, true)
	return a.reload()
}

// errAbsent is own's answer for a group that is not stored: the request
// is answered as for no group (answerAbsent), without acquiring it.
var errAbsent = errors.New("group not stored")

// stored reads whether the group is stored (Store.Exists).
func (a *groupActor) stored() (bool, error) {
	ctx, cancel := a.storeCtx()
	defer cancel()
	ok, err := a.c.opts.Store.Exists(ctx, a.key)
	if err != nil {
		return false, a.errorf("check", err)
	}
	return ok, nil
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

// notServing returns nil while this process may answer for the group
// without a write proving its ownership, else the error to answer with.
func (a *groupActor) notServing() error {
	if o := a.c.opts.Ownership; o != nil && !(a.owned && o.Serving()) {
		return cluster.ErrNotServing
	}
	return nil
}

// reload asks the core for a load of the stored group (core.Load), which
// drive performs; the core re-runs the pending batch on it. A failure
// fails the group closed: the cached state is kept but never used until a
// reload succeeds.
func (a *groupActor) reload() error {
	a.core.Step(core.Load{})
	a.drive()
	return a.core.Failed()
}

// load reads and decodes the stored group; a group that is not stored
// loads as group.New() at revision 0. It is stamped with the time after the
// read (leases restart then). A panic while decoding is turned into
// contract.ErrInternal: re-panicking in Started would restart the actor in
// a loop.
func (a *groupActor) load() (out core.Loaded) {
	defer func() {
		out.Now = a.c.opts.Clock()
		if r := recover(); r != nil {
			out.Err = fmt.Errorf("load group %s: %w: %v", a.key, outsideStore(contract.ErrInternal), r)
		}
		if out.Err != nil {
			a.c.opts.Logger.Warn("load group", "group", a.key.String(), "err", out.Err)
		}
	}()
	ctx, cancel := a.storeCtx()
	defer cancel()
	doc, rev, err := a.c.opts.Store.Load(ctx, a.key)
	if errors.Is(err, persistence.ErrNotFound) {
		out.Group = group.New()
		return out
	}
	if err != nil {
		out.Err = a.errorf("load", err)
		return out
	}
	if out.Group, err = persistence.Decode(doc, rev); err != nil {
		out.Err = a.errorf("load", err)
		return out
	}
	out.Rev, out.Legacy = rev, doc.LayoutVersion == persistence.LegacyLayoutVersion
	return out
}

// commit is the runtime's commit path, the one place that writes a
// group: it persists the records of a Write the core asked for, encoded
// for the store (package persistence), by the Write's kind. Its outcome
// goes back to the core (Advance), which applies the records to committed
// once stored.
func (a *groupActor) commit(w *core.Write) core.Written {
	ctx, cancel := a.storeCtx()
	defer cancel()
	var rev persistence.Revision
	var err error
	switch w.Kind {
	case core.Insert:
		rev, err = a.c.opts.Store.Create(ctx, a.key, persistence.Encode(w.Group))
	case core.Remove:
		err = a.c.opts.Store.Delete(ctx, a.key, w.Expected)
	case core.Rewrite:
		rev, err = a.c.opts.Store.Commit(ctx, a.key, w.Expected, persistence.Rewrite(w.Group, w.Now))
	default:
		rev, err = a.c.opts.Store.Commit(ctx, a.key, w.Expected, persistence.MutationOf(w.Group, w.Records, w.Now))
	}
	if err != nil {
		return core.Written{Err: a.errorf(w.Kind.String(), err)}
	}
	return core.Written{Rev: rev}
}

// lock takes the state mutex (a no-op for persistence.NoLocker). The
// Locker bounds the wait itself (persistence.ErrLockTimeout).
func (a *groupActor) lock() (func(), error) {
	unlock, err := a.c.opts.Locker.Lock(context.Background(), a.key)
	if err != nil {
		return nil, a.errorf("lock", err)
	}
	return unlock, nil
}

// storeCtx bounds one store call.
func (a *groupActor) storeCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), a.c.opts.StoreTimeout)
}

// errorf wraps a store error with the operation and the group.
func (a *groupActor) errorf(op string, err error) error {
	return fmt.Errorf("%s group %s: %w", op, a.key, err)
}

// outsideStore marks sentinel, a runtime failure outside any store call,
// for persistence.Classify (its outcome is known: persistence.Refused); its
// text is sentinel's.
func outsideStore(sentinel error) error { return outside{sentinel} }

type outside struct{ error }

func (o outside) Unwrap() []error { return []error{o.error, persistence.ErrOutsideStore} }
