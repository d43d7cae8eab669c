package contract

import "errors"

var (
	// ErrTerminating: the coordinator is shutting down and takes no new work.
	ErrTerminating = errors.New("coordinator is terminating")
	// ErrStateConflict: the store revision kept changing under the request
	// (three attempts), nothing was acknowledged.
	ErrStateConflict = errors.New("state version conflict")
	// ErrOutcomeUnknown: the store failed in a way that may or may not have
	// applied the write (e.g. a connection broke mid-command). The group is
	// reloaded from the store before its next request; the request may be
	// retried.
	ErrOutcomeUnknown = errors.New("store outcome unknown")
	// ErrInternal: handling the request failed unexpectedly (a panic); the
	// group actor restarts from its stored state.
	ErrInternal = errors.New("internal error")
	// ErrProvisioning is matched (errors.Is) by every request that failed
	// because the Redis streams of a group could not be provisioned or
	// checked (docs/protocol.md §6.6): the group's metadata is left as the
	// request's contract says (a failed create stores nothing, a failed
	// scale stays PREPARING). The HTTP layer maps it to 503
	// REDIS_STREAM_PROVISIONING_FAILED.
	ErrProvisioning = errors.New("redis stream provisioning failed")
	// ErrDataPlane is matched by every request that failed because Redis
	// did not answer a data-plane step the runtime performs for an
	// operator (a forced offset reset's reads and XGROUP SETID). The HTTP
	// layer maps it to 503 REDIS_UNAVAILABLE.
	ErrDataPlane = errors.New("redis data plane unavailable")
	// ErrShed: a heartbeat was shed, not served: its group already had as
	// many heartbeats queued as it may, or did not answer it within the
	// store timeout. Nothing changed; the member sends it again as it is.
	// The HTTP layer answers it with status RETRY.
	ErrShed = errors.New("heartbeat shed")
	// ErrNotStored: what a heartbeat changed could not be stored, or its
	// write was not confirmed, for a reason that may pass (the store busy,
	// down or slow: persistence.Outcome.Retryable, but never a refusal
	// naming another owner). It wraps that reason. Nothing is acknowledged;
	// the member sends the heartbeat again as it is. The HTTP layer answers
	// it with status RETRY.
	ErrNotStored = errors.New("heartbeat not stored")
)
