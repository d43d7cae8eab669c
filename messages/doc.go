// Package messages defines what flows through the actor system: commands and
// queries sent to group actors, their replies, and the ticker's Tick.
//
// Every request carries its own buffered reply channel (capacity 1). The
// group actor answers each request exactly once, possibly after a group
// commit (a heartbeat is answered only once its change is stored), so a
// request never outlives its actor without an answer: a restarting actor
// answers every parked request with a retryable error.
package messages
