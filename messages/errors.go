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
	// ErrInternal: handling the request failed unexpectedly (a panic); the
	// group actor restarts from its stored state.
	ErrInternal = errors.New("internal error")
)
