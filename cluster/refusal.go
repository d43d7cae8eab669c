package cluster

import (
	"sync"

	"github.com/redis-stream-coordinator/coordinator/persistence"
)

// Causes of a forward refused before it left (ForwardRefused).
const (
	// InsecurePeer: this coordinator serves TLS and the coordinator the
	// request is placed on advertises a URL that is not https, so the
	// client's credentials would travel in clear (docs/cluster.md,
	// Trust model).
	InsecurePeer = "insecure_peer"
)

// ForwardObserver is implemented by an Observer that counts the forwards
// refused before they left (package metrics); the node calls it for each
// one when its Observer implements it.
type ForwardObserver interface {
	// ForwardRefused counts one forward refused for cause (InsecurePeer).
	ForwardRefused(cause string)
}

// refusal is the forwards refused to one peer: the URL it advertised,
// why, and how many since that URL was first refused.
type refusal struct {
	url, cause string
	count      int64
}

// refusalLog keeps the last refusal per peer id.
type refusalLog struct {
	mu   sync.Mutex
	last map[string]refusal
}

// add records a refusal of a forward to peer for cause and reports
// whether it is the first for that peer, URL and cause.
func (l *refusalLog) add(peer persistence.Peer, cause string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.last == nil {
		l.last = map[string]refusal{}
	}
	r, ok := l.last[peer.ID]
	first := !ok || r.url != peer.URL || r.cause != cause
	if first {
		r = refusal{url: peer.URL, cause: cause}
	}
	r.count++
	l.last[peer.ID] = r
	return first
}

// of returns the refusals of the live coordinators whose URL is still
// the one refused, by id (the others are dropped).
func (l *refusalLog) of(live []persistence.Peer) map[string]refusal {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[string]refusal{}
	for _, c := range live {
		if r, ok := l.last[c.ID]; ok && r.url == c.URL {
			out[c.ID] = r
		}
	}
	for id := range l.last {
		if _, ok := out[id]; !ok {
			delete(l.last, id)
		}
	}
	return out
}

// ForwardRefused reports a request that this node's HTTP layer did not
// forward to peer, the coordinator it is placed on, for cause: the first
// refusal of a peer (per advertised URL) is logged as a WARN, each is
// counted (ForwardObserver), and View shows the peer's refusals.
func (n *Node) ForwardRefused(peer persistence.Peer, cause string) {
	if n.refusals.add(peer, cause) {
		switch cause {
		case InsecurePeer:
			n.opts.Logger.Warn("cluster: not forwarding requests to a coordinator whose advertised URL is not https while this coordinator serves TLS "+
				"(the clients' credentials would travel in clear); they are answered 503 COORDINATOR_UNREACHABLE (heartbeats RETRY) until it advertises "+
				"an https URL (its coordinator.cluster.advertise-url, COORDINATOR_CLUSTER_ADVERTISE_URL)",
				"peer", peer.ID, "peerUrl", peer.URL, "id", n.opts.ID)
		default:
			n.opts.Logger.Warn("cluster: not forwarding requests to a coordinator", "peer", peer.ID, "peerUrl", peer.URL, "cause", cause, "id", n.opts.ID)
		}
	}
	if o, ok := n.opts.Observer.(ForwardObserver); ok {
		o.ForwardRefused(cause)
	}
}
