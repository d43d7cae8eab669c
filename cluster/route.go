package cluster

import (
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/persistence"
)

// Routing and fencing are two different things here.
//
// Routing decides where a request of a group is served: here, at the
// coordinator the group is placed on, or nowhere for now. Node.Route takes
// that decision once per request, at the HTTP edge, from this node's view
// of the placement; nothing after it decides again. Views of two nodes may
// differ for a moment, so routing alone cannot keep a group to one owner.
//
// Fencing keeps a group to one owner whatever the routing did: a node
// serves only while its registry lease cannot have ended (Serving), the
// store gives a group's ownership to one live coordinator at a time
// (Acquire, *NotOwnerError naming the holder), and every write of the
// group carries the owner's epoch, which the store checks
// (persistence.ErrNotOwner once another took it over). The group actor
// applies the fencing; it never looks at the placement.

// Decision is what Route decides for a request.
type Decision uint8

const (
	// Local: serve the request here.
	Local Decision = iota
	// Forward: send the request to Route.Owner, which serves it.
	Forward
	// Refuse: answer Route.Reason (a *NotOwnerError naming the owner, or
	// ErrNotServing) and serve nothing.
	Refuse
)

// Mark is what a request tells about the coordinator that sent it, as far
// as this coordinator could prove it. Only the authenticated forwarding
// path of the HTTP layer sets it (an HMAC over the request keyed by the
// sender's registry token); a mark a client could have forged is never a
// Mark.
type Mark struct {
	// By is the live coordinator that proved it forwarded the request ("":
	// none did). It disclaims the group: it is leaving, or its view of the
	// placement differs from this node's for a moment.
	By string
	// Again: the request carried a mark this coordinator could not prove
	// and another coordinator already forwarded it after removing such a
	// mark (or a client says so: nothing proves it). It is not forwarded
	// again, so that two coordinators that cannot check each other's marks
	// (and whose views of the placement differ) do not send it back and
	// forth: it is served here only when its group is placed here, and
	// refused naming the owner otherwise. It never makes a coordinator
	// serve a group placed on another.
	Again bool
}

// Route is a routing decision: its Decision, the coordinator that owns
// the group or should (Owner: the one the group is placed on, or this node
// when it serves a request placed here or disclaimed by its forwarder),
// and the refusal (Reason) when it is Refuse.
type Route struct {
	Decision Decision
	Owner    persistence.Peer
	Reason   error
}

// Route decides where a request for key's group, marked m, is served, on
// this node's view (Situation.Route).
func (n *Node) Route(key group.Key, m Mark) Route {
	placed, _ := n.Placed(key.StreamPrefix)
	return Situation{Self: n.Self(), Placed: placed, Leaving: n.Leaving(), Serving: n.Serving()}.Route(m)
}

// Situation is what a routing decision rests on: this coordinator (Self),
// the coordinator the group is placed on (Placed; zero when no live
// coordinator is a candidate), and whether this one is Leaving the cluster
// or Serving.
type Situation struct {
	Self, Placed     persistence.Peer
	Leaving, Serving bool
}

// Route is the routing rule:
//
//   - A leaving coordinator forwards every request to the coordinator the
//     group is placed on now, and refuses (ErrNotServing) when there is
//     none or the request may not travel again.
//   - A request that may not travel again (Again) is served here when its
//     group is placed here, and refused naming the owner otherwise: a
//     mark nobody proved never makes a coordinator serve a group placed
//     on another.
//   - A request without a proven mark whose group is placed elsewhere is
//     forwarded there.
//   - A proven forward is served here when the group is placed here or on
//     the coordinator that forwarded it (which disclaims it); otherwise it
//     is refused naming the owner (the views differ: the client retries).
//   - Whatever is served here needs this coordinator to be Serving: else
//     ErrNotServing, naming no owner.
func (s Situation) Route(m Mark) Route {
	placed := s.Placed
	if placed.ID == "" {
		placed = s.Self
	}
	elsewhere := placed.ID != s.Self.ID
	switch {
	case s.Leaving:
		if elsewhere && !m.Again {
			return Route{Decision: Forward, Owner: placed}
		}
		return Route{Decision: Refuse, Owner: s.Self, Reason: ErrNotServing}
	case m.Again && elsewhere:
		return Route{Decision: Refuse, Owner: placed, Reason: &NotOwnerError{Owner: placed}}
	case elsewhere && m.By == "":
		return Route{Decision: Forward, Owner: placed}
	case elsewhere && placed.ID != m.By:
		return Route{Decision: Refuse, Owner: placed, Reason: &NotOwnerError{Owner: placed}}
	}
	if !s.Serving {
		return Route{Decision: Refuse, Owner: s.Self, Reason: ErrNotServing}
	}
	return Route{Decision: Local, Owner: s.Self}
}
