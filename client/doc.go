// Package client is the Go client of the Redis Stream Coordinator: members
// of a consumer group that read a sharded Redis Stream (keys P:0 … P:n-1)
// and producers that write to it.
//
//   - Coordinator is a connection to the coordinator's HTTP API (base URL
//     and Basic or Bearer credentials; Bearer tokens are obtained with
//     POST /auth/login and renewed before they expire and after a 401).
//     With api.authenticate-member-api on, a member's heartbeats need a
//     user with the MEMBER role or a heartbeat grant: WithBearerLogin
//     (docs/client.md, "How a member gets a credential"). Its admin and
//     monitoring calls (admin.go: login, groups, scales, rollbacks, members,
//     offsets and their reset, dead letters, the cluster view) serve
//     operators' tools such as cmd/coordctl.
//   - Member joins a group and heartbeats (docs/protocol.md §4). It runs the
//     member state machine of package member (the one member protocol of
//     this repository: what to report, what may be read, the local lease)
//     and tells its Hooks when to start and stop reading each shard. It
//     follows the member's side of docs/safety.md: it reads a shard only
//     after an OK answer assigned it; a revoked shard is stopped at once and
//     reported DRAINING, while heartbeats go on, until the handler calls
//     under way return, then REVOKED; no handler call starts once the
//     shard is revoked or the local lease (one lease TTL from the send time
//     of the last accepted heartbeat) is in its last tenth, and running
//     ones are cancelled then; after FENCED_MEMBER_EPOCH or
//     UNKNOWN_MEMBER_ID it rejoins; on context cancellation it stops,
//     drains under a live lease and only then leaves (epoch −1). Refused
//     and failed heartbeats back off (capped, jittered, exponential; one
//     log line, then a summary every 5 s), and Run returns
//     ErrGroupNotFound when the group does not exist unless
//     MemberConfig.CreateGroup asks to create it (when the member's
//     credential may read the group; one that may only heartbeat logs a
//     warning and keeps rejoining). Heartbeats follow the
//     group's owner named by the X-Coordinator-Owner answer header. Every
//     other call refused with 503 GROUP_OWNED_ELSEWHERE or
//     COORDINATOR_NOT_SERVING (it did not run) is sent again after its
//     Retry-After, at most ten times.
//   - Consumer runs a Member and reads the shards it owns with XREADGROUP,
//     hands entries to a worker pool in batches (entries of one key stay
//     in order) and acknowledges them after the Handler succeeded, many
//     per XACK (AckBatch, AckInterval) and always before a revoked shard
//     is reported REVOKED: a crash delivers again, per shard, the entries
//     queued or running and at most AckBatch handled ones. On taking over
//     a shard, and every ClaimInterval, it claims the idle pending entries
//     it does not hold (XPENDING, then XCLAIM). Message.Deliveries and
//     MaxDeliveries count handler runs; an entry whose MaxDeliveries-th run
//     failed moves to a dead-letter stream. StartAt places a consumer
//     group the consumer creates (default: the start of the stream).
//     Consume runs one with the defaults in one call. Each Message carries
//     the fencing token of its shard's grant (Message.Fence), which the
//     sinks of client/sink/... check atomically with their writes to
//     refuse a zombie's; handler contexts end when the coordinator revokes
//     the shard; Ordered runs a shard's entries one at a time in stream
//     order, as the sinks need (docs/client.md, "Fencing").
//   - Producer routes each record key to its shard with the protocol's
//     Murmur3 routing (ShardFor, the same shard as the Python and Spring
//     clients) using the coordinator's producer routing, cached and
//     refreshed, and writes it with XADD (optional MAXLEN, NOMKSTREAM),
//     the key in KeyField; PublishBatch writes many records in one
//     pipeline with a Result per record.
//
// Every call takes a context. Statuses (StatusOK, …) and error codes
// (CodeGroupNotFound, …) are exported constants. The bodies it sends and
// reads are the wire types of package contract (contract.HeartbeatRequest,
// contract.RoutingView, contract.GroupView, contract.ErrorBody, …), the one
// declaration the coordinator encodes and decodes too, so the two cannot
// drift apart; paths come from contract's route templates. The client
// imports no server package (TestClientImportsNoServerPackage).
//
// The lease TTL comes from the coordinator (memberLeaseTtlMs in every
// heartbeat answer); MemberConfig.LeaseTTL only overrides it.
package client
