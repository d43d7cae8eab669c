package coordtest

import (
	"context"
	"sync"

	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/persistence"
)

// Call names a group call of the store that Faults can intercept.
type Call string

// The calls Faults intercepts.
const (
	CallLoad   Call = "load"
	CallCreate Call = "create"
	CallCommit Call = "commit"
	CallDelete Call = "delete"
)

// Faults wraps a store so that a test can hold or fail its group loads and
// writes: a group's actor makes them while handling a message, so a held
// call holds the actor (later requests queue in its mailbox) and a failed
// one is the store's failure. Every other call passes through.
type Faults struct {
	Store
	mu     sync.Mutex
	before func(call Call, key group.Key) error
}

// NewFaults wraps s with no fault set (Options.Wrap takes it as is;
// Server.Faults returns it).
func NewFaults(s Store) Store { return &Faults{Store: s} }

// Before makes every later intercepted call first call fn, which may
// block; a non-nil error is the call's answer (the store is not called).
// nil removes fn.
func (f *Faults) Before(fn func(call Call, key group.Key) error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.before = fn
}

// Hold holds the next call of kind call until release is called; entered
// is closed once it is held. It replaces any Before function.
func (f *Faults) Hold(call Call) (entered <-chan struct{}, release func()) {
	in, out := make(chan struct{}), make(chan struct{})
	var once sync.Once
	f.Before(func(got Call, _ group.Key) error {
		if got != call {
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

func (f *Faults) check(call Call, key group.Key) error {
	f.mu.Lock()
	fn := f.before
	f.mu.Unlock()
	if fn == nil {
		return nil
	}
	return fn(call, key)
}

func (f *Faults) Load(ctx context.Context, key group.Key) (persistence.Document, persistence.Revision, error) {
	if err := f.check(CallLoad, key); err != nil {
		return persistence.Document{}, 0, err
	}
	return f.Store.Load(ctx, key)
}

func (f *Faults) Create(ctx context.Context, key group.Key, doc persistence.Document) (persistence.Revision, error) {
	if err := f.check(CallCreate, key); err != nil {
		return 0, err
	}
	return f.Store.Create(ctx, key, doc)
}

func (f *Faults) Commit(ctx context.Context, key group.Key, expected persistence.Revision, m persistence.Mutation) (persistence.Revision, error) {
	if err := f.check(CallCommit, key); err != nil {
		return 0, err
	}
	return f.Store.Commit(ctx, key, expected, m)
}

func (f *Faults) Delete(ctx context.Context, key group.Key, expected persistence.Revision) error {
	if err := f.check(CallDelete, key); err != nil {
		return err
	}
	return f.Store.Delete(ctx, key, expected)
}
