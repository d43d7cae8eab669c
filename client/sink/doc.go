// Package sink holds what the fenced sinks share (docs/client.md,
// "Effectively-once sinks"): the entry-id order they keep their applied
// position in, their counters, and the checks of the messages they take.
//
// A sink writes an entry's effects, checks and advances its shard's fence
// and moves the shard's applied position to the entry, all in one atomic
// step (a Redis script in package redissink, a PostgreSQL transaction in
// package pgsink):
//
//   - a token below the fence's is refused: the write came from a process
//     that lost the shard (a zombie), and the handler's error wraps
//     client.ErrFenced, which stops the shard in that consumer;
//   - a token above the fence's starts a new grant: the fence takes it,
//     and the applied position moves back to Fence.From when that is
//     lower (a live reset moved the consumer group back: the entries it
//     replays are applied again, once);
//   - an entry at or below the applied position was applied already (by
//     this grant before a crash or a lost acknowledgement, or by an
//     earlier grant): it is skipped, and acknowledged;
//   - otherwise the effects are written and the position moves to it.
//
// The applied position is one entry id per shard, so a sink needs the
// entries of a shard in stream order with no entry passed over: the
// consumer must be Ordered (client.ConsumerConfig.Ordered), which the
// sinks check on every message (Fence.From is set).
package sink
