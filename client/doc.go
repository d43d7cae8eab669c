// Package client is the Go client of the Redis Stream Coordinator: members
// of a consumer group that read a sharded Redis Stream (keys P:0 … P:n-1)
// and producers that write to it.
//
//   - Coordinator is a connection to the coordinator's HTTP API (base URL
//     and Basic or Bearer credentials; Bearer tokens are obtained with
//     POST /auth/login and renewed before they expire).
//   - Member joins a group and heartbeats (PROTOCOL.md §4). It tells its
//     Hooks when to start and stop reading each shard and follows the
//     member's side of the safety contract of docs/safety.md: it reads a
//     shard only after an OK answer assigned it; a revoked shard is
//     reported DRAINING while its in-flight entries are handled and REVOKED
//     only after; when no heartbeat was answered for a lease TTL since the
//     send time of the last answered one it stops reading every shard (the
//     local lease); after FENCED_MEMBER_EPOCH or UNKNOWN_MEMBER_ID it stops
//     and rejoins; on context cancellation it drains and leaves (epoch −1).
//   - Consumer runs a Member and reads the shards it owns with XREADGROUP,
//     hands entries to a worker pool (entries of one key stay in order) and
//     acknowledges them after the Handler succeeded. On taking over a shard
//     it claims what the previous owner left pending (XAUTOCLAIM), counts
//     deliveries, and moves entries that failed MaxDeliveries times to a
//     dead-letter stream.
//   - Producer routes each record key to its shard with the protocol's
//     Murmur3 routing (ShardFor, the same shard as the Python and Spring
//     clients) using the coordinator's producer routing, cached and
//     refreshed, and writes it with XADD (optional MAXLEN, NOMKSTREAM).
//
// The member's LeaseTTL must match the coordinator's
// coordination.member-lease-ttl (10 s by default): the heartbeat answer
// does not carry it.
package client
