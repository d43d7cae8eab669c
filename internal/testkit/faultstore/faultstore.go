// Package faultstore is the test kit's one fault-injecting store: a
// wrapper in front of any store (memory, Redis, SQL) through which a test
// holds, fails, delays or panics the group calls a coordinator makes, and
// counts them. In-process coordinators take it as their store
// (internal/testkit/coordtest: Options.Wrap = coordtest.NewFaults), and so
// do tests of the runtime below them that cannot import coordtest
// (package actors' own tests: coordtest imports actors) and of the
// store's neighbours (the circuit breaker).
//
// It imports nothing of the runtime above persistence.
package faultstore

import (
	"context"
	"sync"

	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/persistence"
)

// Wrapped is what the wrapper is put in front of: a group store that also
// keeps the cluster's registry and ownership records, as every store of
// the module does. The calls that are not intercepted (List, Count, the
// cluster's calls, Close) pass through.
type Wrapped interface {
	persistence.Store
	persistence.Cluster
}

// Call names a store call the wrapper intercepts.
type Call string

// The intercepted calls: a group's reads and writes.
const (
	CallLoad     Call = "load"
	CallRevision Call = "revision"
	CallExists   Call = "exists"
	CallCreate   Call = "create"
	CallCommit   Call = "commit"
	CallDelete   Call = "delete"
)

// Op is one intercepted call.
type Op struct {
	Call Call
	Key  group.Key
	// N numbers the calls of this kind through the wrapper, from 1.
	N int
	// Mutation is a Commit's mutation (zero for the other calls).
	Mutation persistence.Mutation
}

// Store wraps a store. Its zero fault passes every call through; a test
// sets one with Before, After or Hold, at any time (the coordinator may be
// running). The embedded Wrapped is the store behind it, for a test that
// reads or writes behind the coordinator's back (neither intercepted nor
// counted).
type Store struct {
	Wrapped
	mu        sync.Mutex
	before    func(ctx context.Context, op Op) error
	after     func(op Op, err error) error
	calls     map[Call]int
	committed []persistence.Mutation
}

// New wraps s with no fault set.
func New(s Wrapped) *Store { return &Store{Wrapped: s, calls: map[Call]int{}} }

// Before makes every later intercepted call first call fn, with the
// call's context; fn may block, sleep or panic (a panic of the caller: a
// group actor's panic, say). A non-nil error is the call's answer: the
// wrapped store is not called. nil removes fn.
func (f *Store) Before(fn func(ctx context.Context, op Op) error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.before = fn
}

// After makes every later intercepted call that reached the wrapped store
// call fn with that call's error (nil when it succeeded); what fn returns
// is the call's answer. A write that succeeded and is answered with an
// error is one whose outcome the caller cannot know. nil removes fn.
func (f *Store) After(fn func(op Op, err error) error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.after = fn
}

// Hold holds the next call of kind call until release is called; entered
// is closed once it is held. It replaces any Before function.
func (f *Store) Hold(call Call) (entered <-chan struct{}, release func()) {
	in, out := make(chan struct{}), make(chan struct{})
	var once sync.Once
	f.Before(func(_ context.Context, op Op) error {
		if op.Call != call {
			return nil
		}
		held := false
		once.Do(func() { held = true })
		if held {
			close(in)
			<-out
		}
		return nil
	})
	return in, sync.OnceFunc(func() { close(out) })
}

// Calls returns how many calls of the kinds calls were made through the
// wrapper, failed ones included.
func (f *Store) Calls(calls ...Call) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, c := range calls {
		n += f.calls[c]
	}
	return n
}

// Committed returns the mutations of the Commits that the wrapped store
// applied, in order (whatever After answered).
func (f *Store) Committed() []persistence.Mutation {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]persistence.Mutation(nil), f.committed...)
}

// do counts op, runs the Before function, call (the wrapped store's) and
// the After function, and returns the call's answer.
func (f *Store) do(ctx context.Context, op Op, call func() error) error {
	f.mu.Lock()
	f.calls[op.Call]++
	op.N = f.calls[op.Call]
	before, after := f.before, f.after
	f.mu.Unlock()
	if before != nil {
		if err := before(ctx, op); err != nil {
			return err
		}
	}
	err := call()
	if err == nil && op.Call == CallCommit {
		f.mu.Lock()
		f.committed = append(f.committed, op.Mutation)
		f.mu.Unlock()
	}
	if after != nil {
		return after(op, err)
	}
	return err
}

func (f *Store) Load(ctx context.Context, key group.Key) (persistence.Document, persistence.Revision, error) {
	var (
		doc persistence.Document
		rev persistence.Revision
	)
	err := f.do(ctx, Op{Call: CallLoad, Key: key}, func() (err error) {
		doc, rev, err = f.Wrapped.Load(ctx, key)
		return err
	})
	if err != nil {
		return persistence.Document{}, 0, err
	}
	return doc, rev, nil
}

func (f *Store) Revision(ctx context.Context, key group.Key) (persistence.Revision, error) {
	var rev persistence.Revision
	err := f.do(ctx, Op{Call: CallRevision, Key: key}, func() (err error) {
		rev, err = f.Wrapped.Revision(ctx, key)
		return err
	})
	if err != nil {
		return 0, err
	}
	return rev, nil
}

func (f *Store) Exists(ctx context.Context, key group.Key) (bool, error) {
	var ok bool
	err := f.do(ctx, Op{Call: CallExists, Key: key}, func() (err error) {
		ok, err = f.Wrapped.Exists(ctx, key)
		return err
	})
	if err != nil {
		return false, err
	}
	return ok, nil
}

func (f *Store) Create(ctx context.Context, key group.Key, doc persistence.Document) (persistence.Revision, error) {
	var rev persistence.Revision
	err := f.do(ctx, Op{Call: CallCreate, Key: key}, func() (err error) {
		rev, err = f.Wrapped.Create(ctx, key, doc)
		return err
	})
	if err != nil {
		return 0, err
	}
	return rev, nil
}

func (f *Store) Commit(ctx context.Context, key group.Key, expected persistence.Revision, m persistence.Mutation) (persistence.Revision, error) {
	var rev persistence.Revision
	err := f.do(ctx, Op{Call: CallCommit, Key: key, Mutation: m}, func() (err error) {
		rev, err = f.Wrapped.Commit(ctx, key, expected, m)
		return err
	})
	if err != nil {
		return 0, err
	}
	return rev, nil
}

func (f *Store) Delete(ctx context.Context, key group.Key, expected persistence.Revision) error {
	return f.do(ctx, Op{Call: CallDelete, Key: key}, func() error {
		return f.Wrapped.Delete(ctx, key, expected)
	})
}
