package httpapi_test

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	coordcluster "github.com/redis-stream-coordinator/coordinator/cluster"
	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	httpapi "github.com/redis-stream-coordinator/coordinator/http"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/coordtest"
	"github.com/redis-stream-coordinator/coordinator/persistence"
	"github.com/redis-stream-coordinator/coordinator/ratelimit"
	"github.com/redis-stream-coordinator/coordinator/security"
)

// Only a coordinator may say that a request was forwarded (docs/cluster.md,
// Trust model).

// twoNodes is two coordinators, coord-a and coord-b, each with a real
// cluster node, actor system and API on a loopback server, over one
// memory store (what one Redis is to coordinator processes).
type twoNodes struct {
	backend *coordtest.Backend
	a, b    *coordtest.Server
}

func newTwoNodes(t *testing.T) *twoNodes {
	t.Helper()
	backend := coordtest.Memory()
	cs := coordtest.StartCluster(t, 2, coordtest.Options{Backend: backend})
	return &twoNodes{backend: backend, a: cs[0], b: cs[1]}
}

// freeGroupOnA creates a group placed on coord-a through coord-a, then
// clears its ownership record behind coord-a's back, as while coord-a
// restarts: the group is then there for the taking, by coord-a or by a
// coordinator coord-a forwards it to.
func (c *twoNodes) freeGroupOnA(t *testing.T) group.Key {
	t.Helper()
	key := group.Key{StreamPrefix: c.a.PlacedOn("orders", c.a, c.b), ConsumerGroup: "g"}
	req := newReq(t, http.MethodPost, c.a.URL+"/coord/v1/streams/"+key.StreamPrefix+"/groups/g", `{"initialShardCount":4,"requestedBy":"test"}`)
	if st, _, body := send(t, http.DefaultClient, req); st != http.StatusCreated {
		t.Fatalf("create %s through coord-a: %d %s", key, st, body)
	}
	c.release(t, key)
	return key
}

// release clears key's ownership record behind its owner's back.
func (c *twoNodes) release(t *testing.T, key group.Key) {
	t.Helper()
	if err := c.backend.Handle().Release(t.Context(), key, c.a.Node.Self()); err != nil {
		t.Fatal(err)
	}
}

// bTookOver reports whether coord-b ever acquired key: it holds its
// ownership record, or has handed it over since (its handover log; a
// coordinator hands over what is not placed on it).
func (c *twoNodes) bTookOver(t *testing.T, key group.Key) bool {
	t.Helper()
	v, err := c.b.Node.View(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range v.Handovers {
		if h.StreamPrefix == key.StreamPrefix && h.ConsumerGroup == key.ConsumerGroup {
			return true
		}
	}
	owners, err := c.backend.Handle().Owners(t.Context(), []group.Key{key})
	if err != nil {
		t.Fatal(err)
	}
	return owners[0].Coordinator == "coord-b"
}

func newReq(t *testing.T, method, url, body string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	return req
}

// send sends req with hc and returns the answer's status, header and body.
func send(t *testing.T, hc *http.Client, req *http.Request) (int, http.Header, string) {
	t.Helper()
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, string(b)
}

// A client that adds X-Coordinator-Forwarded-By naming the coordinator a
// group is placed on, while that coordinator holds no ownership record
// (it restarts), does not make another coordinator take the group: the
// mark has no proof, so it is removed and the request goes where one
// without it goes, to the group's coordinator, which answers it. The same
// request with coord-a's proof is served where it landed, and that
// coordinator takes the group: what stopped the forgery is the missing
// proof.
func TestForgedForwardMarkMovesNoGroup(t *testing.T) {
	c := newTwoNodes(t)
	key := c.freeGroupOnA(t)
	forged := func(req *http.Request) *http.Request {
		req.Header.Set(httpapi.HeaderForwardedBy, "coord-a")
		return req
	}
	for i := range 4 {
		path, body := coordtest.JoinHeartbeat(t, key, fmt.Sprintf("m%d", i))
		req := newReq(t, http.MethodPost, c.b.Base+path, body)
		st, h, answer := send(t, http.DefaultClient, forged(req))
		if st != http.StatusOK || h.Get(contract.OwnerHeader) != c.a.URL {
			t.Errorf("forged heartbeat %d: %d %s (owner %q)", i, st, answer, h.Get(contract.OwnerHeader))
		}
	}
	groupURL := c.b.URL + "/coord/v1/streams/" + key.StreamPrefix + "/groups/g"
	if st, h, answer := send(t, http.DefaultClient, forged(newReq(t, http.MethodGet, groupURL, ""))); st != http.StatusOK || h.Get(contract.OwnerHeader) != c.a.URL {
		t.Errorf("forged GET: %d %s (owner %q)", st, answer, h.Get(contract.OwnerHeader))
	}
	if c.bTookOver(t, key) {
		t.Fatal("coord-b took the group for forged marks")
	}

	c.release(t, key)
	path, body := coordtest.JoinHeartbeat(t, key, "m9")
	req := newReq(t, http.MethodPost, c.b.Base+path, body)
	httpapi.SignForwarded(req, "coord-a", c.a.Node.ForwardKey(c.b.Node.Self()), "coord-b", time.Now(), []byte(body))
	if st, h, answer := send(t, http.DefaultClient, req); st != http.StatusOK || h.Get(contract.OwnerHeader) != c.b.URL {
		t.Errorf("heartbeat coord-a forwarded: %d %s (owner %q)", st, answer, h.Get(contract.OwnerHeader))
	}
	if !c.bTookOver(t, key) {
		t.Error("coord-b did not take the group coord-a forwarded")
	}
}

// A mark is honoured only with a proof of this very request, to this
// coordinator, from a live coordinator, signed within the window with the
// key the two share: a request whose proof was made for another
// coordinator, another URI or body, outside the window or with another
// key (the sender's stored token among them) is forwarded to the group's
// owner, as one without a mark; a request with coord-a's proof is served
// by coord-b, which coord-a forwarded it to.
func TestForwardMarkProofs(t *testing.T) {
	e := newForwardEnv(t, nil)
	createOn(t, e.owner, "orders", 4)
	a := e.ownerCluster.Self()
	b := e.fwdCluster.Self()
	now := time.Now()
	for _, tc := range []struct {
		name string
		mark func(req *http.Request, body []byte)
	}{
		{"without proof", func(req *http.Request, _ []byte) { req.Header.Set(httpapi.HeaderForwardedBy, a.ID) }},
		{"for another coordinator", func(req *http.Request, body []byte) { httpapi.SignForwarded(req, a.ID, e.aKey(), "coord-c", now, body) }},
		{"over another body", func(req *http.Request, body []byte) {
			httpapi.SignForwarded(req, a.ID, e.aKey(), b.ID, now, append(body, ' '))
		}},
		{"over another body of the same length", func(req *http.Request, body []byte) {
			httpapi.SignForwarded(req, a.ID, e.aKey(), b.ID, now, bytes.Repeat([]byte{' '}, len(body)))
		}},
		{"for another URI", func(req *http.Request, body []byte) {
			httpapi.SignForwarded(req, a.ID, e.aKey(), b.ID, now, body)
			req.URL.RawQuery = "x=1"
		}},
		{"before the window", func(req *http.Request, body []byte) {
			httpapi.SignForwarded(req, a.ID, e.aKey(), b.ID, now.Add(-httpapi.ForwardWindow-time.Minute), body)
		}},
		{"after the window", func(req *http.Request, body []byte) {
			httpapi.SignForwarded(req, a.ID, e.aKey(), b.ID, now.Add(httpapi.ForwardWindow+time.Minute), body)
		}},
		{"with another key", func(req *http.Request, body []byte) {
			httpapi.SignForwarded(req, a.ID, coordcluster.NewForwardKeys().With(b), b.ID, now, body)
		}},
		{"keyed by the sender's stored token", func(req *http.Request, body []byte) {
			httpapi.SignForwarded(req, a.ID, []byte(a.Token), b.ID, now, body)
		}},
		{"by no live coordinator", func(req *http.Request, body []byte) {
			httpapi.SignForwarded(req, "coord-x", e.aKey(), b.ID, now, body)
		}},
		{"with a malformed signature", func(req *http.Request, body []byte) {
			httpapi.SignForwarded(req, a.ID, e.aKey(), b.ID, now, body)
			req.Header.Set(httpapi.HeaderForwardSignature, "not-a-signature")
		}},
	} {
		reached := e.reached.Load()
		path, body := coordtest.JoinHeartbeat(t, ordersG, "m1")
		req := newReq(t, http.MethodPost, e.forwarder.URL+contract.BasePath+path, body)
		tc.mark(req, []byte(body))
		st, h, answer := send(t, http.DefaultClient, req)
		if st != http.StatusOK || !strings.Contains(answer, `"status":"OK"`) || h.Get(contract.OwnerHeader) != e.owner.URL || e.reached.Load() != reached+1 {
			t.Errorf("mark %s: %d %s (owner %q), want the owner's answer", tc.name, st, answer, h.Get(contract.OwnerHeader))
		}
	}
	reached := e.reached.Load()
	path, body := coordtest.JoinHeartbeat(t, ordersG, "m1")
	req := newReq(t, http.MethodPost, e.forwarder.URL+contract.BasePath+path, body)
	httpapi.SignForwarded(req, a.ID, e.aKey(), b.ID, time.Now(), []byte(body))
	if st, h, answer := send(t, http.DefaultClient, req); st != http.StatusOK || h.Get(contract.OwnerHeader) != b.URL || e.reached.Load() != reached {
		t.Errorf("coord-a's proof: %d %s (owner %q), want coord-b's own answer", st, answer, h.Get(contract.OwnerHeader))
	}
}

// Two coordinators that cannot check each other's marks (each knows an
// earlier run of the other) and each see the group placed on the other
// forward a request once each: the second finds a mark it cannot prove
// on a request the first already forwarded after removing one, and
// refuses it naming the coordinator it sees the group placed on (503
// GROUP_OWNED_ELSEWHERE with Retry-After), rather than sending it back or
// serving a group placed elsewhere. A client's HeaderUnprovenMark only
// gets its request refused so where it landed.
func TestUnprovenMarksDoNotLoop(t *testing.T) {
	var reachedA, reachedB atomic.Int64
	count := func(n *atomic.Int64) func(bool) { return func(bool) { n.Add(1) } }
	p := newFakePair(t, coordtest.Options{API: func(o *httpapi.Options) { o.Forwarded = count(&reachedA) }},
		func(*coordtest.Server) coordtest.Options {
			return coordtest.Options{API: func(o *httpapi.Options) { o.Forwarded = count(&reachedB) }}
		})
	srvA, srvB, a, b := p.a.HTTP, p.b.HTTP, p.peerA, p.peerB
	oldA, _ := newPeer("coord-a", srvA.URL)
	oldB, _ := newPeer("coord-b", srvB.URL)
	p.ca.owner = b
	p.ca.setLive([]persistence.Peer{a, oldB})
	p.cb.setLive([]persistence.Peer{oldA, b})

	refusedNamingB := func(st int, h http.Header, answer string) bool {
		return st == http.StatusServiceUnavailable && strings.Contains(answer, `"errorCode":"GROUP_OWNED_ELSEWHERE"`) &&
			h.Get(contract.OwnerHeader) == b.URL && h.Get("Retry-After") == "1"
	}
	st, h, answer := do(t, srvA, http.MethodGet, "/streams/orders/groups/g", "", "")
	if !refusedNamingB(st, h, answer) || reachedA.Load() != 1 || reachedB.Load() != 1 {
		t.Errorf("GET via coord-a: %d %v %s, forwards: coord-a %d, coord-b %d; want coord-a's refusal naming coord-b after one forward each",
			st, h, answer, reachedA.Load(), reachedB.Load())
	}
	req := newReq(t, http.MethodGet, srvA.URL+"/coord/v1/streams/orders/groups/g", "")
	req.Header.Set(httpapi.HeaderForwardedBy, b.ID)
	req.Header.Set(httpapi.HeaderUnprovenMark, b.ID)
	if st, h, answer := send(t, http.DefaultClient, req); !refusedNamingB(st, h, answer) || reachedA.Load() != 1 {
		t.Errorf("client's unproven mark: %d %v %s, coord-a forwards %d; want coord-a's refusal naming coord-b and no forward", st, h, answer, reachedA.Load())
	}
}

// Issue 42 item 8: a client that sends a mark nobody can prove with
// X-Coordinator-Unproven-Mark (as a coordinator that forwards such a
// request does) to a coordinator that does not own the group gets its
// requests refused there, naming the owner, and that coordinator never
// takes the group, even while its ownership record is free (its owner
// restarts): heartbeats RETRY, everything else, reads included, 503
// GROUP_OWNED_ELSEWHERE. The same request without the header is
// forwarded to the owner.
func TestUnprovenMarkServesNoGroupPlacedElsewhere(t *testing.T) {
	c := newTwoNodes(t)
	key := c.freeGroupOnA(t)
	unproven := func(req *http.Request) *http.Request {
		req.Header.Set(httpapi.HeaderForwardedBy, "junk")
		req.Header.Set(httpapi.HeaderUnprovenMark, "x")
		return req
	}
	groupURL := c.b.URL + "/coord/v1/streams/" + key.StreamPrefix + "/groups/g"
	for i := range 3 {
		path, body := coordtest.JoinHeartbeat(t, key, fmt.Sprintf("m%d", i))
		st, h, answer := send(t, http.DefaultClient, unproven(newReq(t, http.MethodPost, c.b.Base+path, body)))
		if st != http.StatusOK || !strings.Contains(answer, `"status":"RETRY"`) || h.Get(contract.OwnerHeader) != c.a.URL {
			t.Errorf("heartbeat %d with an unproven mark: %d %s (owner %q), want RETRY naming coord-a", i, st, answer, h.Get(contract.OwnerHeader))
		}
	}
	for _, rq := range []struct{ method, url, body string }{
		{http.MethodGet, groupURL, ""},
		{http.MethodPost, groupURL + "/scale", `{"targetShardCount":8,"requestedBy":"test","reason":"probe"}`},
		{http.MethodDelete, groupURL, `{"requestedBy":"test","reason":"probe","force":true}`},
	} {
		st, h, answer := send(t, http.DefaultClient, unproven(newReq(t, rq.method, rq.url, rq.body)))
		if st != http.StatusServiceUnavailable || !strings.Contains(answer, `"errorCode":"GROUP_OWNED_ELSEWHERE"`) || h.Get(contract.OwnerHeader) != c.a.URL {
			t.Errorf("%s %s with an unproven mark: %d %s (owner %q), want 503 GROUP_OWNED_ELSEWHERE naming coord-a", rq.method, rq.url, st, answer, h.Get(contract.OwnerHeader))
		}
	}
	if c.bTookOver(t, key) {
		t.Fatal("coord-b took a group placed on coord-a for an unproven mark")
	}
	req := newReq(t, http.MethodGet, groupURL, "")
	req.Header.Set(httpapi.HeaderForwardedBy, "junk")
	if st, h, answer := send(t, http.DefaultClient, req); st != http.StatusOK || h.Get(contract.OwnerHeader) != c.a.URL {
		t.Errorf("GET with a junk mark alone: %d %s (owner %q), want coord-a's answer", st, answer, h.Get(contract.OwnerHeader))
	}
}

// clientFrom is an HTTP client whose connections leave from ip (a
// loopback address: 127.0.0.0/8 is all local on Linux), so that a server
// sees each such client at an address of its own.
func clientFrom(t *testing.T, ip string) *http.Client {
	t.Helper()
	dialer := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	transport := &http.Transport{DialContext: dialer.DialContext}
	t.Cleanup(transport.CloseIdleConnections)
	return &http.Client{Transport: transport}
}

// Failed authentications that a coordinator forwards count against the
// client's address as that coordinator saw it, never against the
// forwarding coordinator's: a client that used up its failures through a
// non-owner is refused 429 there (its right password still passes), and
// another client through the same
// non-owner still authenticates, for proxied requests and batched
// heartbeats alike. X-Forwarded-For of a request no coordinator proved it
// forwarded (even with a forged mark) is the client's to choose and is
// not believed.
func TestForwardedAuthFailuresCountAgainstClient(t *testing.T) {
	const password = "alice-pw-2b7e"
	users, err := security.NewUsers(security.Options{
		Users:       []security.User{{Username: "alice", Password: password, Roles: []string{string(security.RoleRead), string(security.RoleMember)}}},
		TokenSecret: "forward-throttle-secret",
	})
	if err != nil {
		t.Fatal(err)
	}
	perAddress, err := ratelimit.New(3, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	e := newForwardEnv(t, &httpapi.Security{Users: users, AuthenticateMemberAPI: true, FailedAuthPerAddress: perAddress})
	hbPath, hbBody := coordtest.JoinHeartbeat(t, ordersG, "m1")
	routes := []struct {
		name   string
		method string
		path   string
		body   string
		ok     int // the status of an authenticated request
	}{
		{"proxied GET", http.MethodGet, "/streams/orders/groups/g", "", http.StatusNotFound},
		{"batched heartbeat", http.MethodPost, hbPath, hbBody, http.StatusOK},
	}
	call := func(hc *http.Client, base, method, path, auth, body string, header http.Header) int {
		t.Helper()
		req := newReq(t, method, base+"/coord/v1"+path, body)
		req.Header.Set("Authorization", auth)
		for k, v := range header {
			req.Header[k] = v
		}
		st, _, _ := send(t, hc, req)
		return st
	}
	for i, rt := range routes {
		failing := clientFrom(t, fmt.Sprintf("127.0.0.%d", 10+2*i))
		other := clientFrom(t, fmt.Sprintf("127.0.0.%d", 11+2*i))
		for n := range 3 {
			if st := call(failing, e.forwarder.URL, rt.method, rt.path, basicAuth("alice", "wrong"), rt.body, nil); st != http.StatusUnauthorized {
				t.Fatalf("%s: wrong password %d through the forwarder: %d", rt.name, n+1, st)
			}
		}
		if st := call(failing, e.forwarder.URL, rt.method, rt.path, basicAuth("alice", "wrong"), rt.body, nil); st != http.StatusTooManyRequests {
			t.Errorf("%s: the failing client's 4th wrong password: %d, want 429", rt.name, st)
		}
		if st := call(failing, e.forwarder.URL, rt.method, rt.path, basicAuth("alice", password), rt.body, nil); st != rt.ok {
			t.Errorf("%s: the failing client's right password: %d, want %d (never locked out)", rt.name, st, rt.ok)
		}
		if st := call(other, e.forwarder.URL, rt.method, rt.path, basicAuth("alice", password), rt.body, nil); st != rt.ok {
			t.Errorf("%s: another client through the same forwarder: %d, want %d", rt.name, st, rt.ok)
		}
	}

	// Straight to the owner, with a forged mark: its X-Forwarded-For
	// changes nothing, the client's own address is throttled.
	direct := clientFrom(t, "127.0.0.20")
	forged := func(xff string) http.Header {
		return http.Header{httpapi.HeaderForwardedBy: {"coord-b"}, "X-Forwarded-For": {xff}}
	}
	for n := range 3 {
		if st := call(direct, e.owner.URL, http.MethodGet, "/streams/orders/groups/g", basicAuth("alice", "wrong"), "", forged(fmt.Sprintf("203.0.113.%d", n))); st != http.StatusUnauthorized {
			t.Fatalf("wrong password %d with a forged mark: %d", n+1, st)
		}
	}
	if st := call(direct, e.owner.URL, http.MethodGet, "/streams/orders/groups/g", basicAuth("alice", "wrong"), "", forged("203.0.113.99")); st != http.StatusTooManyRequests {
		t.Errorf("a wrong password from the throttled address with another X-Forwarded-For: %d, want 429", st)
	}
}
