// Package fakeclock is the settable clock the tests share: a time that moves
// only when a test moves it (Advance, Set), optionally stepping forward by a
// fixed amount on every reading. It is safe for concurrent use, so one clock
// can be handed to a coordinator, its metrics and its HTTP API at once.
package fakeclock
