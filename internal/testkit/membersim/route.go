package membersim

import (
	"fmt"
	"net/http"

	"github.com/redis-stream-coordinator/coordinator/contract"
)

// Routing is how a simulated member chooses, among several coordinators
// serving its group, the one its next heartbeat goes to.
type Routing string

const (
	// Spread sends every heartbeat to a live coordinator drawn at random,
	// as a round-robin load balancer in front of them would; a
	// coordinator that does not own the group forwards the heartbeat.
	Spread Routing = "spread"
	// Follow sends heartbeats to the coordinator the last answer named as
	// the group's owner (contract.OwnerHeader), as the Go client does,
	// for as long as it answers; see Route.
	Follow Routing = "follow"
)

// ParseRouting returns the Routing named s ("spread" or "follow").
func ParseRouting(s string) (Routing, error) {
	switch r := Routing(s); r {
	case Spread, Follow:
		return r, nil
	}
	return "", fmt.Errorf("routing %q: want %s or %s", s, Spread, Follow)
}

// Route is one member's choice of coordinator: the owner it follows, if
// any. The zero Route follows no owner. Under Follow the member sends to
// the owner named by its last answer and falls back to any live
// coordinator after a heartbeat that got no answer (a transport failure,
// an HTTP error, a lost answer), after an answer that names no owner, and
// after a RETRY unless that RETRY names another coordinator as the owner
// (one that refuses because the group moved points the member there).
// A Route is not safe for concurrent use: it belongs to one member.
type Route struct {
	owner string // root (scheme://host:port) of the owner followed; "" none
}

// Target returns the root (scheme://host:port) of the coordinator the
// member's next heartbeat goes to under routing: the owner it follows, or
// "" when any live coordinator will do (always "" under Spread).
func (r *Route) Target(routing Routing) string {
	if routing != Follow {
		return ""
	}
	return r.owner
}

// Answered records the answer, with status st and header h, to a
// heartbeat sent to the coordinator at root to.
func (r *Route) Answered(to string, st contract.HeartbeatStatus, h http.Header) {
	owner := h.Get(contract.OwnerHeader)
	if st == contract.StatusRetry && owner == to {
		owner = ""
	}
	r.owner = owner
}

// Failed records a heartbeat that got no answer the member could use.
func (r *Route) Failed() { r.owner = "" }
