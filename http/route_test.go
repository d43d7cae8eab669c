package httpapi_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/julienschmidt/httprouter"

	"github.com/redis-stream-coordinator/coordinator/contract"
	httpapi "github.com/redis-stream-coordinator/coordinator/http"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/coordtest"
	"github.com/redis-stream-coordinator/coordinator/persistence"
)

// countingPair is coord-b, which sees every group placed on coord-a, and
// coord-a, which sees them placed on placedOnA's coordinator; each counts
// the requests its group routes' middleware chain ran for.
type countingPair struct {
	a, b           *httptest.Server
	chainA, chainB atomic.Int64
}

func newCountingPair(t *testing.T, placedOnA func(a persistence.Peer) persistence.Peer) *countingPair {
	t.Helper()
	p := &countingPair{}
	counting := func(n *atomic.Int64) httpapi.Middleware {
		return func(_ httpapi.Route, next httprouter.Handle) httprouter.Handle {
			return func(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
				n.Add(1)
				next(w, r, ps)
			}
		}
	}
	fp := newFakePair(t, coordtest.Options{API: func(o *httpapi.Options) { o.Middleware = []httpapi.Middleware{counting(&p.chainA)} }},
		func(*coordtest.Server) coordtest.Options {
			return coordtest.Options{API: func(o *httpapi.Options) { o.Middleware = []httpapi.Middleware{counting(&p.chainB)} }}
		})
	fp.ca.owner = placedOnA(fp.peerA)
	p.a, p.b = fp.a.HTTP, fp.b.HTTP
	return p
}

// A heartbeat forwarded to its owner passes the heartbeat route's
// middleware chain once, on the owner (authentication, audit, rate limits
// and metrics run there); the forwarder only routes it.
func TestForwardedHeartbeatPassesTheChainOnce(t *testing.T) {
	p := newCountingPair(t, func(a persistence.Peer) persistence.Peer { return a })
	path, body := coordtest.JoinHeartbeat(t, ordersG, "m1")
	st, h, answer := do(t, p.b, http.MethodPost, path, "", body)
	if st != http.StatusOK || !strings.Contains(answer, `"status":"UNKNOWN_MEMBER_ID"`) || h.Get(contract.OwnerHeader) != p.a.URL {
		t.Fatalf("heartbeat via coord-b: %d %s (owner %q)", st, answer, h.Get(contract.OwnerHeader))
	}
	if a, b := p.chainA.Load(), p.chainB.Load(); a != 1 || b != 0 {
		t.Errorf("middleware chain ran %d times on the owner, %d on the forwarder; want 1 and 0", a, b)
	}
}

// A proven forward of a group that the receiving coordinator sees placed
// on a third one is refused at its edge, naming that one, before any
// middleware runs: a heartbeat RETRY, any other request 503
// GROUP_OWNED_ELSEWHERE with Retry-After.
func TestProvenForwardOfAGroupPlacedElsewhereIsRefused(t *testing.T) {
	c := persistence.Peer{ID: "coord-c", URL: "http://coord-c.invalid"}
	p := newCountingPair(t, func(persistence.Peer) persistence.Peer { return c })
	path, body := coordtest.JoinHeartbeat(t, ordersG, "m1")
	st, h, answer := do(t, p.b, http.MethodPost, path, "", body)
	if st != http.StatusOK || !strings.Contains(answer, `"status":"RETRY"`) || h.Get(contract.OwnerHeader) != c.URL || h.Get("Retry-After") != "" {
		t.Errorf("heartbeat via coord-b: %d %v %s; want RETRY naming coord-c", st, h, answer)
	}
	st, h, answer = do(t, p.b, http.MethodGet, "/streams/orders/groups/g", "", "")
	if st != http.StatusServiceUnavailable || !strings.Contains(answer, `"errorCode":"GROUP_OWNED_ELSEWHERE"`) ||
		h.Get(contract.OwnerHeader) != c.URL || h.Get("Retry-After") != "1" {
		t.Errorf("GET via coord-b: %d %v %s; want 503 GROUP_OWNED_ELSEWHERE naming coord-c", st, h, answer)
	}
	if a, b := p.chainA.Load(), p.chainB.Load(); a != 0 || b != 0 {
		t.Errorf("middleware chain ran %d times on coord-a, %d on coord-b; want none", a, b)
	}
}
