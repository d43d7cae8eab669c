package actors

import (
	"sync/atomic"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/messages"
)

// child is a registry entry: a group actor's PID and its mailbox depth.
type child struct {
	pid   *actor.PID
	depth *mailboxDepth
}

// drain asks the manager to poison every group actor (each answers what is
// already queued, then stops) and to close done once none is left.
type drain struct{ done chan struct{} }

// manager is the GroupManager actor. It spawns one group actor per key as
// its child, publishes it in the Coordinator's registry, forwards the
// request that caused the spawn, and unpublishes children that terminate.
//
// Supervision is one-for-one with unlimited restarts: only the failing
// child restarts, and it is never stopped, because a stopped actor would
// drop the requests still queued in its mailbox without answering them.
type manager struct {
	c        *Coordinator
	keys     map[string]group.Key // child PID id → key
	draining chan struct{}        // closed once no child is left
}

func (c *Coordinator) managerProps() *actor.Props {
	return actor.PropsFromProducer(func() actor.Actor {
		return &manager{c: c, keys: map[string]group.Key{}}
	}, actor.WithSupervisor(actor.RestartingSupervisorStrategy()))
}

// Receive handles group requests sent before their actor existed, drain
// and child termination.
func (m *manager) Receive(ctx actor.Context) {
	switch msg := ctx.Message().(type) {
	case messages.Request:
		ctx.Send(m.child(ctx, msg.GroupKey()), msg)
	case drain:
		m.draining = msg.done
		for _, pid := range ctx.Children() {
			ctx.Poison(pid)
		}
		m.closeIfDrained()
	case *actor.Terminated:
		if key, ok := m.keys[msg.Who.Id]; ok {
			delete(m.keys, msg.Who.Id)
			m.c.registry.Delete(key)
			m.c.opts.Observer.ActorsLive(len(m.keys))
		}
		m.closeIfDrained()
	}
}

// child returns the PID of key's group actor, spawning it if needed.
func (m *manager) child(ctx actor.Context, key group.Key) *actor.PID {
	if ch, ok := m.c.registry.Load(key); ok {
		return ch.(*child).pid
	}
	depth := new(mailboxDepth)
	pid := ctx.SpawnPrefix(m.c.groupProps(key, depth), "group-")
	m.keys[pid.Id] = key
	m.c.registry.Store(key, &child{pid: pid, depth: depth})
	m.c.opts.Observer.ActorsLive(len(m.keys))
	return pid
}

func (m *manager) closeIfDrained() {
	if m.draining != nil && len(m.keys) == 0 {
		close(m.draining)
		m.draining = nil
	}
}

// groupProps builds the props of key's group actor: its own mailbox with a
// depth counter, the metrics and panic middlewares.
func (c *Coordinator) groupProps(key group.Key, depth *mailboxDepth) *actor.Props {
	return actor.PropsFromProducer(func() actor.Actor { return newGroupActor(c, key, depth) },
		actor.WithMailbox(actor.Unbounded(depth)),
		actor.WithReceiverMiddleware(c.observeMessages, answerPanics))
}

// mailboxDepth counts the messages posted to a mailbox and not yet handled.
// It is a protoactor mailbox middleware.
type mailboxDepth struct{ n atomic.Int64 }

func (d *mailboxDepth) MailboxStarted()     {}
func (d *mailboxDepth) MessagePosted(any)   { d.n.Add(1) }
func (d *mailboxDepth) MessageReceived(any) { d.n.Add(-1) }
func (d *mailboxDepth) MailboxEmpty()       {}
