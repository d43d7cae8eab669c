package httpapi_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	coordcluster "github.com/redis-stream-coordinator/coordinator/cluster"
	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	httpapi "github.com/redis-stream-coordinator/coordinator/http"
	"github.com/redis-stream-coordinator/coordinator/persistence"
)

// fakeCluster is a cluster whose every stream is placed on owner, as
// coordinator self (whose key pair is keys) sees it.
type fakeCluster struct {
	self, owner persistence.Peer
	keys        *coordcluster.ForwardKeys
	mu          sync.Mutex
	live        []persistence.Peer
	leaving     bool
	unreachable chan string // receives Unreachable's ids when non-nil
	refused     []string    // ForwardRefused's peer ids and causes, "id cause"
}

// newPeer is a coordinator of the fake clusters: its registry entry (its
// token the public key of its key pair) and its key pair.
func newPeer(id, url string) (persistence.Peer, *coordcluster.ForwardKeys) {
	k := coordcluster.NewForwardKeys()
	return persistence.Peer{ID: id, Token: k.Token(), URL: url}, k
}

func (c *fakeCluster) ForwardKey(peer persistence.Peer) []byte { return c.keys.With(peer) }
func (c *fakeCluster) ForwardRefused(peer persistence.Peer, cause string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.refused = append(c.refused, peer.ID+" "+cause)
}

func (c *fakeCluster) refusals() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.refused...)
}

func (c *fakeCluster) Self() persistence.Peer { return c.self }
func (c *fakeCluster) Route(_ group.Key, m coordcluster.Mark) coordcluster.Route {
	return coordcluster.Situation{Self: c.self, Placed: c.owner, Leaving: c.leaving, Serving: true}.Route(m)
}
func (c *fakeCluster) Live() []persistence.Peer {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.live
}

func (c *fakeCluster) setLive(live []persistence.Peer) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.live = live
}
func (c *fakeCluster) View(context.Context) (contract.ClusterView, error) {
	v := contract.ClusterView{Self: c.self.ID}
	for _, l := range c.Live() {
		v.Coordinators = append(v.Coordinators, contract.ClusterCoordinator{ID: l.ID, URL: l.URL, LeaseExpiresAt: l.ExpiresAt})
	}
	return v, nil
}
func (c *fakeCluster) Leaving() bool { return c.leaving }
func (c *fakeCluster) Unreachable(id string) {
	if c.unreachable != nil {
		c.unreachable <- id
	}
}

// pair is an owner coordinator serving on a real loopback server and a
// coordinator that forwards every group's requests to it.
type pair struct {
	owner, forwarder http.Handler
	ownerURL         string
}

func newPair(tb testing.TB, build func(httpapi.Cluster) http.Handler) *pair {
	tb.Helper()
	a, ka := newPeer("coord-a", "")
	b, kb := newPeer("coord-b", "http://coord-b.invalid")
	ownerCluster := &fakeCluster{self: a, owner: a, keys: ka}
	p := &pair{owner: build(ownerCluster)}
	srv := httptest.NewServer(p.owner)
	tb.Cleanup(srv.Close)
	a.URL, p.ownerURL = srv.URL, srv.URL
	ownerCluster.self, ownerCluster.owner = a, a
	live := []persistence.Peer{a, b}
	ownerCluster.live = live
	p.forwarder = build(&fakeCluster{self: b, owner: a, keys: kb, live: live})
	return p
}

// BenchmarkForwardedHeartbeat measures a heartbeat that reaches a
// coordinator that does not own the group (served in process, as
// BenchmarkHeartbeatVsNoop serves its requests) and is forwarded over a
// loopback connection to the owner, beside the same heartbeat served by
// the owner directly, in process ("direct") and over a loopback
// connection ("direct-http": the cost of one HTTP hop). cpu-ns/op counts
// both coordinators and the client: they share the process.
func BenchmarkForwardedHeartbeat(b *testing.B) {
	f := newBenchFleet(b, benchMembers)
	p := newPair(b, f.withCluster)
	paths := f.paths(heartbeatRoute)
	f.bench(b, "direct", p.owner, paths)
	f.bench(b, "direct-http", &httpHop{url: p.ownerURL, hc: http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 512}}}, paths)
	f.bench(b, "forwarded", p.forwarder, paths)
}

// httpHop serves a request by sending it to url over pooled connections.
type httpHop struct {
	url string
	hc  http.Client
}

func (h *httpHop) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	req, err := http.NewRequestWithContext(r.Context(), r.Method, h.url+r.URL.Path, r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	req.Header = r.Header
	resp, err := h.hc.Do(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
}
