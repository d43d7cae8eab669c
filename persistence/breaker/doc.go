// Package breaker puts a circuit breaker (sony/gobreaker) in front of a
// persistence.Store and a persistence.Locker, so that a backend that is
// down costs callers one fast ErrUnavailable instead of a timeout each.
//
// One Breaker guards both decorators, since the store and the mutex share
// a backend. It opens after Options.ConsecutiveFailures failures in a row,
// rejects every call with a wrapped persistence.ErrUnavailable (without
// calling the backend) for Options.OpenTimeout, then lets
// Options.HalfOpenRequests probes through: their success closes it, a
// failure opens it again.
//
// Only backend trouble counts as a failure. Answers that prove the backend
// works count as successes (persistence.Outcome.BackendWorks: nil,
// ErrConflict, ErrNotFound, ErrAlreadyExists, ErrCorrupt and
// ErrLockTimeout). A call whose caller
// canceled it (context.Canceled) says nothing about the backend and is
// not counted at all — not even as a success, so a canceled half-open
// probe cannot close the breaker. Everything else (ErrUnavailable,
// "outcome unknown", deadline exceeded) is a failure.
package breaker
