package httpapi_test

import (
	"cmp"
	"context"
	"io"
	"net/http"
	"sync"
	"testing"

	coordcluster "github.com/redis-stream-coordinator/coordinator/cluster"
	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	httpapi "github.com/redis-stream-coordinator/coordinator/http"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/coordtest"
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

// fakePair is coord-a and coord-b: two coordinators, each of its own
// (internal/testkit/coordtest, on its own memory store), each seeing the
// cluster through a fake (ca, cb) that a test may set further; peerA and
// peerB are their registry entries, at the URLs they serve at. Both see
// both live and every group placed on coord-a: coord-b forwards every
// group's requests to coord-a.
type fakePair struct {
	a, b         *coordtest.Server
	peerA, peerB persistence.Peer
	ca, cb       *fakeCluster
}

// newFakePair starts coord-a with oa, then coord-b with the options ob
// returns for coord-a (nil: the defaults). Each API's Cluster is its fake
// (a test's Options.API runs after that is set).
func newFakePair(tb testing.TB, oa coordtest.Options, ob func(a *coordtest.Server) coordtest.Options) *fakePair {
	tb.Helper()
	p := &fakePair{ca: &fakeCluster{}, cb: &fakeCluster{}}
	p.a = coordtest.Start(tb, seeing(p.ca, "coord-a", oa))
	var o coordtest.Options
	if ob != nil {
		o = ob(p.a)
	}
	p.b = coordtest.Start(tb, seeing(p.cb, "coord-b", o))
	var ka, kb *coordcluster.ForwardKeys
	p.peerA, ka = newPeer(p.a.ID, p.a.URL)
	p.peerB, kb = newPeer(p.b.ID, p.b.URL)
	live := []persistence.Peer{p.peerA, p.peerB}
	p.ca.self, p.ca.owner, p.ca.keys = p.peerA, p.peerA, ka
	p.ca.setLive(live)
	p.cb.self, p.cb.owner, p.cb.keys = p.peerB, p.peerA, kb
	p.cb.setLive(live)
	return p
}

// seeing is o for coordinator id (unless o names one) whose API sees the
// cluster as c.
func seeing(c *fakeCluster, id string, o coordtest.Options) coordtest.Options {
	o.ID = cmp.Or(o.ID, id)
	api := o.API
	o.API = func(ao *httpapi.Options) {
		ao.Cluster = c
		if api != nil {
			api(ao)
		}
	}
	return o
}

// BenchmarkForwardedHeartbeat measures a heartbeat that reaches a
// coordinator that does not own the group (served in process, as
// BenchmarkHeartbeatVsNoop serves its requests) and is forwarded over a
// loopback connection to the owner, beside the same heartbeat served by
// the owner directly, in process ("direct") and over a loopback
// connection ("direct-http": the cost of one HTTP hop). cpu-ns/op counts
// both coordinators and the client: they share the process.
func BenchmarkForwardedHeartbeat(b *testing.B) {
	p := newFakePair(b, benchOptions(coordtest.Options{}), func(*coordtest.Server) coordtest.Options {
		return benchOptions(coordtest.Options{})
	})
	f := newBenchFleet(b, p.a, benchMembers)
	paths := f.paths(heartbeatRoute)
	f.bench(b, "direct", p.a.API, paths)
	f.bench(b, "direct-http", &httpHop{url: p.a.URL, hc: http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 512}}}, paths)
	f.bench(b, "forwarded", p.b.API, paths)
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
