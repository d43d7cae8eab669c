package messages

import (
	"time"

	"github.com/redis-stream-coordinator/coordinator/group"
)

// Reply is the answer to a request: a value or an error.
type Reply[T any] struct {
	Value T
	Err   error
}

// ReplyTo is the channel a request is answered on. It must have capacity 1.
type ReplyTo[T any] chan Reply[T]

// NewReplyTo makes a reply channel.
func NewReplyTo[T any]() ReplyTo[T] { return make(ReplyTo[T], 1) }

// Answer sends the reply without blocking (the channel has room for exactly one).
func (r ReplyTo[T]) Answer(v T, err error) { r <- Reply[T]{Value: v, Err: err} }

// Request is implemented by every message addressed to one group actor.
type Request interface {
	GroupKey() group.Key
	// Forwarder is the coordinator that forwarded the request here, "" when
	// it came straight from a client.
	Forwarder() string
}

// Routed is embedded by requests to name their group and, for a request
// another coordinator forwarded, that coordinator's id.
type Routed struct {
	Key         group.Key
	ForwardedBy string
}

// GroupKey returns the group the request is for.
func (r Routed) GroupKey() group.Key { return r.Key }

// Forwarder returns ForwardedBy.
func (r Routed) Forwarder() string { return r.ForwardedBy }

// MarkForwarded records that coordinator by forwarded the request.
func (r *Routed) MarkForwarded(by string) { r.ForwardedBy = by }

// Heartbeat is a member heartbeat (docs/protocol.md §4). Answered after its change is stored.
type Heartbeat struct {
	Routed
	Request *group.HeartbeatRequest
	Reply   ReplyTo[group.HeartbeatResponse]
	// Arrived is when the heartbeat reached the coordinator: it proves the
	// member alive then, so it is the heartbeat's time in the domain (a
	// heartbeat that waited in a busy mailbox is not charged the wait).
	Arrived time.Time
}

// CreateGroup creates the group (docs/protocol.md §2.2). StreamLevel marks endpoint #2.
type CreateGroup struct {
	Routed
	Request     group.CreateRequest
	StreamLevel bool
	Reply       ReplyTo[group.GroupView]
}

// DeleteGroup deletes the group's metadata (docs/protocol.md §2.3); answers the pre-delete view.
type DeleteGroup struct {
	Routed
	Request group.DeleteRequest
	Reply   ReplyTo[group.GroupView]
}

// Routing is what producers need to route keys to shards (docs/protocol.md §2.4).
type Routing struct {
	StreamPrefix    string
	ConsumerGroup   string
	MetadataVersion int64
	ShardCount      int
}

// Tick drives time-based maintenance of one group (docs/protocol.md §7).
type Tick struct {
	Routed
	Now time.Time
}

// NotInfluenceReceiveTimeout marks ticks as not keeping a group actor
// alive: an actor whose group only gets ticks passivates when idle (the
// protoactor receive timeout).
func (*Tick) NotInfluenceReceiveTimeout() {}
