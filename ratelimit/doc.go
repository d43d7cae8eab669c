// Package ratelimit is the per-process fixed-window limiter of docs/protocol.md §9.2
// and the seed's "Rate Limiting" section.
//
// The HTTP layer applies it after authentication to mutating requests under
// <base>/streams/… except heartbeats, keyed by Key(principal, P, G), and
// answers 429 with Retry-After: RetryAfterSeconds(retryAfter) when Allow
// refuses. Limits are per process; strict global limits belong in a gateway.
package ratelimit
