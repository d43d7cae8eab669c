// Package redis is the Redis metadata store (store.type=redis, docs/protocol.md §8.3) and
// the per-group Redis state mutex (docs/protocol.md §8.2, deliberate improvement 1). It
// works on a single server and on Redis Cluster through
// goredis.UniversalClient.
//
// # Keys (<kp> is the key prefix, concatenated literally)
//
//	<kp>:{P:G}:metadata  HASH   the group (below)
//	<kp>:groups          SET    metadata key names of every group
//	<kp>:{P:G}:mutex     STRING mutex token <coordinatorId>:<uuid>
//
// The metadata hash holds layout 2 of package persistence:
//
//	aggregate      docs/protocol.md §8.5 JSON without members/targets; storeRevision = revision
//	revision       decimal store revision, 1 after Create, +1 per Commit
//	schemaVersion  1
//	layoutVersion  2 (1 for a Kotlin-written hash until its first rewrite)
//	updatedAt      ISO-8601 UTC with milliseconds
//	lastCommitId   uuid of the last Create/Commit (makes client retries safe)
//	member:<id>    one member document per member record
//
// # Atomicity
//
// Create, Commit and Delete are each one Lua script on the metadata hash,
// so each is atomic and touches one Cluster slot. Commit checks the
// expected revision and the stored versions before writing, then writes
// the aggregate (only when the mutation has one), puts and deletes member
// fields and bumps the revision: a lease renewal rewrites one member field.
// A script run twice with the same commit id (go-redis retrying after a
// lost reply) reports success instead of a false conflict.
//
// The index lives in another slot, so it is updated by a separate command
// after the script: Create adds the key (also when the group already
// exists, repairing a lost SADD), Delete removes it; List skips index
// entries whose hash is gone.
//
// # Pipelining
//
// Revision's reads and the Create, Commit and Delete scripts go through
// one sender goroutine per Store (pipeline.go) that sends the commands of
// concurrent callers as one pipeline per round trip: the group actors of
// many groups each read a revision or run a compare-and-set per batch, and
// they share round trips instead of taking a pooled connection each. A
// lone call is sent at once (nothing waits for company); each caller gets
// its own reply and error, a caller whose context ends returns at once,
// and a call whose context ended before its pipeline was built is not
// sent. Load, List, the index updates and the mutex (a different Locker)
// use the client directly. Close stops the sender.
//
// # Errors
//
// Reads that fail are ErrUnavailable. Writes are ErrUnavailable only when
// the command cannot have run (no connection, closed client, a refusal
// such as LOADING or CLUSTERDOWN); any other failure is an unclassified
// "outcome unknown" error, after which callers reload and compare.
package redis
