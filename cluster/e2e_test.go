package cluster_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis-stream-coordinator/coordinator/client"
	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/coordproc"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/eventually"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/membersim"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/testredis"
	"github.com/redis-stream-coordinator/coordinator/placement"
)

// Three coordinator processes on one Redis behind one round-robin proxy:
// a client that knows one base URL (login, create, heartbeats, producer
// routing, scale, delete) and the Go client (which follows
// X-Coordinator-Owner) work through it, across a rolling-restart step
// (SIGTERM, start again with the same id) and a SIGKILL: members keep
// their epochs and assignments, no answer is FENCED_MEMBER_EPOCH, every
// other answer is a success or a RETRY / 503 with Retry-After that
// succeeds when retried, and GET /cluster shows every group owned by a
// live coordinator afterwards.
func TestThreeCoordinatorsBehindOneURL(t *testing.T) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	rdb := testredis.Shared(t)
	kp := testredis.Prefix(t, rdb)
	bin, err := coordproc.Build(ctx, t.TempDir(), "coordinator")
	if err != nil {
		t.Fatal(err)
	}
	ids := []string{"coord-a", "coord-b", "coord-c"}
	dir := t.TempDir()
	t.Cleanup(func() {
		if t.Failed() {
			for _, id := range ids {
				b, _ := os.ReadFile(filepath.Join(dir, id+".log"))
				t.Logf("%s.log, the end:\n%s", id, b[max(0, len(b)-3000):])
			}
		}
	})
	cfg := coordproc.ServerConfig{
		Store: coordproc.StoreRedis, KeyPrefix: kp, RedisAddr: testredis.SharedAddr,
		// A member lease far longer than the SIGKILL window: members are
		// never expired while their coordinator is being replaced.
		Interval: 300 * time.Millisecond, LeaseTTL: 30 * time.Second,
	}
	servers := map[string]*coordproc.Server{}
	for _, id := range ids {
		s, err := coordproc.StartServer(ctx, bin, dir, id, cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Kill)
		servers[id] = s
	}
	t.Logf("3 coordinators ready after %v", time.Since(start).Round(time.Millisecond))
	var backends []*url.URL
	for _, id := range ids {
		u, _ := url.Parse(servers[id].Root)
		backends = append(backends, u)
	}
	proxy := httptest.NewServer(newRoundRobin(backends))
	t.Cleanup(proxy.Close)
	base := proxy.URL + "/coord/v1"
	var tl tally

	// Stream prefixes placed two on each coordinator (under the test's key
	// prefix, so that the streams the coordinators create are cleaned up).
	var prefixes []string
	perOwner := map[string]int{}
	for i := 0; len(prefixes) < 2*len(ids); i++ {
		p := fmt.Sprintf("%s:s%d", kp, i)
		if owner, _ := placement.Owner(p, ids); perOwner[owner] < 2 {
			perOwner[owner]++
			prefixes = append(prefixes, p)
		}
	}

	// 1. A client that knows one base URL.
	one := &oneURL{t: t, base: base, hc: &http.Client{Transport: &tl}, tl: &tl}
	one.login(ctx)
	var groups []*simGroup
	for _, p := range prefixes {
		one.call(ctx, http.MethodPost, "/streams/"+url.PathEscape(p)+"/groups/g", `{"initialShardCount":4,"requestedBy":"e2e"}`)
		g := &simGroup{key: group.Key{StreamPrefix: p, ConsumerGroup: "g"}}
		for m := range 2 {
			g.members = append(g.members, membersim.New(fmt.Sprintf("m%d", m), nil))
		}
		groups = append(groups, g)
	}
	var wg sync.WaitGroup
	beat, stopBeat := context.WithCancel(ctx)
	defer func() { stopBeat(); wg.Wait() }()
	for _, g := range groups {
		wg.Go(func() { g.heartbeat(beat, one.hc, base, cfg.Interval) })
	}
	eventually.True(t, "every group settled", func() bool {
		for _, g := range groups {
			if !g.settled(4) {
				return false
			}
		}
		return true
	})
	for _, p := range prefixes {
		one.call(ctx, http.MethodGet, "/streams/"+url.PathEscape(p)+"/groups/g/producer-routing", "")
	}
	admin := kp + ":admin"
	one.call(ctx, http.MethodPost, "/streams/"+url.PathEscape(admin)+"/groups/g", `{"initialShardCount":2,"requestedBy":"e2e"}`)
	one.call(ctx, http.MethodPost, "/streams/"+url.PathEscape(admin)+"/groups/g/scale", `{"targetShardCount":4,"requestedBy":"e2e"}`)
	one.call(ctx, http.MethodDelete, "/streams/"+url.PathEscape(admin)+"/groups/g", `{"requestedBy":"e2e","reason":"e2e done"}`)
	t.Logf("one-URL client done after %v", time.Since(start).Round(time.Millisecond))

	// 2. The Go client consumes through the proxy and then heartbeats to
	// the owner directly.
	goTL := &tally{proxyHost: strings.TrimPrefix(proxy.URL, "http://")}
	coord := client.NewCoordinator(base, client.WithBearerLogin("admin", "password"), client.WithHTTPClient(&http.Client{Transport: goTL}))
	goP := kp + ":orders"
	var handled sync.Map
	var handledN atomic.Int64
	eventually.True(t, "the Go client created its group", func() bool {
		_, err := coord.CreateGroup(ctx, goP, "g", 4, "e2e")
		return err == nil
	})
	consumer, err := client.NewConsumer(client.ConsumerConfig{
		Member: client.MemberConfig{Coordinator: coord, StreamPrefix: goP, Group: "g", MemberID: "go-member"},
		Redis:  rdb,
		Handler: func(_ context.Context, m client.Message) error {
			if _, dup := handled.LoadOrStore(m.Key, true); !dup {
				handledN.Add(1)
			}
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	consumed := make(chan error, 1)
	go func() { consumed <- consumer.Run(beat) }()
	producer, err := client.NewProducer(client.ProducerConfig{Coordinator: coord, Redis: rdb, StreamPrefix: goP, Group: "g"})
	if err != nil {
		t.Fatal(err)
	}
	publish := func(from, to int) {
		for i := from; i < to; i++ {
			eventually.True(t, "record published", func() bool {
				_, _, err := producer.Send(ctx, "key-"+strconv.Itoa(i), map[string]any{"n": i})
				return err == nil
			})
		}
		eventually.True(t, fmt.Sprintf("%d records handled", to), func() bool { return handledN.Load() >= int64(to) })
	}
	publish(0, 20)
	t.Logf("Go client consumed 20 records after %v", time.Since(start).Round(time.Millisecond))

	// 3. A rolling-restart step, then a crash.
	before := snapshot(groups)
	owners := one.view(ctx)
	term, kill := ids[0], ids[1]
	t.Logf("cluster before: %s", summary(owners))
	termAt := time.Now()
	if err := servers[term].Stop(); err != nil {
		t.Fatalf("SIGTERM %s: %v", term, err)
	}
	if err := servers[term].Restart(ctx); err != nil {
		t.Fatalf("restart %s: %v", term, err)
	}
	t.Logf("%s stopped with SIGTERM and ready again after %v", term, time.Since(termAt).Round(time.Millisecond))
	killAt := time.Now()
	servers[kill].Kill()
	eventually.True(t, "every group answers OK after the SIGKILL", func() bool {
		for _, g := range groups {
			if !g.okSince(killAt) {
				return false
			}
		}
		return true
	})
	okAfterKill := time.Since(killAt)
	live := []string{ids[0], ids[2]}
	var after contract.ClusterView
	eventually.True(t, "every group owned by a live coordinator", func() bool {
		after = one.view(ctx)
		for _, g := range after.Groups {
			if !slices.Contains(live, g.Owner) || g.Owner != g.PlacedOn {
				return false
			}
		}
		return len(after.Coordinators) == len(live)
	})
	t.Logf("cluster after: %s", summary(after))

	publish(20, 40)
	stopBeat()
	wg.Wait()
	if err := <-consumed; err != nil {
		t.Errorf("Go consumer: %v", err)
	}

	if got := snapshot(groups); !maps.Equal(before, got) {
		t.Errorf("members' epochs and shards changed:\nbefore %v\n after %v", before, got)
	}
	for _, g := range groups {
		a := one.assignments(ctx, g.key)
		for m, want := range before {
			if !strings.HasPrefix(m, g.key.StreamPrefix+"/") {
				continue
			}
			id := strings.TrimPrefix(m, g.key.StreamPrefix+"/")
			if got := fmt.Sprint(a.CurrentAssignments[id]); !strings.HasSuffix(want, " "+got) {
				t.Errorf("%s member %s: coordinator's current assignment %s, member's %s", g.key, id, got, want)
			}
		}
	}
	for _, tl := range []*tally{&tl, goTL} {
		tl.check(t)
	}
	t.Logf("one-URL client: HTTP %v, heartbeats %v, retries %d", tl.http, tl.beats, one.retries.Load())
	t.Logf("Go client: HTTP %v, heartbeats %v, sent to an owner directly %d, through the proxy %d", goTL.http, goTL.beats, goTL.direct, goTL.proxied)
	t.Logf("SIGKILL of %s: every group OK again after %v; whole test %v", kill, okAfterKill.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	if goTL.direct == 0 {
		t.Error("the Go client never sent a heartbeat to an owner directly")
	}
}

// newRoundRobin is a load balancer in front of backends: each request goes
// to the next one, and to the one after when a backend refuses the
// connection (as a load balancer's health check would take it out). A
// backend that fails in the middle of a request gets the client a 503 with
// Retry-After, as from a real load balancer.
func newRoundRobin(backends []*url.URL) http.Handler {
	rr := &roundRobin{backends: backends, inner: http.DefaultTransport}
	return &httputil.ReverseProxy{
		Rewrite:   func(pr *httputil.ProxyRequest) { pr.SetURL(backends[0]); pr.SetXForwarded() },
		Transport: rr,
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, _ error) {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusServiceUnavailable)
		},
	}
}

type roundRobin struct {
	backends []*url.URL
	next     atomic.Uint64
	inner    http.RoundTripper
}

func (rr *roundRobin) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		var err error
		if body, err = io.ReadAll(req.Body); err != nil {
			return nil, err
		}
	}
	first := rr.next.Add(1)
	var err error
	for i := range uint64(len(rr.backends)) {
		b := rr.backends[(first+i)%uint64(len(rr.backends))]
		out := req.Clone(req.Context())
		out.URL.Scheme, out.URL.Host, out.Host = b.Scheme, b.Host, b.Host
		out.Body = io.NopCloser(bytes.NewReader(body))
		var res *http.Response
		res, err = rr.inner.RoundTrip(out)
		if op, ok := errors.AsType[*net.OpError](err); ok && op.Op == "dial" {
			continue
		}
		return res, err
	}
	return nil, err
}

// tally counts the answers a client got: HTTP statuses, heartbeat
// statuses and where heartbeats went. It is the client's RoundTripper.
type tally struct {
	proxyHost string // "": do not count where heartbeats went

	mu              sync.Mutex
	http            map[int]int
	beats           map[contract.HeartbeatStatus]int
	bad             []string
	direct, proxied int
}

func (tl *tally) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		return res, err
	}
	beat := strings.HasSuffix(req.URL.Path, "/heartbeat")
	var status contract.HeartbeatStatus
	if beat && res.StatusCode == http.StatusOK {
		b, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil {
			return nil, err
		}
		res.Body = io.NopCloser(bytes.NewReader(b))
		var hr contract.HeartbeatResponse
		_ = json.Unmarshal(b, &hr)
		status = hr.Status
	}
	tl.mu.Lock()
	defer tl.mu.Unlock()
	if tl.http == nil {
		tl.http, tl.beats = map[int]int{}, map[contract.HeartbeatStatus]int{}
	}
	tl.http[res.StatusCode]++
	switch code := res.StatusCode; {
	case code == http.StatusOK || code == http.StatusCreated || code == http.StatusAccepted || code == http.StatusNoContent:
	case code == http.StatusServiceUnavailable && res.Header.Get("Retry-After") != "":
	default:
		tl.bad = append(tl.bad, fmt.Sprintf("%s %s: %d", req.Method, req.URL.Path, code))
	}
	if beat && status != "" {
		tl.beats[status]++
		if status != contract.StatusOK && status != contract.StatusRetry {
			tl.bad = append(tl.bad, fmt.Sprintf("heartbeat %s: %s", req.URL.Path, status))
		}
		if tl.proxyHost != "" && req.URL.Host == tl.proxyHost {
			tl.proxied++
		} else if tl.proxyHost != "" {
			tl.direct++
		}
	}
	return res, nil
}

// check fails t for every answer other than a success, a RETRY or a 503
// with Retry-After.
func (tl *tally) check(t *testing.T) {
	t.Helper()
	tl.mu.Lock()
	defer tl.mu.Unlock()
	for _, b := range tl.bad {
		t.Errorf("unexpected answer: %s", b)
	}
}

// oneURL is a client that knows one base URL, as the Python client and the
// Spring starter do: a Bearer token from POST /auth/login, and a request
// answered 503 with Retry-After is sent again.
type oneURL struct {
	t       *testing.T
	base    string
	hc      *http.Client
	tl      *tally
	token   string
	retries atomic.Int64
}

func (c *oneURL) login(ctx context.Context) {
	var tok struct {
		AccessToken string `json:"accessToken"`
	}
	if err := json.Unmarshal(c.call(ctx, http.MethodPost, "/auth/login", `{"username":"admin","password":"password"}`), &tok); err != nil || tok.AccessToken == "" {
		c.t.Fatalf("login: %v", err)
	}
	c.token = tok.AccessToken
	c.hc.Transport = bearer{token: c.token, next: c.hc.Transport}
}

// call sends the request until it is answered with a success, and returns
// the body; any other answer than 503 with Retry-After fails the test.
func (c *oneURL) call(ctx context.Context, method, path, body string) []byte {
	c.t.Helper()
	for {
		req, err := http.NewRequestWithContext(ctx, method, c.base+path, strings.NewReader(body))
		if err != nil {
			c.t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		res, err := c.hc.Do(req)
		if err != nil {
			c.t.Fatalf("%s %s: %v", method, path, err)
		}
		b, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil {
			c.t.Fatalf("%s %s: %v", method, path, err)
		}
		switch {
		case res.StatusCode >= 200 && res.StatusCode < 300:
			return b
		case res.StatusCode == http.StatusServiceUnavailable && res.Header.Get("Retry-After") != "":
			c.retries.Add(1)
			select { // a short pause instead of Retry-After's second keeps the test fast
			case <-ctx.Done():
				c.t.Fatalf("%s %s: %v", method, path, ctx.Err())
			case <-time.After(100 * time.Millisecond):
			}
		default:
			c.t.Fatalf("%s %s: %d %s", method, path, res.StatusCode, b)
		}
	}
}

func (c *oneURL) view(ctx context.Context) contract.ClusterView {
	var v contract.ClusterView
	if err := json.Unmarshal(c.call(ctx, http.MethodGet, "/cluster", ""), &v); err != nil {
		c.t.Fatal(err)
	}
	return v
}

func (c *oneURL) assignments(ctx context.Context, k group.Key) contract.AssignmentsView {
	var a contract.AssignmentsView
	path := "/monitoring/streams/" + url.PathEscape(k.StreamPrefix) + "/groups/" + url.PathEscape(k.ConsumerGroup) + "/assignments"
	if err := json.Unmarshal(c.call(ctx, http.MethodGet, path, ""), &a); err != nil {
		c.t.Fatal(err)
	}
	return a
}

// bearer adds the Authorization header.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(req)
}

// simGroup is a group of simulated members that heartbeat through the
// one base URL.
type simGroup struct {
	key     group.Key
	mu      sync.Mutex
	members []*membersim.Member
	lastOK  time.Time
}

// heartbeat sends every member's heartbeat each interval until ctx ends.
func (g *simGroup) heartbeat(ctx context.Context, hc *http.Client, base string, interval time.Duration) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		allOK := true
		for _, m := range g.members {
			g.mu.Lock()
			resp, err := membersim.Heartbeat(ctx, hc, base, g.key, m)
			g.mu.Unlock()
			allOK = allOK && err == nil && resp.Status == contract.StatusOK
		}
		if allOK {
			g.mu.Lock()
			g.lastOK = time.Now()
			g.mu.Unlock()
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func (g *simGroup) settled(shards int) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, m := range g.members {
		if len(m.Released()) > 0 {
			return false
		}
	}
	return membersim.Settled(shards, g.members)
}

// okSince reports whether every member got an OK answer after t.
func (g *simGroup) okSince(t time.Time) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.lastOK.After(t)
}

// snapshot maps "prefix/member" to "epoch shards" for every member.
func snapshot(groups []*simGroup) map[string]string {
	out := map[string]string{}
	for _, g := range groups {
		g.mu.Lock()
		for _, m := range g.members {
			out[g.key.StreamPrefix+"/"+m.ID] = fmt.Sprintf("%d %v", m.Epoch(), m.Owned())
		}
		g.mu.Unlock()
	}
	return out
}

// summary lists each live coordinator's groups and ownership epochs.
func summary(v contract.ClusterView) string {
	owned := map[string][]string{}
	for _, g := range v.Groups {
		owned[g.Owner] = append(owned[g.Owner], fmt.Sprintf("%s@%d", g.StreamPrefix[strings.LastIndex(g.StreamPrefix, ":")+1:], g.OwnershipEpoch))
	}
	var out []string
	for _, c := range v.Coordinators {
		out = append(out, fmt.Sprintf("%s %v", c.ID, owned[c.ID]))
	}
	return strings.Join(out, "; ")
}
