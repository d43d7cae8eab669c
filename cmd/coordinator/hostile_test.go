package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/redis-stream-coordinator/coordinator/internal/testkit/testredis"
)

// TestHostileInputs runs the attacks of issue 21 against a real
// coordinator on Redis and counts the answers by class: route-shaped
// names without credentials, forged tokens, oversized and out-of-range
// fields, colliding names, bad console paths, slow clients. It asserts 0
// unauthorised successes, 0 answers 5xx, slow clients cut off by the
// server and a live coordinator at the end, and logs the inputs tried per
// class.
func TestHostileInputs(t *testing.T) {
	t.Parallel() // a key prefix and a coordinator of its own
	c := testredis.Shared(t)
	prefix := testredis.Prefix(t, c)
	cfg := writeConfig(t, `coordinator:
  id: hostile
  server: {address: "127.0.0.1:0", read-timeout: 1s, read-header-timeout: 1s}
  api: {token-secret: hostile-secret, login-throttle: {max-failures-per-user: 0, max-failures-per-address: 0, window: 1m}}
`+redisStoreYAML(testredis.SharedAddr, prefix))
	base, _ := start(t, "-config", cfg)
	api := base + "/coord/v1"
	if st, body := sendAs(t, adminAuth, "POST", api+"/streams/orders/groups/workers", `{"requestedBy":"t","initialShardCount":4}`); st != http.StatusCreated {
		t.Fatalf("setup: %d %s", st, body)
	}
	tried := map[string]int{}
	fail := func(class, format string, args ...any) {
		t.Helper()
		t.Errorf(class+": "+format, args...)
	}
	// expect sends one attack and checks its status against ok.
	expect := func(class, auth, method, path, body string, ok func(int) bool) {
		t.Helper()
		tried[class]++
		st, answer := sendAs(t, auth, method, base+path, body)
		if st >= 500 {
			fail(class, "%s %s: %d %s", method, path, st, answer)
		} else if !ok(st) {
			fail(class, "%s %s: unexpected %d %s", method, path, st, answer)
		}
	}
	// refused is any 4xx: a path that decodes to the (open) heartbeat route
	// is a heartbeat, answered 400 for its body.
	refused := func(st int) bool { return st >= 400 }
	unauthorized := func(st int) bool { return st == 401 }
	badRequest := func(st int) bool { return st == 400 }
	notFound := func(st int) bool { return st == 404 }

	names := []string{"members", "heartbeat", "auth", "login", "monitoring", "..", "%2F", "a%2Fmembers%2Fm%2Fheartbeat"}
	for _, p := range names {
		for _, g := range names {
			grp := "/coord/v1/streams/" + p + "/groups/" + g
			expect("route-shaped names", "", "POST", grp, `{"requestedBy":"x"}`, refused)
			expect("route-shaped names", "", "DELETE", grp, `{"requestedBy":"x","reason":"y","force":true}`, refused)
			expect("route-shaped names", "", "GET", grp+"/migrations/heartbeat", "", refused)
			expect("route-shaped names", "", "GET", "/coord/v1/monitoring/streams/"+p+"/groups/"+g+"/members", "", refused)
		}
	}
	forged := []string{
		"Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJhZG1pbiIsInJvbGVzIjpbIkFETUlOIl19.",
		"Bearer " + strings.Repeat("A", 5000),
		"Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhZG1pbiIsImV4cCI6Ijk5OTk5OTk5OTkiLCJyb2xlcyI6WyJBRE1JTiJdfQ.x",
		"Basic " + strings.Repeat("=", 40), "Digest x", "Bearer", "Basic YWRtaW46d3Jvbmc=",
	}
	for _, auth := range forged {
		expect("forged credentials", auth, "GET", "/coord/v1/monitoring/groups", "", unauthorized)
		expect("forged credentials", auth, "POST", "/coord/v1/streams/orders/groups/evil", `{"requestedBy":"x"}`, unauthorized)
		expect("forged credentials", auth, "POST", "/coord/v1/auth/login", "", unauthorized)
	}
	hb := func(name string, owned string) string {
		return fmt.Sprintf(`{"protocolVersion":1,"requestId":"r","memberId":"m","memberName":%q,"memberEpoch":0,"metadataVersion":0,`+
			`"runtimeConsumerCapacity":{"runtimeMaxConcurrency":1,"availableConcurrency":1},"ownedShards":[%s]}`, name, owned)
	}
	hbPath := "/coord/v1/streams/orders/groups/workers/members/m/heartbeat"
	for _, body := range []string{
		hb(strings.Repeat("n", 1_000_000), ""), hb(strings.Repeat("n", 201), ""), hb("ok", `{"shardIndex":-1}`),
		hb("ok", `{"shardIndex":4611686018427387904}`), hb("ok", `{"shardIndex":4096}`),
		`{"protocolVersion":1,"requestId":"` + strings.Repeat("r", 300) + `","memberId":"m","runtimeConsumerCapacity":{"runtimeMaxConcurrency":1,"availableConcurrency":1}}`,
	} {
		expect("oversized and out-of-range fields", "", "POST", hbPath, body, func(st int) bool { return st == 400 || st == 413 })
	}
	for _, body := range []string{
		`{"requestedBy":"` + strings.Repeat("x", 201) + `"}`, `{"requestedBy":"x","reason":"` + strings.Repeat("x", 1001) + `"}`,
		`{"requestedBy":"x","initialShardCount":-1}`, `{"requestedBy":"x","initialShardCount":1000000000}`,
	} {
		expect("oversized and out-of-range fields", adminAuth, "POST", "/coord/v1/streams/orders/groups/big", body, badRequest)
	}
	expect("colliding names", adminAuth, "POST", "/coord/v1/streams/ka:kb/groups/kc", `{"requestedBy":"x"}`, func(st int) bool { return st == 201 })
	expect("colliding names", adminAuth, "POST", "/coord/v1/streams/ka/groups/kb:kc", `{"requestedBy":"x"}`, badRequest)
	expect("colliding names", adminAuth, "GET", "/coord/v1/streams/ka/groups/kb:kc", "", badRequest)
	expect("colliding names", adminAuth, "POST", "/coord/v1/streams/ka:kb:ka/groups/kb", `{"requestedBy":"x"}`, badRequest)
	for _, path := range []string{"/console/%ff", "/console/a%80b.js", "/console/%e2%82", "/console/..%2f..%2fetc%2fpasswd"} {
		expect("bad console paths", "", "GET", path, "", notFound)
	}

	// Slow clients: a body that never finishes is cut off by read-timeout
	// (1 s): the heartbeat's body read fails with a timeout, answered 400,
	// and the server closes the connection. The client's own deadline, a
	// minute, only bounds the wait of a server that never does.
	for range 3 {
		tried["slow clients"]++
		conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{", hbPath)
		if err := conn.SetReadDeadline(time.Now().Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		answer, err := io.ReadAll(conn) // nil error: the server closed the connection
		conn.Close()
		switch a := string(answer); {
		case err != nil:
			fail("slow clients", "the server did not close the connection: %v (read %q)", err, answer)
		case !strings.HasPrefix(a, "HTTP/1.1 400 ") || !strings.Contains(a, "cannot read request body") || !strings.Contains(a, "i/o timeout"):
			fail("slow clients", "answered %q, want 400 for a body read that timed out", answer)
		}
	}
	if st, _ := sendAs(t, "", "GET", base+"/healthz", ""); st != http.StatusOK {
		t.Errorf("coordinator not healthy after the attacks: %d", st)
	}
	classes := make([]string, 0, len(tried))
	for class := range tried {
		classes = append(classes, class)
	}
	sort.Strings(classes)
	for _, class := range classes {
		t.Logf("%-36s %4d inputs", class, tried[class])
	}
}
