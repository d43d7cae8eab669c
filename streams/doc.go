// Package streams is the coordinator's data-plane adapter for sharded Redis
// Streams: it provisions stream shards and consumer groups, observes them
// (offsets, lag, pending counts, memory, produced/consumed rates) and offers
// a read-only message explorer. It never reads messages on behalf of the
// application and never acknowledges or deletes anything.
//
// A sharded stream with prefix P has one Redis Stream per shard i, under the
// key "P:i" (StreamKey). Slot computes the Redis Cluster hash slot of a key
// and ShardFor is the producers' partition-key routing function (§6.7).
//
// Every Redis access goes through a redis.UniversalClient and uses only
// single-key commands, so a standalone server and a Redis Cluster (whose
// shard keys live in different slots) behave alike. Commands over several
// shards are sent in one pipeline.
//
// Error convention: a Redis error reply about a key (no such key, wrong
// type, ...) is data and is folded into the result as the protocol says
// ("XINFO error → 0/nulls"); a transport failure (connection refused,
// timeout, cancelled context) is returned to the caller as an error.
package streams
