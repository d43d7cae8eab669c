// Package streams is the coordinator's data-plane adapter for sharded Redis
// Streams: it provisions stream shards and consumer groups (Provisioner),
// observes them — offsets, lag, pending counts, memory, drain checks and a
// read-only message explorer (Observer) — and turns successive observations
// into produced/consumed rates (RateTracker) behind a stale-while-refresh
// cache (Cache). It never reads messages on behalf of the application and
// never acknowledges or trims anything; only Operator changes data, at an
// operator's request: consumer group positions (XGROUP SETID) and the
// entries of dead-letter streams (redrive, delete), whose format
// contract.DeadLetterFields defines for the clients that write them.
//
// A sharded stream with prefix P has one Redis Stream per shard i, under the
// key "P:i" (contract.StreamKey, with the slots and the producers' routing
// of docs/protocol.md §6.7 beside it in package contract).
//
// Every Redis access goes through a redis.UniversalClient and uses only
// single-key commands, so a standalone server and a Redis Cluster (whose
// shard keys live in different slots) behave alike. Commands over several
// shards are sent in one pipeline.
//
// Error convention: where the protocol folds a failed observation into the
// result ("XINFO error → 0/nulls", "XINFO error ⇒ drained"), only an error
// reply from Redis about the key (no such key, wrong type, …) is folded; a
// transport failure (connection refused, timeout, cancelled context) is
// always returned to the caller, so an outage never reads as "empty" or
// "drained".
package streams
