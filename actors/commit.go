package actors

import (
	"context"
	"fmt"
	"time"

	"github.com/redis-stream-coordinator/coordinator/cluster"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/messages"
	"github.com/redis-stream-coordinator/coordinator/persistence"
)

// flush commits the pending batch and answers every entry (group commit,
// docs/architecture.md principle 5). The outcome decides the answers:
//
//   - stored (or nothing to store): the batch's records are applied to
//     committed and every entry gets the response computed for it; a
//     batch that stored nothing is answered only while this process still
//     serves (Options.Ownership), since no write proved its ownership;
//   - revision conflict: reload, re-run every entry in order, commit again,
//     at most CommitAttempts times, then heartbeats get status RETRY;
//   - store unavailable (or, with group commit off, a mutex timeout):
//     working reverts to committed and heartbeats get status RETRY;
//   - unknown outcome: the group is resynced (revisions compared, reloaded
//     if they differ), then as unavailable;
//   - deposed (the store refused the fence: another coordinator owns the
//     group): this process forgets the group; heartbeats get status RETRY;
//   - corrupt group on reload, or a panic: heartbeats get the error.
//
// Nobody is answered before the commit holding their change has returned.
func (a *groupActor) flush() {
	if len(a.entries) == 0 {
		return
	}
	start := time.Now()
	size := len(a.entries)
	a.c.opts.Observer.MailboxDepth(a.key, int(a.depth.n.Load()))
	var wrote bool
	var err error
	switch {
	case !a.c.opts.GroupCommit:
		wrote, err = critical(a, "flush", a.writeBatch)
	case a.needsWrite():
		wrote, err = guarded(a, "flush", a.writeBatch)
	}
	if err == nil && !wrote && !a.serving() {
		err = cluster.ErrNotServing
		a.revert()
	}
	a.c.opts.Observer.BatchFlushed(a.key, size, wrote, time.Since(start), err)
	if err == nil {
		a.applyCommitted(a.records)
	}
	a.answerBatch(err)
}

// applyCommitted applies the batch's records to committed (those that
// needed a write were just stored) and outdates the published snapshot
// before anyone is answered.
func (a *groupActor) applyCommitted(recs []group.Record) {
	for _, r := range recs {
		a.committed.Apply(r)
	}
	a.committedChanged()
	a.c.opts.Observer.GroupCommitted(a.key, a.committed, recs)
	a.reportStats()
}

// writeBatch stores the batch's records as one mutation and reports whether
// it wrote anything (a batch of lease renewals writes nothing: liveness
// lives in the owner's memory).
func (a *groupActor) writeBatch() (bool, error) {
	now := a.c.opts.Clock()
	m, ok := a.mutation(now)
	if !ok {
		return false, nil
	}
	ctx, cancel := a.storeCtx()
	defer cancel()
	rev, err := a.c.opts.Store.Commit(ctx, a.key, a.rev, m)
	if err != nil {
		return false, a.errorf("commit", err)
	}
	a.stored(rev)
	return true, nil
}

// create runs a create command in the critical section.
func (a *groupActor) create(m *messages.CreateGroup) (group.GroupView, error) {
	if m.StreamLevel {
		if err := a.checkPrefixFree(); err != nil {
			return group.GroupView{}, err
		}
	}
	if a.committed.Exists() {
		return group.GroupView{}, group.Errorf(group.CodeGroupAlreadyExists, "Group already exists")
	}
	g := group.New()
	res := g.Create(group.InstantOf(a.c.opts.Clock()), a.c.opts.Settings, a.key, m.Request)
	if res.Err != nil {
		return group.GroupView{}, res.Err
	}
	if err := a.checkStreamKeys(g.ShardCount, m.StreamLevel); err != nil {
		return group.GroupView{}, err
	}
	ctx, cancel := a.storeCtx()
	defer cancel()
	rev, err := a.c.opts.Store.Create(ctx, a.key, persistence.Encode(g))
	if err != nil {
		return group.GroupView{}, a.errorf("create", err)
	}
	a.install(g, rev, false, a.c.opts.Clock())
	if err := a.provisionCreated(); err != nil {
		return group.GroupView{}, err
	}
	return res.Answer, nil
}

// checkPrefixFree refuses a stream-level create when any stored group has
// the stream prefix. Stream-level creates of one prefix all run in the
// actor of group G = P, so they cannot race each other.
func (a *groupActor) checkPrefixFree() error {
	used, err := a.prefixInUse()
	if err != nil {
		return err
	}
	if used {
		return group.Errorf(group.CodeStreamPrefixAlreadyExists,
			"Stream prefix '%s' is already managed by coordinator metadata", a.key.StreamPrefix)
	}
	return nil
}

// prefixInUse reports whether any stored group has the actor's stream
// prefix.
func (a *groupActor) prefixInUse() (bool, error) {
	ctx, cancel := a.storeCtx()
	defer cancel()
	keys, err := a.c.opts.Store.List(ctx)
	if err != nil {
		return false, fmt.Errorf("list groups: %w", err)
	}
	for _, k := range keys {
		if k.StreamPrefix == a.key.StreamPrefix {
			return true, nil
		}
	}
	return false, nil
}

// delete runs a delete command in the critical section; it answers the
// view from before the delete.
func (a *groupActor) delete(m *messages.DeleteGroup) (group.GroupView, error) {
	if !a.committed.Exists() {
		return group.GroupView{}, groupNotFound()
	}
	res := a.working.Delete(group.InstantOf(a.c.opts.Clock()), a.c.opts.Settings, m.Request)
	if res.Err != nil {
		return group.GroupView{}, res.Err
	}
	ctx, cancel := a.storeCtx()
	defer cancel()
	if err := a.c.opts.Store.Delete(ctx, a.key, a.rev); err != nil {
		return group.GroupView{}, a.errorf("delete", err)
	}
	a.install(group.New(), 0, false, a.c.opts.Clock())
	return res.Answer, nil
}

// critical runs try in the group's critical section: under the state mutex
// (Options.Locker), then as guarded. Admin commands use it (their steps
// between commits, like provisioning, are serialised with any other
// process that takes the mutex), and so does every batch when group commit
// is off (the benchmark baseline).
func critical[T any](a *groupActor, op string, try func() (T, error)) (T, error) {
	var zero T
	unlock, err := a.lock()
	if err != nil {
		return zero, a.abort(err)
	}
	defer unlock()
	return guarded(a, op, try)
}

// guarded runs try, and again after each revision conflict (reload, and
// re-run of the pending batch) up to CommitAttempts times. Any failure
// reverts working to committed. The store's compare-and-set and the
// ownership fence guard the write: this process is the group's only
// writer, so a conflict is a safety net, not the normal path.
func guarded[T any](a *groupActor, op string, try func() (T, error)) (T, error) {
	var zero T
	if err := a.ready(); err != nil { // a flush just before may have failed the group closed
		return zero, err
	}
	for attempt := 1; ; attempt++ {
		v, err := try()
		if err == nil {
			return v, nil
		}
		if !isConflict(err) {
			return zero, a.abort(err)
		}
		a.c.opts.Observer.Conflict(a.key, op, attempt)
		if attempt >= a.c.opts.CommitAttempts {
			a.revert()
			return zero, fmt.Errorf("%s group %s: %w", op, a.key, messages.ErrStateConflict)
		}
		if err := a.reload(); err != nil {
			return zero, err
		}
	}
}

// abort reverts working to committed after err. An error of no known
// class may hide a completed write, so the group is reloaded before its
// next request, and the error is marked messages.ErrOutcomeUnknown. A
// store reporting the group corrupt fails it closed; one refusing the
// ownership fence deposes this process.
func (a *groupActor) abort(err error) error {
	switch persistence.Classify(err) {
	case persistence.Corrupt:
		a.loadErr = err
	case persistence.Deposed:
		a.disown()
	}
	if unknownOutcome(err) {
		// The write may have landed: the group is reloaded before the
		// next request is served (ready), not now, so that this answer
		// waits for one store call only.
		a.loadErr = err
		err = fmt.Errorf("%w: %w", messages.ErrOutcomeUnknown, err)
	}
	a.revert()
	return err
}

// isConflict reports errors that mean "our cached state is stale": a
// revision conflict, a group that vanished or appeared under us.
func isConflict(err error) bool { return persistence.Classify(err) == persistence.Stale }

// unknownOutcome reports errors after which a write may or may not have
// happened.
func unknownOutcome(err error) bool { return !persistence.Classify(err).KnownWrite() }

// outsideStore marks sentinel, a runtime failure outside any store call,
// for persistence.Classify (its outcome is known: persistence.Refused); its
// text is sentinel's.
func outsideStore(sentinel error) error { return outside{sentinel} }

type outside struct{ error }

func (o outside) Unwrap() []error { return []error{o.error, persistence.ErrOutsideStore} }

// lock takes the state mutex (a no-op for persistence.NoLocker). The
// Locker bounds the wait itself (persistence.ErrLockTimeout).
func (a *groupActor) lock() (func(), error) {
	unlock, err := a.c.opts.Locker.Lock(context.Background(), a.key)
	if err != nil {
		return nil, a.errorf("lock", err)
	}
	return unlock, nil
}
