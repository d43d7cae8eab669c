package actors

import (
	"sync/atomic"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/redis-stream-coordinator/coordinator/group"
)

// How the runtime's actors are built: their props (producer, supervisor,
// mailbox, dispatcher, middlewares) and the mailbox depth counter that
// both sides read (the caller's System.Heartbeat sheds on it, the
// actor reports it).

// managerProps builds the props of the GroupManager: one-for-one
// supervision with unlimited restarts.
func managerProps(c *System) *actor.Props {
	return actor.PropsFromProducer(func() actor.Actor {
		return &manager{c: c, keys: map[string]group.Key{}, retiring: map[group.Key][]request{}}
	}, actor.WithSupervisor(actor.RestartingSupervisorStrategy()))
}

// groupProps builds the props of key's group actor: its own mailbox with a
// depth counter, the metrics and panic middlewares.
func groupProps(c *System, key group.Key, depth *mailboxDepth) *actor.Props {
	return actor.PropsFromProducer(func() actor.Actor { return newGroupActor(c, key, depth) },
		actor.WithMailbox(actor.Unbounded(depth)),
		actor.WithDispatcher(c.dispatcher),
		actor.WithReceiverMiddleware(observeMessages(c.opts.Observer), answerPanics))
}

// mailboxDepth counts the messages posted to a mailbox and not yet handled
// (n; protoactor reports a message received once the actor has handled
// it), and among them the heartbeats (heartbeats, the queue
// System.Heartbeat bounds). It is a protoactor mailbox middleware.
type mailboxDepth struct{ n, heartbeats atomic.Int64 }

func (d *mailboxDepth) MailboxStarted() {}
func (d *mailboxDepth) MailboxEmpty()   {}

func (d *mailboxDepth) MessagePosted(msg any) {
	d.n.Add(1)
	if isHeartbeat(msg) {
		d.heartbeats.Add(1)
	}
}

func (d *mailboxDepth) MessageReceived(msg any) {
	d.n.Add(-1)
	if isHeartbeat(msg) {
		d.heartbeats.Add(-1)
	}
}

func isHeartbeat(msg any) bool {
	_, ok := actor.UnwrapEnvelopeMessage(msg).(*heartbeatMsg)
	return ok
}
