package httpapi_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	coordcluster "github.com/redis-stream-coordinator/coordinator/cluster"
	"github.com/redis-stream-coordinator/coordinator/contract"
	httpapi "github.com/redis-stream-coordinator/coordinator/http"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/coordtest"
)

// seen records the requests a server received and the Authorization
// header of each.
type seen struct {
	mu    sync.Mutex
	auths []string
}

func (s *seen) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.auths = append(s.auths, r.Header.Get("Authorization"))
		s.mu.Unlock()
		h.ServeHTTP(w, r)
	})
}

func (s *seen) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.auths...)
}

// tlsPair is coord-b, served over TLS, which sees every group placed on
// coord-a, served as owner says (plain http or TLS); seen records what
// coord-a received.
type tlsPair struct {
	owner, forwarder *httptest.Server
	fwdCluster       *fakeCluster
	seen             *seen
}

func newTLSPair(t *testing.T, ownerTLS bool) *tlsPair {
	t.Helper()
	p := &tlsPair{seen: &seen{}}
	fp := newFakePair(t, coordtest.Options{TLS: ownerTLS, Handler: p.seen.wrap}, func(a *coordtest.Server) coordtest.Options {
		o := coordtest.Options{TLS: true}
		if ownerTLS {
			peerTLS := a.HTTP.Client().Transport.(*http.Transport).TLSClientConfig
			o.API = func(o *httpapi.Options) { o.PeerTLS = peerTLS }
		}
		return o
	})
	p.owner, p.forwarder, p.fwdCluster = fp.a.HTTP, fp.b.HTTP, fp.cb
	return p
}

// Issue 42 item 5: a coordinator that serves TLS forwards nothing to a
// coordinator that advertises a plain http URL: a heartbeat is answered
// RETRY and any other request 503 COORDINATOR_UNREACHABLE with a message
// that says why, neither naming that coordinator in X-Coordinator-Owner;
// that coordinator receives no request (so never the client's
// Authorization); each refusal is reported (logged once, counted: the
// cluster node's ForwardRefused), and GET /cluster shows the peer refused.
func TestNoForwardOverPlainHTTPWhileServingTLS(t *testing.T) {
	p := newTLSPair(t, false)
	hc := p.forwarder.Client()
	auth := basicAuth("member", "member-pw-5e1d")
	path, body := coordtest.JoinHeartbeat(t, ordersG, "m1")
	req := newReq(t, http.MethodPost, p.forwarder.URL+contract.BasePath+path, body)
	req.Header.Set("Authorization", auth)
	st, h, answer := send(t, hc, req)
	if st != http.StatusOK || !strings.Contains(answer, `"status":"RETRY"`) || h.Get(contract.OwnerHeader) != "" {
		t.Errorf("heartbeat: %d %v %s, want RETRY naming no owner", st, h, answer)
	}
	req = newReq(t, http.MethodGet, p.forwarder.URL+contract.BasePath+"/streams/orders/groups/g", "")
	req.Header.Set("Authorization", auth)
	st, h, answer = send(t, hc, req)
	if st != http.StatusServiceUnavailable || !strings.Contains(answer, `"errorCode":"COORDINATOR_UNREACHABLE"`) ||
		!strings.Contains(answer, "plain http") || h.Get(contract.OwnerHeader) != "" || h.Get("Retry-After") != "1" {
		t.Errorf("GET: %d %v %s, want 503 COORDINATOR_UNREACHABLE saying why, naming no owner", st, h, answer)
	}
	if got := p.seen.requests(); len(got) != 0 {
		t.Errorf("coord-a (plain http) received %d requests, Authorization %q", len(got), got)
	}
	if got := p.fwdCluster.refusals(); len(got) != 2 || got[0] != "coord-a "+coordcluster.InsecurePeer || got[1] != got[0] {
		t.Errorf("refusals reported: %q, want two for coord-a, %s", got, coordcluster.InsecurePeer)
	}
	st, _, answer = send(t, hc, newReq(t, http.MethodGet, p.forwarder.URL+contract.BasePath+contract.ClusterTemplate, ""))
	var v contract.ClusterView
	if err := json.Unmarshal([]byte(answer), &v); st != http.StatusOK || err != nil {
		t.Fatalf("GET /cluster: %d %s (%v)", st, answer, err)
	}
	for _, c := range v.Coordinators {
		want := map[string]string{"coord-a": coordcluster.InsecurePeer, "coord-b": ""}[c.ID]
		if c.ForwardingRefused != want {
			t.Errorf("GET /cluster shows %s forwardingRefused %q, want %q (%s)", c.ID, c.ForwardingRefused, want, answer)
		}
	}
}

// With both coordinators on TLS, the same requests are forwarded, with
// the client's Authorization, and nothing is refused.
func TestForwardOverTLSWhileServingTLS(t *testing.T) {
	p := newTLSPair(t, true)
	hc := p.forwarder.Client()
	auth := basicAuth("member", "member-pw-5e1d")
	path, body := coordtest.JoinHeartbeat(t, ordersG, "m1")
	req := newReq(t, http.MethodPost, p.forwarder.URL+contract.BasePath+path, body)
	req.Header.Set("Authorization", auth)
	if st, h, answer := send(t, hc, req); st != http.StatusOK || !strings.Contains(answer, `"status":"UNKNOWN_MEMBER_ID"`) || h.Get(contract.OwnerHeader) != p.owner.URL {
		t.Errorf("heartbeat: %d %v %s, want coord-a's answer", st, h, answer)
	}
	req = newReq(t, http.MethodGet, p.forwarder.URL+contract.BasePath+"/streams/orders/groups/g", "")
	req.Header.Set("Authorization", auth)
	if st, h, answer := send(t, hc, req); st != http.StatusNotFound || h.Get(contract.OwnerHeader) != p.owner.URL {
		t.Errorf("GET: %d %v %s, want coord-a's 404", st, h, answer)
	}
	var batch, proxied bool
	for _, a := range p.seen.requests() {
		batch = batch || a == ""       // the batch itself carries no credentials (its items do)
		proxied = proxied || a == auth // the proxied GET carries the client's
	}
	if !batch || !proxied || len(p.fwdCluster.refusals()) != 0 {
		t.Errorf("coord-a received %q; refusals %q", p.seen.requests(), p.fwdCluster.refusals())
	}
}
