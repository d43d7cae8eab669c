// Package group is the pure domain of the coordinator: one consumer group's
// state (members, leases, epochs, target and current assignment, resharding
// migrations, metadata-correction rounds) and the handlers that change it —
// heartbeat (docs/protocol.md §4.2 of docs/protocol.md), tick, create, delete, scale, rollback.
//
// Every handler takes the current time as an argument, never does I/O,
// never reads a clock and starts no goroutines, so each flow is reproducible
// in a unit test. Handlers express changes as Records and apply them through
// (*Group).Apply, the only code that changes a Group, and return one shape,
// a Result: the records plus an answer or an error. The caller (the group
// core) commits the same records to the store and replays them onto its
// committed copy, so live traffic and recovery share one path.
//
// The wire is package contract's: the member protocol's messages and
// their value types (ShardSet, Instant), the admin requests, and the views
// of a group. The handlers take and answer contract's messages; views.go
// projects the domain types (which carry no JSON) into contract's views.
//
// Invariants the handlers keep (checked by the tests and by Assignments):
//   - a shard is never in the current sets of two owners: a shard moved to a
//     new member stays pending for it until every other owner stopped
//     holding it (revoke before assign);
//   - targets of live members are disjoint, cover 0..shardCount-1 when a
//     member is live, and are balanced within one shard;
//   - groupEpoch, assignmentEpoch and metadataVersion never decrease, and
//     assignmentEpoch equals groupEpoch after every handler.
package group
