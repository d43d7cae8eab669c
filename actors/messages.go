package actors

import (
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
)

// The messages the System sends the group actors: commands and
// queries, their replies, and the ticker's tick.
//
// Every request carries its own buffered reply channel (capacity 1). The
// group actor answers each request exactly once, possibly after a group
// commit (a heartbeat is answered only once its change is stored), so a
// request never outlives its actor without an answer: a restarting actor
// answers every parked request with a retryable error.

// reply is the answer to a request: a value or an error.
type reply[T any] struct {
	Value T
	Err   error
}

// replyTo is the channel a request is answered on. It must have capacity 1.
type replyTo[T any] chan reply[T]

// newReplyTo makes a reply channel.
func newReplyTo[T any]() replyTo[T] { return make(replyTo[T], 1) }

// Answer sends the reply without blocking (the channel has room for exactly one).
func (r replyTo[T]) Answer(v T, err error) { r <- reply[T]{Value: v, Err: err} }

// request is implemented by every message addressed to one group actor.
// Where a request is served was decided before it was sent (the HTTP
// edge's cluster.Node.Route): a request carries no routing of its own.
type request interface {
	GroupKey() group.Key
}

// routed is embedded by requests to name their group.
type routed struct {
	Key group.Key
}

// GroupKey returns the group the request is for.
func (r routed) GroupKey() group.Key { return r.Key }

// heartbeatMsg is a member heartbeat (docs/protocol.md §4). Answered after its change is stored.
type heartbeatMsg struct {
	routed
	Request *contract.HeartbeatRequest
	Reply   replyTo[contract.HeartbeatResponse]
	// Arrived is when the heartbeat reached the coordinator: it proves the
	// member alive then, so it is the heartbeat's time in the domain (a
	// heartbeat that waited in a busy mailbox is not charged the wait).
	Arrived time.Time
}

// arrived is the heartbeat's time in the domain: Arrived, or clock's now
// for a heartbeat sent without it.
func (m *heartbeatMsg) arrived(clock func() time.Time) time.Time {
	if m.Arrived.IsZero() {
		return clock()
	}
	return m.Arrived
}

// createMsg creates the group (docs/protocol.md §2.2). StreamLevel marks endpoint #2.
type createMsg struct {
	routed
	Request     contract.CreateRequest
	StreamLevel bool
	Reply       replyTo[contract.GroupView]
}

// deleteMsg deletes the group's metadata (docs/protocol.md §2.3); answers the pre-delete view.
type deleteMsg struct {
	routed
	Request contract.DeleteRequest
	Reply   replyTo[contract.GroupView]
}

// tickMsg drives time-based maintenance of one group (docs/protocol.md §7).
type tickMsg struct {
	routed
	Now time.Time
}

// strayMsg tells the group's actor that the group's ownership record names
// this process although the group is placed on another coordinator (a
// release that failed, an acquire whose outcome was unknown): unless the
// group is placed here again, the actor gives it up as in a handover.
type strayMsg struct{ routed }

// NotInfluenceReceiveTimeout: a strayMsg does not keep an actor alive.
func (*strayMsg) NotInfluenceReceiveTimeout() {}

// NotInfluenceReceiveTimeout marks ticks as not keeping a group actor
// alive: an actor whose group only gets ticks passivates when idle (the
// protoactor receive timeout).
func (*tickMsg) NotInfluenceReceiveTimeout() {}

// scaleMsg runs a group scale (docs/protocol.md §6.2). NewID is the id a new migration gets;
// StreamLevel marks a step of a stream scale (docs/protocol.md §6.3), for conflict metrics.
// Answered once the migration is ACTIVE, or with the noop migration.
type scaleMsg struct {
	routed
	Request     contract.ScaleRequest
	NewID       string
	StreamLevel bool
	Reply       replyTo[group.Migration]
}

// checkScaleMsg runs the per-group pre-checks of a stream scale (docs/protocol.md §2.5) on the
// committed state without changing anything: nil when a scale would start,
// resume or noop, else the error the scale would answer.
type checkScaleMsg struct {
	routed
	Request contract.ScaleRequest
	Reply   replyTo[struct{}]
}

// rollbackMsg rolls back migration ID (docs/protocol.md §6.5).
type rollbackMsg struct {
	routed
	ID      string
	Request contract.RollbackRequest
	Reply   replyTo[group.Migration]
}

// snapshotMsg asks the group actor to publish its committed state and
// answers the published snapshot: immutable and shared by every reader,
// so it is only read. Every read (GETs, monitoring, Grafana, member
// series) takes it.
type snapshotMsg struct {
	routed
	Reply replyTo[*group.Group]
}
