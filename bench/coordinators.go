package bench

import (
	"maps"
	"math/rand/v2"
	"sync"
	"sync/atomic"

	"github.com/redis-stream-coordinator/coordinator/internal/testkit/membersim"
)

// Coordinators are the coordinators of a cluster as the members reach
// them, with the members' routing (membersim.Routing): Spread sends every
// heartbeat to a coordinator drawn at random among the live ones (a
// round-robin load balancer in front of them); Follow sends a member's
// heartbeats to the owner its last answer named (membersim.Route), as the
// Go client does. Safe for concurrent use.
type Coordinators struct {
	routing atomic.Value           // membersim.Routing
	live    atomic.Pointer[[]*API] // those a load balancer routes to
	// byRoot is every coordinator added, by Root (copied on write).
	byRoot atomic.Pointer[map[string]*API]
	mu     sync.Mutex // serializes SetLive
}

// NewCoordinators returns an empty set with the members' routing.
func NewCoordinators(routing membersim.Routing) *Coordinators {
	c := &Coordinators{}
	c.routing.Store(routing)
	c.live.Store(&[]*API{})
	c.byRoot.Store(&map[string]*API{})
	return c
}

// SetRouting changes the members' routing from their next heartbeat on.
func (c *Coordinators) SetRouting(r membersim.Routing) { c.routing.Store(r) }

// SetLive adds a to the coordinators a load balancer routes to, or removes
// it (a stopping or killed coordinator).
func (c *Coordinators) SetLive(a *API, live bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	roots := maps.Clone(*c.byRoot.Load())
	roots[a.Root] = a
	c.byRoot.Store(&roots)
	var next []*API
	for _, x := range *c.live.Load() {
		if x != a {
			next = append(next, x)
		}
	}
	if live {
		next = append(next, a)
	}
	c.live.Store(&next)
}

// route returns where a member routed by r sends its next heartbeat: the
// coordinator it follows (even one taken out of the load balancer: the
// member learns that it is gone when the heartbeat fails), or a live one
// at random.
func (c *Coordinators) route(r *membersim.Route) *API {
	if a, ok := (*c.byRoot.Load())[r.Target(c.routing.Load().(membersim.Routing))]; ok {
		return a
	}
	live := *c.live.Load()
	return live[rand.IntN(len(live))]
}
