// Package placement decides which live coordinator owns a consumer group:
// rendezvous (highest-random-weight) hashing over the coordinator ids,
// with bounded loads when the full set of placed units is known.
//
// Owner scores every (group, coordinator) pair with a fixed 64-bit hash and
// picks the coordinator with the highest score. The score of a pair depends
// only on the two strings, so:
//   - every process computes the same owner from the same set of ids, in
//     any order, on any Go version or architecture (the hash is XXH64 with
//     seed 0 plus a fixed mixer, pinned by a golden test);
//   - a coordinator that joins takes exactly the groups for which it now has
//     the highest score, from whoever had them; a coordinator that leaves
//     hands exactly its own groups to their second choices; no other group
//     moves (the minimum possible).
//
// Bounded places a whole set of units at once with the same scores, but no
// coordinator takes more than ⌈(1+ε) × the mean⌉ (Mirrokni, Thorup and
// Zadimoghaddam): few units on few coordinators spread evenly, at the price
// of a few moves besides the minimum. Package cluster uses it with
// DefaultEpsilon, and Owner for a unit not yet in its list.
//
// Simulate replays coordinator joins and leaves, and group creations, over
// a synthetic population of groups with Zipf-distributed member counts and
// reports how many groups move and how evenly groups and members spread,
// for Owner and for Bounded. It backs the simulation tests and
// cmd/coord-placement-sim (docs/cluster.md, Placement).
//
// The package is pure: no I/O, no clock reads, no goroutines, no global
// state; Simulate is deterministic for a given configuration. Owner
// allocates nothing.
package placement
