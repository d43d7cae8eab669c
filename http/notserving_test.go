package httpapi_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/coordtest"
	"github.com/redis-stream-coordinator/coordinator/persistence"
)

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
	c := coordtest.Start(t, coordtest.Options{ID: "solo", Cluster: true, Unstarted: true})
	admin := c.Admin()
	earlier := persistence.Peer{ID: "solo", Token: "earlier-run", URL: c.URL}
	if err := c.Store.Register(t.Context(), earlier, time.Hour); err != nil {
		t.Fatal(err)
	}
	c.Node.Start(t.Context())
	if c.Node.Serving() {
		t.Fatal("serves while an earlier run holds the id")
	}
	for _, tc := range []struct{ method, path, body string }{
		{http.MethodPost, notServingGroup, `{"initialShardCount":2,"requestedBy":"test"}`},
		{http.MethodGet, notServingGroup, ""},
	} {
		st, h, body := admin.Do(tc.method, tc.path, tc.body)
		if st != http.StatusServiceUnavailable || !strings.Contains(body, `"errorCode":"COORDINATOR_NOT_SERVING"`) ||
			h.Get("Retry-After") != "1" || h.Get(contract.OwnerHeader) != "" {
			t.Errorf("%s %s while not serving: %d %v %s; want 503 COORDINATOR_NOT_SERVING, Retry-After 1, no owner",
				tc.method, tc.path, st, h, body)
		}
	}
	st, h, body := admin.Do(http.MethodPost, notServingHeartbeat, notServingJoin)
	if st != http.StatusOK || !strings.Contains(body, `"status":"RETRY"`) || h.Get(contract.OwnerHeader) != "" {
		t.Errorf("heartbeat while not serving: %d %v %s; want 200 RETRY with no owner", st, h, body)
	}

	if err := c.Store.Deregister(t.Context(), earlier); err != nil { // its lease ends
		t.Fatal(err)
	}
	c.WaitFor(c.Node.Serving, "the coordinator registers")
	st, h, body = admin.Do(http.MethodPost, notServingGroup, `{"initialShardCount":2,"requestedBy":"test"}`)
	if st != http.StatusCreated || h.Get(contract.OwnerHeader) != c.URL {
		t.Fatalf("create once serving: %d %v %s", st, h, body)
	}
	st, h, body = admin.Do(http.MethodPost, notServingHeartbeat, notServingJoin)
	if st != http.StatusOK || !strings.Contains(body, `"status":"OK"`) || h.Get(contract.OwnerHeader) != c.URL {
		t.Errorf("heartbeat once serving: %d %v %s", st, h, body)
	}
}

// A coordinator that leaves the cluster refuses what still reaches its
// group actors as owned elsewhere (another coordinator takes the groups
// over), with Retry-After and naming no owner.
func TestLeavingAnswersOwnedElsewhere(t *testing.T) {
	c := coordtest.Start(t, coordtest.Options{ID: "solo", Cluster: true})
	admin := c.Admin()
	if st, _, body := admin.Do(http.MethodPost, notServingGroup, `{"initialShardCount":2,"requestedBy":"test"}`); st != http.StatusCreated {
		t.Fatalf("create: %d %s", st, body)
	}
	c.Node.Leave()
	st, h, body := admin.Do(http.MethodPost, "/streams/orders/groups/g2", `{"initialShardCount":2,"requestedBy":"test"}`)
	if st != http.StatusServiceUnavailable || !strings.Contains(body, `"errorCode":"GROUP_OWNED_ELSEWHERE"`) ||
		h.Get("Retry-After") != "1" || h.Get(contract.OwnerHeader) != "" {
		t.Errorf("create while leaving: %d %v %s; want 503 GROUP_OWNED_ELSEWHERE, Retry-After 1, no owner", st, h, body)
	}
}
