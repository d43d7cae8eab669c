package messages

import "errors"

// Runtime errors a request can be answered with, besides domain errors
// (*group.Error) and store errors (persistence.Err*). Only the HTTP layer maps
// them to statuses.
var (
	// ErrTerminating: the coordinator is shutting down and takes no new work.
	ErrTerminating = errors.New("coordinator is terminating")
	// ErrStateConflict: the store revision kept changing under the request
	// (three attempts), nothing was acknowledged.
	ErrStateConflict = errors.New("state version conflict")
	// ErrOutcomeUnknown: the store failed in a way that may or may not have
	// applied the write (e.g. a connection broke mid-command). The group was
	// resynced from the store; the request may be retried.
	ErrOutcomeUnknown = errors.New("store outcome unknown")
	// ErrInternal: handling the request failed unexpectedly (a panic); the
	// group actor restarts from its stored state.
	ErrInternal = errors.New("internal error")
)
