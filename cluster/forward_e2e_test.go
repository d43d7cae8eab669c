package cluster_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/coordproc"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/eventually"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/membersim"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/testredis"
	"github.com/redis-stream-coordinator/coordinator/placement"
)

// Issue 42 items 3, 8 and 11 against two coordinator processes on one
// Redis, coord-a and coord-b, for a group placed on coord-a:
//
//   - the registry in Redis holds each coordinator's public key as its
//     token (item 11), and forwarding works on it: a create and
//     heartbeats sent to coord-b are served by coord-a (proxied, and in
//     signed batches);
//   - a batch whose mark names live coord-a with a fresh time and a junk
//     signature is refused 403 by coord-b before one byte of its 16 MiB
//     body is sent (item 3);
//   - requests to coord-b with a mark nobody can prove and
//     X-Coordinator-Unproven-Mark are refused there naming coord-a, and
//     coord-b does not take the group, even with its ownership record
//     free (item 8).
func TestForwardingBetweenProcessesIsAuthenticated(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	rdb := testredis.Shared(t)
	kp := testredis.Prefix(t, rdb)
	bin, err := coordproc.Build(ctx, t.TempDir(), "coordinator")
	if err != nil {
		t.Fatal(err)
	}
	ids := []string{"coord-a", "coord-b"}
	dir := t.TempDir()
	t.Cleanup(func() {
		if t.Failed() {
			for _, id := range ids {
				b, _ := os.ReadFile(filepath.Join(dir, id+".log"))
				t.Logf("%s.log, the end:\n%s", id, b[max(0, len(b)-3000):])
			}
		}
	})
	cfg := coordproc.ServerConfig{Store: coordproc.StoreRedis, KeyPrefix: kp, RedisAddr: testredis.SharedAddr,
		Interval: 300 * time.Millisecond, LeaseTTL: 30 * time.Second}
	servers := map[string]*coordproc.Server{}
	for _, id := range ids {
		s, err := coordproc.StartServer(ctx, bin, dir, id, cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Kill)
		servers[id] = s
	}
	a, b := servers["coord-a"], servers["coord-b"]
	token := adminToken(ctx, t, a.Base)
	eventually.True(t, "each coordinator lists both", func() bool {
		for _, s := range servers {
			st, body, _ := call(ctx, t, http.MethodGet, s.Base+contract.ClusterTemplate, token, "", nil)
			var v contract.ClusterView
			if st != http.StatusOK || json.Unmarshal(body, &v) != nil || len(v.Coordinators) != 2 {
				return false
			}
		}
		return true
	})

	// Item 11: the registry holds public keys only.
	entries, err := rdb.HGetAll(ctx, kp+":coordinators").Result()
	if err != nil || len(entries) != 2 {
		t.Fatalf("registry %v (%v)", entries, err)
	}
	for id, v := range entries {
		tok, _, _ := strings.Cut(v, "\n")
		if raw, err := base64.RawURLEncoding.DecodeString(tok); err != nil || len(raw) != 32 {
			t.Errorf("stored token of %s %q is not a 32-byte public key", id, tok)
		}
	}

	// A group placed on coord-a, created and heartbeated through coord-b.
	var prefix string
	for i := 0; prefix == ""; i++ {
		if p := fmt.Sprintf("%s:f%d", kp, i); func() bool { o, _ := placement.Owner(p, ids); return o == "coord-a" }() {
			prefix = p
		}
	}
	key := group.Key{StreamPrefix: prefix, ConsumerGroup: "g"}
	groupURL := b.Base + contract.GroupPath(url.PathEscape(prefix), "g")
	st, body, h := call(ctx, t, http.MethodPost, groupURL, token, `{"initialShardCount":4,"requestedBy":"e2e"}`, nil)
	if st != http.StatusCreated || h.Get(contract.OwnerHeader) != a.Root {
		t.Fatalf("create through coord-b: %d %s (owner %q)", st, body, h.Get(contract.OwnerHeader))
	}
	heartbeat := func(id string, header http.Header) (contract.HeartbeatResponse, http.Header) {
		req, err := json.Marshal(membersim.New(id, nil).Request())
		if err != nil {
			t.Fatal(err)
		}
		st, body, h := call(ctx, t, http.MethodPost, b.Base+contract.HeartbeatPath(url.PathEscape(prefix), "g", id), "", string(req), header)
		var resp contract.HeartbeatResponse
		if st != http.StatusOK || json.Unmarshal(body, &resp) != nil {
			t.Fatalf("heartbeat %s through coord-b: %d %s", id, st, body)
		}
		return resp, h
	}
	// Until coord-a read coord-b's entry its batches are answered RETRY.
	eventually.True(t, "a heartbeat through coord-b served by coord-a", func() bool {
		resp, h := heartbeat("m1", nil)
		return resp.Status == contract.StatusOK && h.Get(contract.OwnerHeader) == a.Root
	})

	// Item 3: a junk signature is refused before the body.
	bAddr := strings.TrimPrefix(b.Root, "http://")
	junk := make([]byte, 32)
	_, _ = rand.Read(junk)
	st, answer := batchHeadOnly(t, bAddr, http.Header{
		"X-Coordinator-Forwarded-By":      {"coord-a"},
		"X-Coordinator-Forwarded-At":      {strconv.FormatInt(time.Now().Unix(), 10)},
		"X-Coordinator-Forward-Signature": {base64.RawURLEncoding.EncodeToString(junk)},
		"Content-Type":                    {"application/x-coordinator-heartbeat-batch; v=1"},
	}, 16<<20)
	if st != http.StatusForbidden || !strings.Contains(answer, string(contract.CodeNotACoordinator)) {
		t.Errorf("batch with a junk signature: %d %s, want 403 NOT_A_COORDINATOR before its body", st, answer)
	}

	// Item 8: an unproven mark serves nothing of coord-a's group on
	// coord-b, with the ownership record held by coord-a or free.
	unproven := http.Header{"X-Coordinator-Forwarded-By": {"junk"}, "X-Coordinator-Unproven-Mark": {"x"}}
	attack := func(round string) {
		t.Helper()
		for i := range 2 {
			resp, h := heartbeat(fmt.Sprintf("x%s%d", round, i), unproven)
			if resp.Status != contract.StatusRetry || h.Get(contract.OwnerHeader) != a.Root {
				t.Errorf("%s: heartbeat with an unproven mark: %s (owner %q), want RETRY naming coord-a", round, resp.Status, h.Get(contract.OwnerHeader))
			}
		}
		for _, rq := range []struct{ method, url, body string }{
			{http.MethodGet, groupURL, ""},
			{http.MethodPost, groupURL + "/scale", `{"targetShardCount":8,"requestedBy":"e2e","reason":"probe"}`},
		} {
			st, body, h := call(ctx, t, rq.method, rq.url, token, rq.body, unproven)
			if st != http.StatusServiceUnavailable || !strings.Contains(string(body), `"errorCode":"GROUP_OWNED_ELSEWHERE"`) || h.Get(contract.OwnerHeader) != a.Root {
				t.Errorf("%s: %s with an unproven mark: %d %s (owner %q), want 503 GROUP_OWNED_ELSEWHERE naming coord-a", round, rq.method, st, body, h.Get(contract.OwnerHeader))
			}
		}
	}
	ownerKey := kp + ":" + key.HashTag() + ":owner"
	attack("held")
	if err := rdb.HSet(ctx, ownerKey, "coordinator", "", "token", "").Err(); err != nil { // as while coord-a restarts
		t.Fatal(err)
	}
	attack("free")
	if o, err := rdb.HGet(ctx, ownerKey, "coordinator").Result(); err != nil || o == "coord-b" {
		t.Errorf("ownership record names %q (%v)", o, err)
	}
	st, body, _ = call(ctx, t, http.MethodGet, b.Base+contract.ClusterTemplate, token, "", nil)
	var v contract.ClusterView
	if err := json.Unmarshal(body, &v); st != http.StatusOK || err != nil {
		t.Fatalf("GET /cluster on coord-b: %d %s", st, body)
	}
	for _, h := range v.Handovers {
		if h.StreamPrefix == prefix {
			t.Errorf("coord-b took coord-a's group and handed it over: %+v", h)
		}
	}
	if st, body, _ := call(ctx, t, http.MethodGet, groupURL, token, "", nil); st != http.StatusOK {
		t.Errorf("GET through coord-b without the headers: %d %s", st, body)
	}
}

// adminToken logs in as the loopback default admin at base.
func adminToken(ctx context.Context, t *testing.T, base string) string {
	t.Helper()
	st, body, _ := call(ctx, t, http.MethodPost, base+contract.LoginTemplate, "", `{"username":"admin","password":"password"}`, nil)
	var tok struct {
		AccessToken string `json:"accessToken"`
	}
	if err := json.Unmarshal(body, &tok); st != http.StatusOK || err != nil || tok.AccessToken == "" {
		t.Fatalf("login: %d %s", st, body)
	}
	return tok.AccessToken
}

// call sends method url with body (JSON), the Bearer token (if any) and
// header, and returns the answer's status, body and header.
func call(ctx context.Context, t *testing.T, method, url, token, body string, header http.Header) (int, []byte, http.Header) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	return res.StatusCode, b, res.Header
}

// batchHeadOnly sends the request line and header of a batch with
// Content-Length length to addr, and none of its body, and reads the
// answer (a coordinator that waited for the body would never answer; the
// connection's deadline only guards the test against hanging).
func batchHeadOnly(t *testing.T, addr string, header http.Header, length int64) (int, string) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(2 * time.Minute))
	var head bytes.Buffer
	fmt.Fprintf(&head, "POST /internal/cluster/forwarded-heartbeats HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n", addr, length)
	_ = header.Write(&head)
	head.WriteString("\r\n")
	if _, err := conn.Write(head.Bytes()); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer before the body was sent: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
