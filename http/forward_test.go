package httpapi_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	httpapi "github.com/redis-stream-coordinator/coordinator/http"
	"github.com/redis-stream-coordinator/coordinator/internal/batchwire"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/coordtest"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/membersim"
	"github.com/redis-stream-coordinator/coordinator/security"
)

// Forwarding between two coordinators (docs/cluster.md, Forwarding):
// coord-a owns every group and serves on a loopback server; coord-b
// forwards every group's requests to it. Each runs its own actor system
// on its own memory store (newFakePair), so an answer that names a group
// coord-a created was served by coord-a.

// forwardEnv is the two coordinators.
type forwardEnv struct {
	owner, forwarder *httptest.Server
	ownerCluster     *fakeCluster
	fwdCluster       *fakeCluster
	reached, failed  atomic.Int64 // forwards counted by coord-b
}

// bKey is the key coord-b signs its marks to coord-a with.
func (e *forwardEnv) bKey() []byte { return e.fwdCluster.ForwardKey(e.ownerCluster.Self()) }

// aKey is the key coord-a signs its marks to coord-b with.
func (e *forwardEnv) aKey() []byte { return e.ownerCluster.ForwardKey(e.fwdCluster.Self()) }

// newForwardEnv starts both; sec, when non-nil, secures coord-a only.
// coord-b reports the coordinators it finds unreachable.
func newForwardEnv(t *testing.T, sec *httpapi.Security) *forwardEnv {
	t.Helper()
	e := &forwardEnv{}
	p := newFakePair(t, coordtest.Options{API: func(o *httpapi.Options) { o.Security = sec }},
		func(*coordtest.Server) coordtest.Options {
			return coordtest.Options{API: func(o *httpapi.Options) {
				o.Forwarded = func(reached bool) {
					if reached {
						e.reached.Add(1)
					} else {
						e.failed.Add(1)
					}
				}
			}}
		})
	p.cb.unreachable = make(chan string, 100)
	e.owner, e.forwarder, e.ownerCluster, e.fwdCluster = p.a.HTTP, p.b.HTTP, p.ca, p.cb
	return e
}

// do sends method path (under the base path) with body and auth ("" for
// none) to srv and returns the answer's status, header and body.
func do(t *testing.T, srv *httptest.Server, method, path, auth, body string) (int, http.Header, string) {
	t.Helper()
	req := newReq(t, method, srv.URL+contract.BasePath+path, body)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	return send(t, srv.Client(), req)
}

func createOn(t *testing.T, srv *httptest.Server, prefix string, shards int) {
	t.Helper()
	if st, _, body := do(t, srv, http.MethodPost, "/streams/"+prefix+"/groups/g", "", fmt.Sprintf(`{"initialShardCount":%d,"requestedBy":"test"}`, shards)); st != http.StatusCreated {
		t.Fatalf("create %s: %d %s", prefix, st, body)
	}
}

// Members of two groups heartbeat through the forwarder at once until
// both groups settle: every answer is the owner's (200, naming the owner),
// whatever batch it travelled in, and every forward is counted reached.
func TestForwardedHeartbeatsSettleGroups(t *testing.T) {
	e := newForwardEnv(t, nil)
	const shards, members = 8, 6
	prefixes := []string{"orders", "payments"}
	for _, p := range prefixes {
		createOn(t, e.owner, p, shards)
	}
	var wg sync.WaitGroup
	var sent atomic.Int64
	for _, p := range prefixes {
		ms := make([]*membersim.Member, members)
		for i := range ms {
			ms[i] = membersim.New(fmt.Sprintf("%s-m%d", p, i), nil)
		}
		var mu sync.Mutex // guards ms's state between the members' goroutines and Settled
		settled := func() bool { mu.Lock(); defer mu.Unlock(); return membersim.Settled(shards, ms) }
		for _, m := range ms {
			wg.Go(func() {
				for !settled() {
					mu.Lock()
					req := m.Request()
					mu.Unlock()
					body, _ := json.Marshal(req)
					st, h, answer := do(t, e.forwarder, http.MethodPost, "/streams/"+p+"/groups/g/members/"+req.MemberID+"/heartbeat", "", string(body))
					sent.Add(1)
					if st != http.StatusOK || h.Get(contract.OwnerHeader) != e.owner.URL {
						t.Errorf("%s: %d %s (owner %q)", req.MemberID, st, answer, h.Get(contract.OwnerHeader))
						return
					}
					var resp contract.HeartbeatResponse
					if err := json.Unmarshal([]byte(answer), &resp); err != nil || resp.MemberID != req.MemberID || resp.Status != contract.StatusOK {
						t.Errorf("%s: answered %s (%v)", req.MemberID, answer, err)
						return
					}
					mu.Lock()
					m.Apply(req, resp)
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	if n := e.reached.Load(); n != sent.Load() || e.failed.Load() != 0 {
		t.Errorf("forwards counted: %d reached, %d failed; %d heartbeats sent", n, e.failed.Load(), sent.Load())
	}
	// Other routes are proxied: the group is coord-a's.
	if st, h, body := do(t, e.forwarder, http.MethodGet, "/streams/orders/groups/g", "", ""); st != http.StatusOK || h.Get(contract.OwnerHeader) != e.owner.URL {
		t.Errorf("GET group via the forwarder: %d %s", st, body)
	}
}

// Credentials are checked on the owner: coord-b is open, coord-a
// authenticates.
func TestForwardedHeartbeatAuthenticatedOnOwner(t *testing.T) {
	users, err := security.NewUsers(security.Options{
		Users:       []security.User{{Username: "member", Password: "member-pw-61c0", Roles: []string{string(security.RoleMember)}}},
		TokenSecret: "forward-test-secret",
	})
	if err != nil {
		t.Fatal(err)
	}
	e := newForwardEnv(t, &httpapi.Security{Users: users, AuthenticateMemberAPI: true})
	// No group exists (creating one needs a writer): the owner answers an
	// authenticated heartbeat UNKNOWN_MEMBER_ID.
	path, body := coordtest.JoinHeartbeat(t, ordersG, "m1")
	if st, h, answer := do(t, e.forwarder, http.MethodPost, path, basicAuth("member", "wrong"), body); st != http.StatusUnauthorized || h.Get(contract.OwnerHeader) != e.owner.URL {
		t.Errorf("wrong password via the forwarder: %d %s (owner %q)", st, answer, h.Get(contract.OwnerHeader))
	}
	if st, _, answer := do(t, e.forwarder, http.MethodPost, path, basicAuth("member", "member-pw-61c0"), body); st != http.StatusOK || !strings.Contains(answer, `"status":"UNKNOWN_MEMBER_ID"`) {
		t.Errorf("right password via the forwarder: %d %s", st, answer)
	}
}

func basicAuth(user, password string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+password))
}

// ordersG is the group the forwarding tests create (createOn "orders").
var ordersG = group.Key{StreamPrefix: "orders", ConsumerGroup: "g"}

// A forward to an owner that is gone answers a heartbeat RETRY (never
// FENCED) and any other request 503 COORDINATOR_UNREACHABLE, and reports
// the owner unreachable.
func TestForwardToOwnerGone(t *testing.T) {
	e := newForwardEnv(t, nil)
	createOn(t, e.owner, "orders", 4)
	e.owner.Close()
	path, body := coordtest.JoinHeartbeat(t, ordersG, "m1")
	st, _, answer := do(t, e.forwarder, http.MethodPost, path, "", body)
	var resp contract.HeartbeatResponse
	if err := json.Unmarshal([]byte(answer), &resp); st != http.StatusOK || err != nil || resp.Status != contract.StatusRetry || resp.MemberID != "m1" {
		t.Errorf("heartbeat to a gone owner: %d %s", st, answer)
	}
	if id := <-e.fwdCluster.unreachable; id != "coord-a" {
		t.Errorf("unreachable %q", id)
	}
	if st, h, answer := do(t, e.forwarder, http.MethodGet, "/streams/orders/groups/g", "", ""); st != http.StatusServiceUnavailable || !strings.Contains(answer, "COORDINATOR_UNREACHABLE") || h.Get("Retry-After") == "" {
		t.Errorf("GET group from a gone owner: %d %s", st, answer)
	}
	if n := e.failed.Load(); n != 2 || e.reached.Load() != 0 {
		t.Errorf("forwards counted: %d failed, %d reached", n, e.reached.Load())
	}
}

// The owner serves batches of forwarded heartbeats only from a live
// coordinator, proven by the batch's mark (an HMAC over the batch's
// length and digest keyed by the key the two coordinators share), and
// only heartbeat paths in them; a heartbeat whose batch is refused is
// answered RETRY.
func TestForwardBatchOnlyFromCoordinators(t *testing.T) {
	e := newForwardEnv(t, nil)
	createOn(t, e.owner, "orders", 4)
	path, body := coordtest.JoinHeartbeat(t, ordersG, "m1")
	batch := func(items ...[]byte) []byte { return batchwire.Batch(items) }
	item := func(path, body string) []byte {
		return batchwire.AppendItem(nil, "/coord/v1"+path, http.Header{"Content-Type": {"application/json"}}, []byte(body))
	}
	signed := func(req *http.Request, payload []byte) {
		httpapi.SignForwarded(req, "coord-b", e.bKey(), "coord-a", time.Now(), payload)
	}
	c, kc := newPeer("coord-c", "http://coord-c.invalid")
	post := func(contentType string, payload []byte, mark func(*http.Request, []byte)) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, e.owner.URL+httpapi.ForwardBatchPath, bytes.NewReader(payload))
		req.Header.Set("Content-Type", contentType)
		mark(req, payload)
		resp, err := e.owner.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for name, mark := range map[string]func(*http.Request, []byte){
		"unmarked":   func(*http.Request, []byte) {},
		"named only": func(req *http.Request, _ []byte) { req.Header.Set(httpapi.HeaderForwardedBy, "coord-b") },
		"sending the token": func(req *http.Request, _ []byte) {
			req.Header.Set(httpapi.HeaderForwardedBy, "coord-b")
			req.Header.Set("X-Coordinator-Token", "token-b")
		},
		"by no live coordinator": func(req *http.Request, p []byte) {
			httpapi.SignForwarded(req, "coord-c", kc.With(e.ownerCluster.Self()), "coord-a", time.Now(), p)
		},
		"with another key": func(req *http.Request, p []byte) {
			httpapi.SignForwarded(req, "coord-b", kc.With(e.ownerCluster.Self()), "coord-a", time.Now(), p)
		},
		"keyed by the stored token": func(req *http.Request, p []byte) {
			httpapi.SignForwarded(req, "coord-b", []byte(e.fwdCluster.Self().Token), "coord-a", time.Now(), p)
		},
		"for another coordinator": func(req *http.Request, p []byte) {
			httpapi.SignForwarded(req, "coord-b", e.fwdCluster.ForwardKey(c), "coord-c", time.Now(), p)
		},
		"over another batch": func(req *http.Request, _ []byte) { signed(req, batch(item(path, body), item(path, body))) },
		"over another batch of the same length": func(req *http.Request, p []byte) {
			signed(req, bytes.Repeat([]byte{'x'}, len(p)))
		},
		"outside the window": func(req *http.Request, p []byte) {
			httpapi.SignForwarded(req, "coord-b", e.bKey(), "coord-a", time.Now().Add(-httpapi.ForwardWindow-time.Minute), p)
		},
	} {
		if st, answer := post(batchwire.ContentType, batch(item(path, body)), mark); st != http.StatusForbidden || !strings.Contains(answer, "NOT_A_COORDINATOR") {
			t.Errorf("batch %s: %d %s", name, st, answer)
		}
	}
	// A live coordinator's batch: a heartbeat is served, a create (another
	// route) is not found, in one answer.
	st, answer := post(batchwire.ContentType, batch(item(path, body), item("/streams/orders/groups/other", `{"initialShardCount":1}`)), signed)
	answers, err := batchwire.Answers([]byte(answer), 2)
	if st != http.StatusOK || err != nil {
		t.Fatalf("batch from coord-b: %d %v %q", st, err, answer)
	}
	if a := answers[0]; a.Status != http.StatusOK || a.Header.Get(contract.OwnerHeader) != e.owner.URL || !strings.Contains(string(a.Body), `"memberId":"m1"`) {
		t.Errorf("heartbeat item: %d %v %s", a.Status, a.Header, a.Body)
	}
	if a := answers[1]; a.Status != http.StatusNotFound {
		t.Errorf("create item: %d %s", a.Status, a.Body)
	}
	// A batch in another encoding (the JSON of earlier releases) or a
	// malformed one is refused as a whole.
	if st, answer := post("application/json", []byte(`{"items":[]}`), signed); st != http.StatusBadRequest || !strings.Contains(answer, "INVALID_REQUEST") {
		t.Errorf("json batch: %d %s", st, answer)
	}
	if st, answer := post(batchwire.ContentType, item(path, body), signed); st != http.StatusBadRequest || !strings.Contains(answer, "INVALID_REQUEST") {
		t.Errorf("truncated batch: %d %s", st, answer)
	}
	// The owner no longer lists coord-b: coord-b's heartbeats get RETRY.
	e.ownerCluster.setLive(e.ownerCluster.Live()[:1])
	if st, _, answer := do(t, e.forwarder, http.MethodPost, path, "", body); st != http.StatusOK || !strings.Contains(answer, `"status":"RETRY"`) {
		t.Errorf("heartbeat refused by the owner: %d %s", st, answer)
	}
}
