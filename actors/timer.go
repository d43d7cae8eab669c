package actors

import (
	"time"

	"github.com/redis-stream-coordinator/coordinator/group"
)

// dueTick is what a group actor's timer sends it when the group's next
// time-driven event is due. gen tells a stale timer's message (one that
// was re-armed or stopped meanwhile) from the current one.
type dueTick struct{ gen uint64 }

// NotInfluenceReceiveTimeout: a timer's tick does not keep the actor alive.
func (dueTick) NotInfluenceReceiveTimeout() {}

// groupTimer is a group actor's one timer. Only the actor's Receive uses
// it; the timer goroutine only sends dueTick.
type groupTimer struct {
	t   *time.Timer
	at  time.Time // when t fires; zero when nothing is armed
	gen uint64
}

// arm schedules a tick for when working next needs one (group.NextDue):
// just after its due instant, or within TickInterval while the bound is
// unknown or a migration waits on Redis. An armed timer that fires no
// later is kept; one that would fire later is replaced. It does nothing
// when the event loop is off, or the actor has not started or is stopping.
func (a *groupActor) arm() {
	if !a.c.opts.TickEnabled || a.self == nil || a.stopping {
		return
	}
	now := a.c.opts.Clock()
	due, poll := a.core.Due()
	var at time.Time
	switch {
	case due == 0:
		at = now.Add(a.c.opts.TickInterval)
	case due != group.Never:
		at = due.Time().Add(time.Millisecond) // lease expiry is strict
	}
	if p := now.Add(a.c.opts.TickInterval); poll && (at.IsZero() || p.Before(at)) {
		at = p
	}
	switch {
	case at.IsZero():
		a.disarm()
	case a.timer.t == nil || at.Before(a.timer.at):
		a.disarm()
		a.timer.gen++
		gen, self, root := a.timer.gen, a.self, a.c.system.Root
		a.timer.at = at
		a.timer.t = time.AfterFunc(max(at.Sub(now), 0), func() { root.Send(self, dueTick{gen: gen}) })
	}
}

// disarm stops the armed timer, if any.
func (a *groupActor) disarm() {
	if a.timer.t != nil {
		a.timer.t.Stop()
		a.timer.t, a.timer.at = nil, time.Time{}
	}
}

// fired reports whether d is the armed timer's tick, and forgets it.
func (a *groupActor) fired(d dueTick) bool {
	if d.gen != a.timer.gen || a.timer.t == nil {
		return false
	}
	a.timer.t, a.timer.at = nil, time.Time{}
	return true
}

// dueTickMessage is the Tick a fired timer runs.
func (a *groupActor) dueTickMessage() *tickMsg {
	return &tickMsg{routed: routed{Key: a.key}, Now: a.c.opts.Clock()}
}
