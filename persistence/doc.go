// Package persistence defines how group state is stored: the Store and
// Locker interfaces, the Revision used for compare-and-set, the error
// classes every store returns, and the codec between a group.Group and its
// stored Document. The stored JSON is declared here, by persistence's own
// record types (record.go), never by the group types: the codec converts
// between the two.
//
// # Outcomes
//
// Classify turns any error a store call (or the runtime around it) returns
// into one Outcome: written, refused, stale, busy, unavailable, corrupt,
// canceled or unknown. The group actor, the breaker, metrics and the HTTP
// layer all decide from it, so they never disagree about what an error
// means for the write.
//
// # Revisions
//
// Create stores a group at revision 1; every successful Commit adds 1 and
// requires the caller's expected revision to equal the stored one. The
// aggregate's storeRevision member always equals the store's revision:
// stores rewrite it on every write (WithStoreRevision, or the equivalent in
// Lua or SQL), so the codec never needs to know the next revision.
//
// # Schema and layout versions
//
// schemaVersion is 1 (anything else is ErrCorrupt). layoutVersion says how
// the group is split into documents:
//
// Layout 2 (written by this codec). The aggregate is the docs/protocol.md §8.5 JSON without
// member records and targets:
//
//	{"streamPrefix":"orders","consumerGroup":"billing","schemaVersion":1,
//	 "storeRevision":7,"groupEpoch":3,…,"updatedAt":"…","migrations":{…},
//	 "members":{},"targetAssignments":{}}
//
// and each member record is its own document, keyed by member id, holding
// the docs/protocol.md §8.5 member JSON plus that member's target entry (null when the
// member has none; [] when its target is empty):
//
//	{"memberId":"m-1","memberName":"…","state":"ACTIVE",…,"shardProgress":[],
//	 "targetAssignment":[{"shardIndex":0},{"shardIndex":1}]}
//
// In Redis the aggregate is the hash field "aggregate" and member M the
// field "member:M"; in SQL the aggregate is the metadata row and member M a
// row of the members table. A heartbeat that changes one member therefore
// writes one small document, never the whole group.
//
// Layout 1 (the Kotlin server's; read only). Members and targets are inside
// the aggregate ("members":{id:{…}}, "targetAssignments":{id:[…]}), with no
// member documents. Decode also accepts these legacy forms: activeMigrationId
// for activeReshardingId; migrationId for a migration's reshardingId (the
// map key when both are absent); a missing shardCount derived from
// shardCountsByVersion[activeWriteVersion], and a migration's missing
// fromShardCount/toShardCount from shardCountsByVersion[fromVersion/
// toVersion]; a member's missing rebalanceTimeoutMs defaults to 60000.
// Legacy aggregates stored elsewhere than the metadata document (the old
// ":group" string key) are not read.
//
// A group loaded from a layout-1 document must first be committed with
// Rewrite, which replaces the aggregate (dropping the embedded members) and
// writes every member document. A Commit whose mutation carries an
// aggregate sets the stored layoutVersion to 2; a member-only delta leaves
// it unchanged, so a legacy group keeps saying so until it is rewritten.
//
// # Mutations
//
// MutationOf turns a batch of records, already applied to the group, into
// the delta to commit: the aggregate only when a MetaRecord is in the batch,
// and one put or delete per member the batch touched.
package persistence
