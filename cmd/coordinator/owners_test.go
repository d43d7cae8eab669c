package main

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/eventually"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/testredis"
)

// monitor records the commands a Redis server runs (MONITOR), those run
// by its scripts included, from its start until the test ends.
type monitor struct {
	mu    sync.Mutex
	lines []string
}

// watch starts a monitor of the Redis at addr.
func watch(t *testing.T, addr string) *monitor {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	if _, err := fmt.Fprint(conn, "MONITOR\r\n"); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(conn)
	if ok, err := r.ReadString('\n'); err != nil || ok != "+OK\r\n" {
		t.Fatalf("MONITOR: %q, %v", ok, err)
	}
	m := new(monitor)
	go func() {
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			m.mu.Lock()
			m.lines = append(m.lines, strings.TrimSpace(line))
			m.mu.Unlock()
		}
	}()
	return m
}

// sync waits until the monitor has seen every command Redis ran before
// the call: it has seen an ECHO that c sends after them.
func (m *monitor) sync(t *testing.T, c *redis.Client) {
	t.Helper()
	marker := fmt.Sprint("sync-", len(m.snapshot()))
	if err := c.Echo(t.Context(), marker).Err(); err != nil {
		t.Fatal(err)
	}
	eventually.True(t, "the monitor saw "+marker, func() bool {
		return len(containing(m.snapshot(), `"`+marker+`"`)) > 0
	})
}

func (m *monitor) snapshot() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.lines)
}

// containing returns the lines that contain s.
func containing(lines []string, s string) []string {
	var out []string
	for _, l := range lines {
		if strings.Contains(l, s) {
			out = append(out, l)
		}
	}
	return out
}

// ownerKeys lists the ownership records under prefix: one SCAN covers the
// keys of a test's own Redis.
func ownerKeys(t *testing.T, c *redis.Client, prefix string) []string {
	t.Helper()
	keys, _, err := c.Scan(t.Context(), 0, prefix+":*:owner", 1_000_000).Result()
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

var noActors = regexp.MustCompile(`(?m)^redis_stream_coord_group_actors(\{[^}]*\})? 0$`)

// waitNoActors waits until the coordinator at base runs no group actor:
// every actor has answered, released what it held and stopped.
func waitNoActors(t *testing.T, base string) {
	t.Helper()
	eventually.True(t, "no group actor left", func() bool {
		_, body := sendAs(t, "", http.MethodGet, base+"/metrics", "")
		return noActors.MatchString(body)
	})
}

// throwawayRedis starts a Redis of the test's own (so that every command
// it runs is a coordinator's of this test) and a key prefix on it.
func throwawayRedis(t *testing.T) (srv *testredis.Server, c *redis.Client, prefix string) {
	t.Helper()
	srv = testredis.Start(t)
	c = redis.NewClient(&redis.Options{Addr: srv.Addr})
	t.Cleanup(func() { _ = c.Close() })
	return srv, c, testredis.Prefix(t, c)
}

// startOn runs a coordinator on the Redis at addr under prefix and waits
// until it is ready; it returns its base URL and its stop function.
func startOn(t *testing.T, addr, prefix string) (string, func()) {
	t.Helper()
	cfg := writeConfig(t, "coordinator:\n  id: owners-it\n  server: {address: \"127.0.0.1:0\"}\n"+redisStoreYAML(addr, prefix))
	base, stop := start(t, "-config", cfg)
	eventually.True(t, "the coordinator is ready", func() bool {
		st, _ := sendAs(t, "", http.MethodGet, base+"/readyz", "")
		return st == http.StatusOK
	})
	return base, stop
}

// Requests for groups that do not exist, heartbeats and reads, anonymous
// and authenticated, leave no ownership record in the store and run at
// most one command each, an EXISTS: they are answered as for no group (a
// heartbeat UNKNOWN_MEMBER_ID, docs/protocol.md §4.2 step 3; a read 404
// GROUP_NOT_FOUND; an anonymous read 401 before any) without the group
// being acquired.
func TestRequestsForAbsentGroupsWriteNothing(t *testing.T) {
	srv, c, prefix := throwawayRedis(t)
	base, _ := startOn(t, srv.Addr, prefix)
	groupPath := "/coord/v1/streams/%[1]s/groups/workers"
	monitoringPath := "/coord/v1/monitoring/streams/%[1]s/groups/workers"
	kinds := []struct {
		auth, method, path, body string
		status                   int
		answer                   string
	}{
		{"", http.MethodPost, groupPath + "/members/m1/heartbeat", joinHeartbeat, http.StatusOK, `"status":"UNKNOWN_MEMBER_ID"`},
		{adminAuth, http.MethodPost, groupPath + "/members/m1/heartbeat", joinHeartbeat, http.StatusOK, `"status":"UNKNOWN_MEMBER_ID"`},
		{"", http.MethodGet, groupPath, "", http.StatusUnauthorized, `"UNAUTHORIZED"`},
		{adminAuth, http.MethodGet, groupPath, "", http.StatusNotFound, `"GROUP_NOT_FOUND"`},
		{adminAuth, http.MethodGet, groupPath + "/producer-routing", "", http.StatusNotFound, `"GROUP_NOT_FOUND"`},
		{adminAuth, http.MethodGet, monitoringPath, "", http.StatusNotFound, `"GROUP_NOT_FOUND"`},
		{adminAuth, http.MethodGet, monitoringPath + "/members", "", http.StatusNotFound, `"GROUP_NOT_FOUND"`},
		{adminAuth, http.MethodGet, monitoringPath + "/assignments", "", http.StatusNotFound, `"GROUP_NOT_FOUND"`},
	}
	const requests = 40
	mon := watch(t, srv.Addr)
	mon.sync(t, c)
	first := len(mon.snapshot())
	for i := range requests {
		k := kinds[i%len(kinds)]
		path := fmt.Sprintf(k.path, fmt.Sprint("absent-", i))
		if st, body := sendAs(t, k.auth, k.method, base+path, k.body); st != k.status || !strings.Contains(body, k.answer) {
			t.Errorf("%s %s: %d %s, want %d %s", k.method, path, st, body, k.status, k.answer)
		}
	}
	waitNoActors(t, base)
	mon.sync(t, c)
	if left := ownerKeys(t, c, prefix); len(left) != 0 {
		t.Errorf("%d ownership records left: %v", len(left), left)
	}
	served := mon.snapshot()[first:]
	byCount := map[int]int{} // commands on a group's keys → groups
	for i := range requests {
		tag := prefix + ":" + fmt.Sprintf("{absent-%d:workers}", i) + ":"
		cmds := containing(served, tag)
		byCount[len(cmds)]++
		if len(cmds) > 1 || len(cmds) == 1 && !strings.Contains(cmds[0], `"exists"`) {
			t.Errorf("%s: %d commands, want at most one EXISTS: %q", tag, len(cmds), cmds)
		}
	}
	t.Logf("%d requests: groups by the commands run on their keys %v; %d commands in all meanwhile, %d of them on the registry (renewals included)",
		requests, byCount, len(served), len(containing(served, prefix+":coordinators")))
}

// Deleting a group deletes its ownership record; creating it again at
// once takes a new one, which the next delete deletes too.
func TestDeleteRemovesTheOwnershipRecord(t *testing.T) {
	srv, c, prefix := throwawayRedis(t)
	base, _ := startOn(t, srv.Addr, prefix)
	api := base + "/coord/v1"
	grp := api + "/streams/orders/groups/workers"
	for range 2 {
		createAndJoin(t, api, "orders")
		if left := ownerKeys(t, c, prefix); len(left) != 1 {
			t.Fatalf("ownership records of a live group: %v, want one", left)
		}
		if st, body := send(t, http.MethodDelete, grp, `{"requestedBy":"it","reason":"test","force":true}`); st != http.StatusOK {
			t.Fatalf("delete: %d %s", st, body)
		}
		if left := ownerKeys(t, c, prefix); len(left) != 0 {
			t.Fatalf("ownership records after the delete: %v", left)
		}
	}
	waitNoActors(t, base)
	if left := ownerKeys(t, c, prefix); len(left) != 0 {
		t.Errorf("ownership records once the actor stopped: %v", left)
	}
}

// A coordinator's first sweep deletes the ownership records that releases
// of earlier versions left for groups that are not stored (and those of
// coordinators that stopped between an acquire and its release), and
// keeps the records of stored groups.
func TestStartPrunesOrphanRecords(t *testing.T) {
	srv, c, prefix := throwawayRedis(t)
	base, stop := startOn(t, srv.Addr, prefix)
	createAndJoin(t, base+"/coord/v1", "orders")
	stop()
	stored := ownerKeys(t, c, prefix)
	if len(stored) != 1 {
		t.Fatalf("ownership records of one stored group: %v", stored)
	}
	ctx := t.Context()
	for _, o := range []struct{ stream, coordinator, token string }{{"released", "", ""}, {"crashed", "gone", "t"}} {
		key := prefix + ":" + group.Key{StreamPrefix: o.stream, ConsumerGroup: "workers"}.HashTag() + ":owner"
		if err := c.HSet(ctx, key, "coordinator", o.coordinator, "token", o.token, "epoch", 3).Err(); err != nil {
			t.Fatal(err)
		}
	}
	startOn(t, srv.Addr, prefix)
	eventually.True(t, "the orphan records are deleted", func() bool { return len(ownerKeys(t, c, prefix)) == 1 })
	if left := ownerKeys(t, c, prefix); left[0] != stored[0] {
		t.Errorf("ownership records %v, want the stored group's %v", left, stored)
	}
}
