// Package assignor computes a consumer group's target assignment: which live
// member owns each shard 0..S-1 of a sharded stream (docs/protocol.md §5, with the
// "always balanced" improvement).
//
// The package is pure and stdlib-only: no I/O, no clock reads (time comes
// in as input). It owns the assignment rules and nothing else: liveness,
// epochs, reconciliation and how work is measured belong to package group.
// Two assignors are offered:
//   - count (Assign, AssignOrdered): balances shard counts, the rules below.
//     Assign takes a map and returns one; AssignOrdered takes members in id
//     order and returns only the changes (no map or string work, for large
//     groups). Both apply the same rules.
//   - work (Balance): balances each member's work (the sum of its shards'
//     weights) per unit of capacity, sticky, with hysteresis and a move
//     budget; its rules are on Balance (docs/assignment.md).
//
// # Rules of the count assignor
//
// With N live members and S shards, let floor = S/N and extra = S mod N.
//
//  1. Normalize prev. Live members are taken in ascending id order; a member
//     claims each shard of its previous set that lies in [0, S) and is not
//     already claimed (so duplicates are dropped and a shard listed by several
//     live members belongs to the smallest id). Entries of members that are
//     not live are ignored; their shards are unowned.
//  2. Quotas. The extra members that claimed the most shards (ties: smallest
//     id) get floor+1 shards, all others get floor.
//  3. Keep. Each member keeps its lowest min(claimed, quota) shards and
//     releases the rest, so a member that must give up shards gives up its
//     highest indexes.
//  4. Hand out. Unowned and released shards are given out lowest index
//     first, each to the member below its quota that has the fewest shards
//     (ties: smallest id).
//
// Consequences: every live member ends with floor or floor+1 shards (the
// result is always balanced), every shard is owned exactly once, and the
// number of shards whose owner differs from their normalized previous owner
// is the minimum over all balanced assignments: a member can retain at most
// min(claimed, quota) shards, and giving the floor+1 quotas to the members
// that claimed most maximizes that sum. Joiners receive the highest indexes
// of the most loaded members; shards of departed members go lowest first to
// the least loaded. Assigning again with the result as prev changes nothing.
package assignor
