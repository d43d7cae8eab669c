package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/eventually"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/freeport"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/testredis"
	"github.com/redis-stream-coordinator/coordinator/persistence"
	redisstore "github.com/redis-stream-coordinator/coordinator/persistence/redis"
)

// records returns the JSON log records at level whose message contains msg.
func (l *logBuffer) records(level, msg string) []map[string]any {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(l.buf.Bytes()))
	for sc.Scan() {
		var rec map[string]any
		if json.Unmarshal(sc.Bytes(), &rec) == nil && rec["level"] == level && strings.Contains(fmt.Sprint(rec["msg"]), msg) {
			out = append(out, rec)
		}
	}
	return out
}

// loopbackAddress is 127.0.0.1 and a port free now.
func loopbackAddress(t *testing.T) string {
	t.Helper()
	port, err := freeport.Loopback()
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("127.0.0.1:%d", port)
}

const createBody = `{"initialShardCount":2,"requestedBy":"it"}`

// Two coordinators started on one host without coordinator.id both serve:
// their default ids (host name and port) differ, both are ready, both are
// listed in the registry, and each creates a group.
func TestDefaultIDsOfCoordinatorsOnOneHost(t *testing.T) {
	storeYAML := redisStoreYAML(testredis.SharedAddr, testredis.Prefix(t, testredis.Shared(t)))
	host, err := os.Hostname()
	if err != nil {
		t.Skip("no host name:", err)
	}
	var bases, ids []string
	for range 2 {
		addr := loopbackAddress(t)
		base, _ := start(t, "-config", writeConfig(t, fmt.Sprintf("coordinator:\n  server: {address: %q}\n", addr)+storeYAML))
		bases, ids = append(bases, base), append(ids, host+"-"+addr[strings.LastIndexByte(addr, ':')+1:])
	}
	for i, base := range bases {
		eventually.True(t, ids[i]+" ready", func() bool { return getReadiness(t, base).readyz == http.StatusOK })
		if r := getReadiness(t, base); r.report.CoordinatorID != ids[i] || r.report.Cluster != contract.ClusterServing {
			t.Errorf("%s: health %+v, want id %s serving", base, r.report, ids[i])
		}
	}
	var v contract.ClusterView
	eventually.True(t, "both registered", func() bool {
		st, _ := call(t, "GET", bases[0]+"/coord/v1/cluster", "", &v)
		return st == http.StatusOK && len(v.Coordinators) == 2
	})
	if got := []string{v.Coordinators[0].ID, v.Coordinators[1].ID}; !slices.Equal(got, slices.Sorted(slices.Values(ids))) {
		t.Errorf("registry lists %v, want %v", got, ids)
	}
	stream := fmt.Sprintf("hosts-%d", time.Now().UnixNano())
	for i, base := range bases {
		grp := fmt.Sprintf("%s/coord/v1/streams/%s/groups/g%d", base, stream, i)
		if st, body := send(t, "POST", grp, createBody); st != http.StatusCreated {
			t.Errorf("create through %s: %d %s", ids[i], st, body)
		}
		t.Cleanup(func() { send(t, "DELETE", grp, `{"requestedBy":"it","reason":"cleanup","force":true}`) })
	}
}

// A coordinator whose id a live coordinator holds never serves: it logs an
// ERROR naming the other's URL and the setting to change (every lease
// period), and answers /readyz 503 (cluster NOT_SERVING), while the other
// stays ready.
func TestIDCollisionIsAnErrorAndNotReady(t *testing.T) {
	cfg := "coordinator:\n  id: twin\n  server: {address: \"127.0.0.1:0\"}\n  cluster: {lease-ttl: 1s, renew-interval: 100ms}\n" +
		redisStoreYAML(testredis.SharedAddr, testredis.Prefix(t, testredis.Shared(t)))
	first, _ := start(t, "-config", writeConfig(t, cfg))
	eventually.True(t, "the first ready", func() bool { return getReadiness(t, first).readyz == http.StatusOK })
	second, _, logs := startLogged(t, "-config", writeConfig(t, cfg))
	var errs []map[string]any
	eventually.True(t, "an ERROR about the id", func() bool {
		errs = logs.records("ERROR", "coordinator id in use")
		return len(errs) > 0
	})
	if e := errs[0]; e["otherUrl"] != first || e["id"] != "twin" || !strings.Contains(e["msg"].(string), "coordinator.id (COORDINATOR_ID)") {
		t.Errorf("ERROR record %v, want otherUrl %s", e, first)
	}
	if r := getReadiness(t, second); r.readyz != http.StatusServiceUnavailable || r.readyzBody != `{"status":"DEGRADED"}` ||
		r.report.Cluster != contract.ClusterNotServing {
		t.Errorf("the second: /readyz %d %s, health %+v; want 503 DEGRADED, NOT_SERVING", r.readyz, r.readyzBody, r.report)
	}
	if r := getReadiness(t, first); r.readyz != http.StatusOK {
		t.Errorf("the first: /readyz %d %s", r.readyz, r.readyzBody)
	}
}

// A coordinator restarted with its id while the earlier run's registry
// entry is live (a SIGKILLed run, until its lease ends) is not ready and
// refuses the groups' requests with 503 COORDINATOR_NOT_SERVING and
// Retry-After, heartbeats with RETRY, neither naming an owner; once the
// entry is gone it registers, is ready and serves.
func TestNotServingWhileAnEarlierRunHoldsTheID(t *testing.T) {
	rdb := testredis.Shared(t)
	prefix := testredis.Prefix(t, rdb)
	addr := loopbackAddress(t)
	store, err := redisstore.New(redisstore.Options{Client: rdb, KeyPrefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	earlier := persistence.Peer{ID: "phoenix", Token: "earlier-run", URL: "http://" + addr}
	if err := store.Register(t.Context(), earlier, time.Hour); err != nil {
		t.Fatal(err)
	}
	base, _ := start(t, "-config", writeConfig(t, fmt.Sprintf("coordinator:\n  id: phoenix\n  server: {address: %q}\n", addr)+
		redisStoreYAML(testredis.SharedAddr, prefix)))
	if r := getReadiness(t, base); r.readyz != http.StatusServiceUnavailable || r.report.Cluster != contract.ClusterNotServing {
		t.Errorf("first /readyz %d %s, health %+v; want 503, NOT_SERVING", r.readyz, r.readyzBody, r.report)
	}
	grp := base + "/coord/v1/streams/phoenix/groups/g"
	st, body, h := sendVia(t, http.DefaultClient, adminAuth, "POST", grp, createBody)
	if st != http.StatusServiceUnavailable || errorCode(body) != "COORDINATOR_NOT_SERVING" || h.Get("Retry-After") != "1" || h.Get(contract.OwnerHeader) != "" {
		t.Errorf("create while not serving: %d %v %s; want 503 COORDINATOR_NOT_SERVING, Retry-After 1, no owner", st, h, body)
	}
	st, body, h = sendVia(t, http.DefaultClient, adminAuth, "POST", grp+"/members/m1/heartbeat", joinHeartbeat)
	if st != http.StatusOK || !strings.Contains(body, `"status":"RETRY"`) || h.Get(contract.OwnerHeader) != "" {
		t.Errorf("heartbeat while not serving: %d %v %s; want 200 RETRY, no owner", st, h, body)
	}

	if err := store.Deregister(t.Context(), earlier); err != nil { // its lease ends
		t.Fatal(err)
	}
	eventually.True(t, "ready once registered", func() bool { return getReadiness(t, base).readyz == http.StatusOK })
	st, body, h = sendVia(t, http.DefaultClient, adminAuth, "POST", grp, createBody)
	if st != http.StatusCreated || h.Get(contract.OwnerHeader) != base {
		t.Fatalf("create once serving: %d %v %s", st, h, body)
	}
	if st, body := send(t, "DELETE", grp, `{"requestedBy":"it","reason":"cleanup","force":true}`); st != http.StatusOK {
		t.Errorf("delete: %d %s", st, body)
	}
}

// A store that does not answer at start (Redis or PostgreSQL on a port
// where nothing listens) is not read as ready: the very first /readyz
// answers 503, the coordinator not serving and the store not UP.
func TestNotReadyWithTheStoreDownAtStart(t *testing.T) {
	for name, storeYAML := range map[string]string{
		"redis": fmt.Sprintf("  store: {type: redis, timeout: 500ms}\n  redis: {host: 127.0.0.1, port: %s}\n", loopbackAddress(t)[len("127.0.0.1:"):]),
		"jdbc":  "  store: {type: jdbc, jdbc: {url: \"postgres://postgres@127.0.0.1:1/test?sslmode=disable\"}, timeout: 500ms}\n",
	} {
		t.Run(name, func(t *testing.T) {
			base, _ := start(t, "-config", writeConfig(t, "coordinator:\n  server: {address: \"127.0.0.1:0\"}\n"+storeYAML))
			r := getReadiness(t, base)
			if r.readyz != http.StatusServiceUnavailable || r.actuator != http.StatusServiceUnavailable ||
				r.report.Cluster != contract.ClusterNotServing || r.report.Store.Status == contract.StoreUp {
				t.Errorf("first readiness: /readyz %d %s, /actuator/health %d %+v; want 503, NOT_SERVING, store not UP",
					r.readyz, r.readyzBody, r.actuator, r.report)
			}
		})
	}
}

// On Redis Cluster readiness follows every master: with one master killed
// (not the one holding the registry, so the coordinator keeps serving)
// /readyz turns 503 and the health report shows the partial outage,
// naming the node; with the master back it is ready again.
func TestReadinessFollowsEveryRedisClusterMaster(t *testing.T) {
	t.Parallel() // a Redis Cluster and a coordinator of its own
	rc := testredis.StartCluster(t, 3)
	const prefix = "readiness"
	base, _ := start(t, "-config", writeConfig(t, fmt.Sprintf(`coordinator:
  id: rc-it
  server: {address: "127.0.0.1:0"}
  store: {type: redis, key-prefix: %s, timeout: 500ms}
  redis: {cluster-nodes: [%s]}
  health: {redis-timeout-ms: 500, cache-ttl-ms: 5}
`, prefix, strings.Join(rc.Addrs, ", "))))
	eventually.True(t, "ready", func() bool { return getReadiness(t, base).readyz == http.StatusOK })

	registry, err := rc.Client(t).MasterForKey(context.Background(), prefix+":coordinators")
	if err != nil {
		t.Fatal(err)
	}
	victim := slices.IndexFunc(rc.Addrs, func(a string) bool { return a != registry.Options().Addr })
	killed := rc.Addrs[victim]
	rc.Servers[victim].Kill()
	killedAt := time.Now()
	var r readiness
	eventually.True(t, "not ready with a master down", func() bool {
		r = getReadiness(t, base)
		return r.readyz == http.StatusServiceUnavailable
	})
	t.Logf("/readyz 503 %s after the master's loss", time.Since(killedAt).Round(time.Millisecond))
	eventually.True(t, "the partial outage reported", func() bool {
		r = getReadiness(t, base)
		return r.report.Store.Status == contract.StoreDegraded && r.report.Redis == contract.RedisDegraded
	})
	if r.readyz != http.StatusServiceUnavailable || r.readyzBody != `{"status":"DEGRADED"}` || r.report.Status != "DEGRADED" ||
		!slices.Equal(r.report.Store.Unreachable, []string{killed}) || !slices.Equal(r.report.RedisUnreachable, []string{killed}) ||
		r.report.Cluster != contract.ClusterServing {
		t.Errorf("with %s down: /readyz %d %s, health %+v", killed, r.readyz, r.readyzBody, r.report)
	}

	rc.Servers[victim].Restart()
	eventually.True(t, "ready with the master back", func() bool { return getReadiness(t, base).readyz == http.StatusOK })
}
