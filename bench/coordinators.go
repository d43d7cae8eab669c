package bench

import (
	"maps"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/redis-stream-coordinator/coordinator/client"
)

// Coordinators are the coordinators of a cluster as the members reach
// them. Spread: every heartbeat goes to a coordinator drawn at random
// among the live ones (a round-robin load balancer in front of them).
// Follow: a member sends to the coordinator its last answer named as the
// group's owner (X-Coordinator-Owner), as the Go client does, and to a
// random live one after a failure, a RETRY or when it knows no owner.
// Safe for concurrent use.
type Coordinators struct {
	owners bool                   // follow owners (else spread)
	live   atomic.Pointer[[]*API] // those a load balancer routes to
	// byRoot is every coordinator added, by Root (copied on write).
	byRoot atomic.Pointer[map[string]*API]
	mu     sync.Mutex // serializes SetLive
}

// NewCoordinators returns an empty set; follow selects owner following.
func NewCoordinators(follow bool) *Coordinators {
	c := &Coordinators{owners: follow}
	c.live.Store(&[]*API{})
	c.byRoot.Store(&map[string]*API{})
	return c
}

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

// route returns where a member that follows via (nil: none) sends its
// next heartbeat.
func (c *Coordinators) route(via *API) *API {
	if c.owners && via != nil {
		return via
	}
	live := *c.live.Load()
	return live[rand.IntN(len(live))]
}

// follow returns the coordinator the member follows after an answer with
// header h (nil when none arrived); ok is false after a failure or a
// RETRY, which sends the member back to the load balancer.
func (c *Coordinators) follow(h http.Header, ok bool) *API {
	if !c.owners || !ok || h == nil {
		return nil
	}
	owner := h.Get(client.OwnerHeader)
	if owner == "" {
		return nil
	}
	return (*c.byRoot.Load())[owner]
}
