// Package member is the member's side of the heartbeat protocol
// (docs/protocol.md §4; docs/safety.md, "The member's side of the contract") as
// a pure state machine: what the next heartbeat reports, which shards may
// be read, and the local lease. It does no I/O, reads no clock (every
// instant is an argument) and starts no goroutine.
//
// One State is one member process. Its caller sends State.Request,
// applies the answer with State.Apply (or nothing, when no answer came),
// calls State.Tick as time passes, reports what it still handles of each
// shard it stopped fetching (State.SetInFlight), and asks State.MayRead
// before every read. The Effects of each step say which shards to start
// and to stop fetching.
//
// The rules it keeps:
//   - a shard may be read only after an OK answer assigned it and while the
//     local lease runs (REVOKE_PENDING and SYNC_METADATA only shrink what
//     is read);
//   - a shard taken away is stopped at once (nothing new is read from it)
//     and reported DRAINING with its in-flight count until the caller says
//     nothing is in flight, then REVOKED until an answer acknowledges it;
//   - the local lease ends one lease TTL after the send time of the last
//     accepted heartbeat (OK, REVOKE_PENDING or SYNC_METADATA); then every
//     shard is stopped. The TTL is the override of Config, else the one the
//     coordinator answers (memberLeaseTtlMs), else DefaultLeaseTTL;
//   - FENCED_MEMBER_EPOCH, UNKNOWN_MEMBER_ID, INVALID_REQUEST and
//     UNSUPPORTED_PROTOCOL stop every shard and start over with epoch 0;
//     what is still in flight keeps being reported DRAINING once the
//     member has joined again (an epoch-0 heartbeat reports nothing);
//   - a leave first stops every shard and keeps heartbeating (which keeps
//     the lease and the shards' block alive) until nothing is in flight,
//     and only then sends epoch −1.
//
// The Go client (package client), the simulated members of
// internal/testkit/membersim (used by chaos and bench) and the property tests of
// package group all drive this one machine.
package member
