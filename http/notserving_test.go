package httpapi_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/redis-stream-coordinator/coordinator/actors"
	coordcluster "github.com/redis-stream-coordinator/coordinator/cluster"
	"github.com/redis-stream-coordinator/coordinator/group"
	httpapi "github.com/redis-stream-coordinator/coordinator/http"
	"github.com/redis-stream-coordinator/coordinator/internal/eventually"
	"github.com/redis-stream-coordinator/coordinator/persistence"
	"github.com/redis-stream-coordinator/coordinator/persistence/memory"
)

// soloCoordinator is one coordinator (cluster node, actor system, API on
// a loopback server) on a memory store.
type soloCoordinator struct {
	node *coordcluster.Node
	url  string
}

// newSolo builds coordinator id on store and serves its API; Start
// registers it.
func newSolo(t *testing.T, store *memory.Store, id string) *soloCoordinator {
	t.Helper()
	logger := slog.New(slog.DiscardHandler)
	srv := httptest.NewUnstartedServer(nil)
	node, err := coordcluster.New(coordcluster.Options{Store: store, ID: id, URL: "http://" + srv.Listener.Addr().String(),
		LeaseTTL: 2 * time.Second, RenewInterval: 20 * time.Millisecond, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = node.Stop(context.Background()) })
	coord, err := actors.New(actors.Options{Store: store, Settings: group.DefaultSettings(), GroupCommit: true, Ownership: node, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = coord.Shutdown(context.Background()) })
	node.OnChange(coord.HandOver)
	srv.Config.Handler = httpapi.New(httpapi.Options{Coordinator: coord, Cluster: node, Logger: logger})
	srv.Start()
	t.Cleanup(srv.Close)
	return &soloCoordinator{node: node, url: srv.URL}
}

// call sends method path (under /coord/v1) with body ("" for none) and
// returns the answer's status, header and body.
func (s *soloCoordinator) call(t *testing.T, method, path, body string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, s.url+"/coord/v1"+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
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

const (
	notServingGroup     = "/streams/orders/groups/g"
	notServingHeartbeat = notServingGroup + "/members/m1/heartbeat"
	notServingJoin      = `{"protocolVersion":1,"requestId":"r1","memberId":"m1","memberEpoch":0,"metadataVersion":0,` +
		`"runtimeConsumerCapacity":{"runtimeMaxConcurrency":1,"availableConcurrency":1},"ownedShards":[]}`
)

// A coordinator restarted while its earlier run's registry entry is live
// (after a SIGKILL, until that lease ends) does not serve: the group's
// requests are answered 503 COORDINATOR_NOT_SERVING with Retry-After and
// heartbeats RETRY, neither naming an owner (the groups are placed on
// this very coordinator). Once the entry is gone it registers and serves.
func TestNotServingUntilRegistered(t *testing.T) {
	store := memory.New()
	c := newSolo(t, store, "solo")
	earlier := persistence.Coordinator{ID: "solo", Token: "earlier-run", URL: c.url}
	if err := store.Register(t.Context(), earlier, time.Hour); err != nil {
		t.Fatal(err)
	}
	c.node.Start(t.Context())
	if c.node.Serving() {
		t.Fatal("serves while an earlier run holds the id")
	}
	for _, tc := range []struct{ method, path, body string }{
		{http.MethodPost, notServingGroup, `{"initialShardCount":2,"requestedBy":"test"}`},
		{http.MethodGet, notServingGroup, ""},
	} {
		st, h, body := c.call(t, tc.method, tc.path, tc.body)
		if st != http.StatusServiceUnavailable || !strings.Contains(body, `"errorCode":"COORDINATOR_NOT_SERVING"`) ||
			h.Get("Retry-After") != "1" || h.Get(httpapi.HeaderOwner) != "" {
			t.Errorf("%s %s while not serving: %d %v %s; want 503 COORDINATOR_NOT_SERVING, Retry-After 1, no owner",
				tc.method, tc.path, st, h, body)
		}
	}
	st, h, body := c.call(t, http.MethodPost, notServingHeartbeat, notServingJoin)
	if st != http.StatusOK || !strings.Contains(body, `"status":"RETRY"`) || h.Get(httpapi.HeaderOwner) != "" {
		t.Errorf("heartbeat while not serving: %d %v %s; want 200 RETRY with no owner", st, h, body)
	}

	if err := store.Deregister(t.Context(), earlier); err != nil { // its lease ends
		t.Fatal(err)
	}
	eventually.True(t, "the coordinator registers", c.node.Serving)
	st, h, body = c.call(t, http.MethodPost, notServingGroup, `{"initialShardCount":2,"requestedBy":"test"}`)
	if st != http.StatusCreated || h.Get(httpapi.HeaderOwner) != c.url {
		t.Fatalf("create once serving: %d %v %s", st, h, body)
	}
	st, h, body = c.call(t, http.MethodPost, notServingHeartbeat, notServingJoin)
	if st != http.StatusOK || !strings.Contains(body, `"status":"OK"`) || h.Get(httpapi.HeaderOwner) != c.url {
		t.Errorf("heartbeat once serving: %d %v %s", st, h, body)
	}
}

// A coordinator that leaves the cluster refuses what still reaches its
// group actors as owned elsewhere (another coordinator takes the groups
// over), with Retry-After and naming no owner.
func TestLeavingAnswersOwnedElsewhere(t *testing.T) {
	c := newSolo(t, memory.New(), "solo")
	c.node.Start(t.Context())
	if st, _, body := c.call(t, http.MethodPost, notServingGroup, `{"initialShardCount":2,"requestedBy":"test"}`); st != http.StatusCreated {
		t.Fatalf("create: %d %s", st, body)
	}
	c.node.Leave()
	st, h, body := c.call(t, http.MethodPost, "/streams/orders/groups/g2", `{"initialShardCount":2,"requestedBy":"test"}`)
	if st != http.StatusServiceUnavailable || !strings.Contains(body, `"errorCode":"GROUP_OWNED_ELSEWHERE"`) ||
		h.Get("Retry-After") != "1" || h.Get(httpapi.HeaderOwner) != "" {
		t.Errorf("create while leaving: %d %v %s; want 503 GROUP_OWNED_ELSEWHERE, Retry-After 1, no owner", st, h, body)
	}
}
