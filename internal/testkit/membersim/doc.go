// Package membersim simulates consumer processes that follow the heartbeat
// protocol (docs/protocol.md §4.9) against a coordinator's HTTP API, and an
// Oracle that checks that no shard is ever read by two members at once.
//
// Tests that drive the real HTTP stack use it: a Member builds each
// heartbeat from what it reads and applies each answer; Heartbeat sends
// one over HTTP. Every change of what a member reads is reported to its
// Oracle at the moment the member makes it, so the Oracle sees the order
// in which processes start and stop reading: a member stops reading a
// shard before it sends the heartbeat that reports the release, and the
// coordinator grants the shard to another member only after that report.
//
// With several coordinators, a Route picks the coordinator of each
// heartbeat under a Routing: Spread (any live one, as behind a load
// balancer; the coordinators forward) or Follow, the documented option for
// owner-directed members: the coordinator the last answer named in
// X-Coordinator-Owner, for as long as it answers, falling back to any
// live one after no answer or a RETRY that names no other owner (as the
// Go client does). The bench (bench.Coordinators) and the chaos suite
// (coord-chaos -routing) route their members with it.
package membersim
