// Package cluster makes the coordinator processes that share one store a
// cluster in which every consumer group has exactly one owner.
//
// A [Node] is this process's membership: it registers in the store's
// coordinator registry (an id, a token drawn at each start: the public
// key of the run's forwarding key pair, [ForwardKeys]; the URL other
// coordinators forward to) with a lease on the store's clock, renews it,
// and keeps the list of live coordinators and of the stored stream
// prefixes. Groups are placed on the live coordinators by stream prefix
// (package placement: rendezvous hashing with bounded loads over every
// listed prefix, plain rendezvous for one not listed yet; all groups of one
// stream are placed together, so stream-level commands stay on one
// coordinator). Only a group's owner decides and writes for it; it holds
// an ownership record with an epoch in the store, and every write it makes
// is fenced by that epoch (persistence.Cluster).
//
// Node.Route is the one routing decision of a request (serve here, forward
// to the group's coordinator, or refuse), taken once at the HTTP edge;
// Node.Acquire and the store's fence are the safety that holds whatever
// the routing decided (route.go tells the two apart).
//
// Safety rests on one rule: a node answers for its groups only while
// Serving, which ends a margin before its registry lease can have ended,
// measured on the node's monotonic clock from the send time of its last
// successful renewal. Another coordinator can take a group over only once
// the lease has ended on the store's clock, or after the owner released
// it. docs/cluster.md has the argument and its assumption (a bounded clock
// drift rate).
package cluster
