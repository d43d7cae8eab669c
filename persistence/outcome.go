package persistence

import (
	"context"
	"errors"

	"github.com/redis-stream-coordinator/coordinator/group"
)

// Outcome is what an error says about the store write a caller attempted.
// It is the one classification of store outcomes: the group actor decides
// from it whether to reload, retry or resync, the breaker whether the
// backend works, metrics and the HTTP layer how to report it.
type Outcome uint8

const (
	// Written: no error; the call did what it was asked.
	Written Outcome = iota
	// Refused: nothing was written and the store is not to blame: a domain
	// refusal (*group.Error) or a failure outside any store call
	// (ErrOutsideStore).
	Refused
	// Stale: the caller's cached state is stale (ErrConflict, ErrNotFound,
	// ErrAlreadyExists); nothing was written. Reload and retry.
	Stale
	// Busy: the state mutex is held elsewhere (ErrLockTimeout); nothing was
	// written and the backend works.
	Busy
	// Unavailable: the backend is down or the breaker is open
	// (ErrUnavailable); nothing was written.
	Unavailable
	// Corrupt: the stored group cannot be decoded (ErrCorrupt); it fails
	// closed.
	Corrupt
	// Deposed: a fenced write found that this process no longer owns the
	// group (ErrNotOwner); nothing was written and the backend works.
	Deposed
	// Canceled: the caller gave up (context.Canceled) before the store
	// answered; a write may or may not have happened.
	Canceled
	// Unknown: any other error; a write may or may not have happened, so
	// the caller compares revisions before trusting its cache.
	Unknown
)

// ErrOutsideStore marks a failure that happened outside any store call (a
// Redis stream that could not be provisioned, a panic answered by the
// runtime): it says nothing about a store write.
var ErrOutsideStore = errors.New("failure outside the metadata store")

// classOutcomes maps each error class to its outcome, most specific first.
var classOutcomes = []struct {
	err     error
	outcome Outcome
}{
	{ErrConflict, Stale},
	{ErrNotFound, Stale},
	{ErrAlreadyExists, Stale},
	{ErrLockTimeout, Busy},
	{ErrUnavailable, Unavailable},
	{ErrCorrupt, Corrupt},
	{ErrNotOwner, Deposed},
	{ErrOutsideStore, Refused},
	{context.Canceled, Canceled},
}

// Classify returns the outcome err reports.
func Classify(err error) Outcome {
	if err == nil {
		return Written
	}
	if _, domain := errors.AsType[*group.Error](err); domain {
		return Refused
	}
	for _, c := range classOutcomes {
		if errors.Is(err, c.err) {
			return c.outcome
		}
	}
	return Unknown
}

// Retryable reports whether a failure may pass by itself, so that the
// caller may answer "retry" and keep its state: the store or its mutex is
// busy or down, the cache was stale, or the write's fate is unknown (the
// next attempt starts from the stored revision). A refusal and a corrupt
// group are final; Written is no failure.
func (o Outcome) Retryable() bool { return o != Written && o != Refused && o != Corrupt }

// BackendWorks reports whether the outcome shows a working backend (the
// breaker's notion of success): it answered, whatever it answered.
func (o Outcome) BackendWorks() bool {
	switch o {
	case Written, Refused, Stale, Busy, Corrupt, Deposed:
		return true
	}
	return false
}

// KnownWrite reports whether the caller knows if a write happened.
func (o Outcome) KnownWrite() bool { return o != Unknown && o != Canceled }
