package actors

import (
	"github.com/asynkron/protoactor-go/actor"

	"github.com/redis-stream-coordinator/coordinator/group"
)

// child is a registry entry: a group actor's PID and its mailbox depth.
type child struct {
	pid   *actor.PID
	depth *mailboxDepth
}

// passivate asks the manager to retire pid, the idle actor of a group that
// does not exist (so unknown keys do not keep actors alive).
type passivate struct {
	key group.Key
	pid *actor.PID
}

// retire tells a group actor that it left the registry: every request sent
// to it was queued before this message, and none will follow, so it can
// answer what it holds and stop.
type retire struct{}

// drain asks the manager to poison every group actor (each answers what is
// already queued, then stops) and to close done once none is left.
type drain struct{ done chan struct{} }

// manager is the GroupManager actor. It spawns one group actor per key as
// its child, publishes it in the System's registry, forwards the
// request that caused the spawn, and unpublishes children that terminate.
//
// Supervision is one-for-one with unlimited restarts: only the failing
// child restarts, and it is never stopped, because a stopped actor would
// drop the requests still queued in its mailbox without answering them.
type manager struct {
	c        *System
	keys     map[string]group.Key // child PID id → key
	draining chan struct{}        // closed once no child is left
	// retiring holds the requests for groups whose passivated actor has not
	// stopped yet; they go to the group's next actor, so that a group never
	// has two actors at once.
	retiring map[group.Key][]request
}

// Receive handles group requests sent before their actor existed, drain
// and child termination.
func (m *manager) Receive(ctx actor.Context) {
	switch msg := ctx.Message().(type) {
	case request:
		if held, ok := m.retiring[msg.GroupKey()]; ok {
			m.retiring[msg.GroupKey()] = append(held, msg)
			return
		}
		ctx.Send(m.child(ctx, msg.GroupKey()), msg)
	case drain:
		m.draining = msg.done
		for _, pid := range ctx.Children() {
			ctx.Poison(pid)
		}
		m.closeIfDrained()
	case passivate:
		m.unpublish(msg.key, msg.pid, func() {
			m.retiring[msg.key] = nil
			ctx.Send(msg.pid, retire{})
		})
	case *actor.Terminated:
		if key, ok := m.keys[msg.Who.Id]; ok {
			delete(m.keys, msg.Who.Id)
			m.unpublish(key, msg.Who, nil)
			m.c.opts.Observer.ActorsLive(len(m.keys))
			m.respawn(ctx, key)
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
	pid := ctx.SpawnPrefix(groupProps(m.c, key, depth), "group-")
	m.keys[pid.Id] = key
	m.c.registry.Store(key, &child{pid: pid, depth: depth})
	m.c.opts.Observer.ActorsLive(len(m.keys))
	return pid
}

// unpublish removes key's registry entry if it still names pid, then runs
// then (if any). It holds the System's send lock exclusively while it
// does, so every send that found pid in the registry has been queued in
// pid's mailbox before then runs, and no later send can find it.
func (m *manager) unpublish(key group.Key, pid *actor.PID, then func()) {
	ch, ok := m.c.registry.Load(key)
	if !ok || ch.(*child).pid.Id != pid.Id {
		return
	}
	m.c.mu.Lock()
	m.c.registry.Delete(key)
	m.c.mu.Unlock()
	if then != nil {
		then()
	}
}

// respawn hands the requests held while key's actor retired to a new
// actor, or answers them ErrTerminating when the coordinator is draining.
func (m *manager) respawn(ctx actor.Context, key group.Key) {
	held, ok := m.retiring[key]
	if !ok {
		return
	}
	delete(m.retiring, key)
	for _, msg := range held {
		if m.draining != nil {
			failRequest(msg, m.c.terminatingErr())
			continue
		}
		ctx.Send(m.child(ctx, key), msg)
	}
}

func (m *manager) closeIfDrained() {
	if m.draining != nil && len(m.keys) == 0 {
		close(m.draining)
		m.draining = nil
	}
}
