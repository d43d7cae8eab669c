package attacktest

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/batchwire"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/coordproc"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/eventually"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/freeport"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/testcerts"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/testredis"
	"github.com/redis-stream-coordinator/coordinator/placement"
)

// The bounds the issue sets for the memory attacks (items 2 and 3).
const (
	parallelAttempts = 64
	maxRSSGrowth     = 32 << 20
)

// hangGuard only turns a hang into a failure (a process that never exits,
// a connection never closed); no test asserts how long anything takes.
const hangGuard = 2 * time.Minute

// Credentials of the users the scoped coordinators are configured with.
const (
	rootUser, rootPass     = "root", "root-pw-5f1c"
	viewerUser, viewerPass = "viewer", "viewer-pw-93a0"
	memberAUser, memberAPw = "member-a", "member-a-pw-1d7e"
	memberBUser, memberBPw = "member-b", "member-b-pw-8c44"
	// defaultAdmin is the loopback default principal of a coordinator
	// without api.users.
	defaultAdminUser, defaultAdminPass = "admin", "password"
)

// TestIssue42AttacksAreRefused replays items 1–10 of issue 42 against
// coordinator processes, one subtest per item (each with the
// coordinators it needs; items 1b, 6, 7 and 9 share one with scoped
// users), and asserts each attack is refused.
func TestIssue42AttacksAreRefused(t *testing.T) {
	rdb := testredis.Shared(t)
	ctx := context.Background()
	bin, err := coordproc.Build(ctx, t.TempDir(), "coordinator")
	if err != nil {
		t.Fatal(err)
	}

	// The coordinator with member authentication and scoped users: a
	// stream prefix P with groups ga (member-a, member ids a-…) and gb
	// (member-b, member ids b-…).
	prefix := testredis.Prefix(t, rdb)
	scoped := startCoordinator(t, bin, "scoped", coordproc.ServerConfig{
		Store: coordproc.StoreRedis, KeyPrefix: testredis.Prefix(t, rdb),
		Env: []string{
			"COORDINATOR_API_AUTHENTICATE_MEMBER_API=true",
			"COORDINATOR_API_TOKEN_SECRET=attack-test-secret-0b5d",
			usersEnv(t,
				user{Username: rootUser, Password: rootPass, Roles: []string{"ADMIN"}},
				user{Username: memberAUser, Password: memberAPw, Grants: []grant{{Stream: prefix, Group: "ga", Operations: []string{"heartbeat"}, MemberIDPrefix: "a-"}}},
				user{Username: memberBUser, Password: memberBPw, Grants: []grant{{Stream: prefix, Group: "gb", Operations: []string{"heartbeat"}, MemberIDPrefix: "b-"}}},
			),
		},
	})
	root := basic(rootUser, rootPass)
	for _, g := range []string{"ga", "gb"} {
		createGroup(t, scoped.Base, root, prefix, g, 4)
	}

	t.Run("1a refuses to start off loopback with anonymous members", func(t *testing.T) {
		t.Parallel()
		refusesAnonymousMembersOffLoopback(t, bin)
	})
	t.Run("1b members cannot impersonate or evict other members", func(t *testing.T) {
		t.Parallel()
		membersAreBound(t, scoped, prefix)
	})
	t.Run("2 far tail cursor", func(t *testing.T) {
		t.Parallel()
		farTailCursor(t, bin, rdb)
	})
	t.Run("3 batch route before the signature", func(t *testing.T) {
		t.Parallel()
		unsignedBatches(t, bin, rdb)
	})
	t.Run("4 login flood", func(t *testing.T) {
		t.Parallel()
		loginFlood(t, bin)
	})
	t.Run("5 no forwarding downgrade", func(t *testing.T) {
		t.Parallel()
		noForwardingDowngrade(t, bin, rdb)
	})
	t.Run("6 cross-site requests", func(t *testing.T) {
		t.Parallel()
		crossSiteRequests(t, scoped, prefix)
	})
	t.Run("7 dead letters of another prefix", func(t *testing.T) {
		t.Parallel()
		otherPrefixDeadLetters(t, scoped, rdb, prefix)
	})
	t.Run("8 unproven forwarding mark", func(t *testing.T) {
		t.Parallel()
		unprovenMark(t, bin, rdb)
	})
	t.Run("9 heartbeat lies", func(t *testing.T) {
		t.Parallel()
		heartbeatLies(t, scoped, prefix)
	})
	t.Run("10 slow clients", func(t *testing.T) {
		t.Parallel()
		slowClients(t, bin)
	})
}

// Item 1 (a): a coordinator on 0.0.0.0 with a non-default admin password
// and token secret but authenticate-member-api at its default exits
// non-zero, naming the setting, and never serves.
func refusesAnonymousMembersOffLoopback(t *testing.T, bin string) {
	port, err := freeport.Loopback()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "coordinator.yaml")
	yaml := fmt.Sprintf("coordinator:\n  id: exposed\n  server: {address: \"0.0.0.0:%d\"}\n"+
		"  api: {admin-password: %q, token-secret: %q}\n  store: {type: memory}\n", port, "Sx-"+randomText(t), randomText(t)+randomText(t))
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, "coordinator.log")
	p := runProcess(t, bin, cfg, logPath)
	deadline := time.Now().Add(hangGuard)
	hc := &http.Client{Timeout: 5 * time.Second}
	for {
		select {
		case err := <-p.exited:
			p.exited <- err
			out, _ := os.ReadFile(logPath)
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() <= 0 {
				t.Fatalf("exited with %v, want a non-zero exit:\n%s", err, out)
			}
			if !strings.Contains(string(out), "authenticate-member-api") {
				t.Errorf("its output does not name authenticate-member-api:\n%s", out)
			}
			t.Logf("refused to start (%v): %s", err, firstLine(out, "authenticate-member-api"))
			return
		case <-time.After(20 * time.Millisecond): // the process has not exited: is it serving?
		}
		if res, err := hc.Get(fmt.Sprintf("http://127.0.0.1:%d/readyz", port)); err == nil {
			res.Body.Close()
			out, _ := os.ReadFile(logPath)
			t.Fatalf("serves on 0.0.0.0 with anonymous members (readyz %d):\n%s", res.StatusCode, out)
		}
		if time.Now().After(deadline) {
			t.Fatalf("neither exited nor served within %s", hangGuard)
		}
	}
}

// Item 1 (b): with member authentication on, member-b (heartbeat on gb as
// b-…) can neither heartbeat as a-1 in ga nor make a-1 leave; anonymous
// heartbeats get 401; member-a heartbeats as a-1, and a-1 stays an
// ACTIVE member whatever member-b sent.
func membersAreBound(t *testing.T, s *coordproc.Server, prefix string) {
	memberA, memberB := basic(memberAUser, memberAPw), basic(memberBUser, memberBPw)
	st, resp, body := heartbeat(t, s.Base, memberA, prefix, "ga", "a-1", heartbeatBody("a-1", 0, ""))
	if st != http.StatusOK || resp.Status != contract.StatusOK {
		t.Fatalf("member-a joining ga as a-1: %d %s", st, body)
	}
	epoch := resp.MemberEpoch
	for _, tc := range []struct {
		name, auth, group, member string
		epoch                     int64
		want                      int
	}{
		{"anonymous joins ga", "", "ga", "a-2", 0, http.StatusUnauthorized},
		{"anonymous makes a-1 leave", "", "ga", "a-1", -1, http.StatusUnauthorized},
		{"member-b heartbeats as a-1 in ga", memberB, "ga", "a-1", 0, http.StatusForbidden},
		{"member-b makes a-1 leave", memberB, "ga", "a-1", -1, http.StatusForbidden},
		{"member-b joins ga as b-1", memberB, "ga", "b-1", 0, http.StatusForbidden},
		{"member-b uses a-1 in its own gb", memberB, "gb", "a-1", 0, http.StatusForbidden},
		{"member-a joins ga as b-1", memberA, "ga", "b-1", 0, http.StatusForbidden},
		{"a wrong password", basic(memberAUser, "guess"), "ga", "a-1", -1, http.StatusUnauthorized},
	} {
		st, _, body := heartbeat(t, s.Base, tc.auth, prefix, tc.group, tc.member, heartbeatBody(tc.member, tc.epoch, ""))
		if st != tc.want {
			t.Errorf("%s: %d %s, want %d", tc.name, st, body, tc.want)
		}
	}
	if st, resp, body := heartbeat(t, s.Base, memberB, prefix, "gb", "b-1", heartbeatBody("b-1", 0, "")); st != http.StatusOK || resp.Status != contract.StatusOK {
		t.Errorf("member-b joining its own gb as b-1: %d %s", st, body)
	}

	var members contract.MemberList
	st, raw, _ := call(t, http.DefaultClient, http.MethodGet, s.Base+contract.Expand(contract.MonitoringMembers, prefix, "ga"), basic(rootUser, rootPass), "", nil)
	if st != http.StatusOK || json.Unmarshal(raw, &members) != nil {
		t.Fatalf("members of ga: %d %s", st, raw)
	}
	found := false
	for _, m := range members.Members {
		switch m.MemberID {
		case "a-1":
			found = true
			if m.State != contract.MemberActive || m.MemberEpoch != epoch {
				t.Errorf("a-1 is %s at epoch %d after the attacks, want ACTIVE at %d", m.State, m.MemberEpoch, epoch)
			}
		case "a-2", "b-1":
			t.Errorf("%s joined ga: %+v", m.MemberID, m)
		}
	}
	if !found {
		t.Errorf("a-1 is no member of ga after the attacks: %s", raw)
	}
	if st, resp, body := heartbeat(t, s.Base, memberA, prefix, "ga", "a-1", heartbeatBody("a-1", epoch, "")); st != http.StatusOK || resp.Status != contract.StatusOK {
		t.Errorf("member-a's next heartbeat as a-1: %d %s", st, body)
	}
}

// Item 2: 64 parallel Grafana message reads with a far tail cursor over 4
// shards × 5,000 entries of 2 KB, as a READ user, and 64 of the shard
// message explorer with the same cursor: every answer below 500 and the
// coordinator's RSS within 32 MiB of its baseline. Then pages that read
// their whole budget (largeEntries).
func farTailCursor(t *testing.T, bin string, rdb *redis.Client) {
	const shards, perShard, entrySize = 4, 5000, 2048
	prefix := testredis.Prefix(t, rdb)
	s := startCoordinator(t, bin, "far-tail", coordproc.ServerConfig{
		Store: coordproc.StoreRedis, KeyPrefix: testredis.Prefix(t, rdb),
		Env: []string{usersEnv(t,
			user{Username: rootUser, Password: rootPass, Roles: []string{"ADMIN"}},
			user{Username: viewerUser, Password: viewerPass, Roles: []string{"READ"}},
		)},
	})
	createGroup(t, s.Base, basic(rootUser, rootPass), prefix, "g", shards)
	ctx := context.Background()
	blob := strings.Repeat("x", entrySize)
	for shard := range shards {
		key := prefix + ":" + strconv.Itoa(shard)
		for from := 0; from < perShard; from += 1000 {
			pipe := rdb.Pipeline()
			for range min(1000, perShard-from) {
				pipe.XAdd(ctx, &redis.XAddArgs{Stream: key, Values: []any{"v", blob}})
			}
			if _, err := pipe.Exec(ctx); err != nil {
				t.Fatalf("filling %s: %v", key, err)
			}
		}
	}
	for shard := range shards {
		if n, err := rdb.XLen(ctx, prefix+":"+strconv.Itoa(shard)).Result(); err != nil || n != perShard {
			t.Fatalf("shard %d holds %d entries (%v), want %d", shard, n, err, perShard)
		}
	}
	viewer := basic(viewerUser, viewerPass)
	grafana := s.Base + contract.GrafanaPrefix + "/messages?streamPrefix=" + url.QueryEscape(prefix) + "&consumerGroup=g&shardIndex=all&limit=1"
	shard0 := s.Base + contract.Expand(contract.MonitoringMessages, prefix, "g", "0") + "?limit=1"
	const far = "&cursor=__rsc_tail__:999999999"
	// The routes' ordinary first pages, before the baseline: the code
	// paths are warm, so what grows after it is the attack's.
	for _, u := range []string{grafana, shard0} {
		if st, body, _ := call(t, http.DefaultClient, http.MethodGet, u, viewer, "", nil); st != http.StatusOK {
			t.Fatalf("GET %s: %d %s", u, st, body)
		}
	}
	hc := parallelClient(t)
	for _, tc := range []struct{ name, url string }{
		{"grafana messages, shardIndex=all", grafana + far},
		{"shard 0 messages", shard0 + far},
	} {
		var statuses []int
		var failures []string
		var sample []byte
		var mu sync.Mutex
		base, peak := peakRSS(t, s.Pid(), func() {
			parallel(parallelAttempts, func(int) {
				st, body, err := try(hc, http.MethodGet, tc.url, viewer, nil, nil)
				mu.Lock()
				defer mu.Unlock()
				statuses = append(statuses, st)
				if sample == nil {
					sample = body
				}
				if err != nil || st >= 500 {
					failures = append(failures, fmt.Sprintf("%d %v %.200s", st, err, body))
				}
			})
		})
		t.Logf("%s, %d parallel reads with a far tail cursor: RSS %s → peak %s (+%s); answers %s, e.g. %.300s",
			tc.name, parallelAttempts, mib(base), mib(peak), mib(peak-base), histogram(statuses), sample)
		if len(failures) > 0 {
			t.Errorf("%s: %d answers failed or were 5xx, e.g. %s", tc.name, len(failures), failures[0])
		}
		if peak-base > maxRSSGrowth {
			t.Errorf("%s: RSS grew by %s over its baseline %s, want at most %s", tc.name, mib(peak-base), mib(base), mib(maxRSSGrowth))
		}
	}
	largeEntries(t, s, rdb, hc, viewer)
}

// largeEntries, item 2 with pages that read their whole budget: 64
// parallel Grafana message reads of shardIndex=all and limit 1000 over 4
// shards × 300 entries of 64 KB, as a READ user (each reads its 4 MiB,
// which the requests share from the coordinator's pool of
// streams.MaxHeldReadBytes). Every answer is 200, or 503 REQUEST_TIMEOUT
// with Retry-After for a request that did not get its share in time, at
// least one is 200, and the RSS stays within 32 MiB of its baseline,
// taken after one such read, so what grows is what parallel reads add.
func largeEntries(t *testing.T, s *coordproc.Server, rdb *redis.Client, hc *http.Client, viewer string) {
	const shards, perShard, entrySize = 4, 300, 64 << 10
	prefix := testredis.Prefix(t, rdb)
	createGroup(t, s.Base, basic(rootUser, rootPass), prefix, "g", shards)
	ctx := context.Background()
	blob := strings.Repeat("x", entrySize)
	for shard := range shards {
		pipe := rdb.Pipeline()
		for range perShard {
			pipe.XAdd(ctx, &redis.XAddArgs{Stream: prefix + ":" + strconv.Itoa(shard), Values: []any{"v", blob}})
		}
		if _, err := pipe.Exec(ctx); err != nil {
			t.Fatalf("filling shard %d: %v", shard, err)
		}
	}
	u := s.Base + contract.GrafanaPrefix + "/messages?streamPrefix=" + url.QueryEscape(prefix) + "&consumerGroup=g&shardIndex=all&limit=1000"
	if st, body, header := call(t, http.DefaultClient, http.MethodGet, u, viewer, "", nil); st != http.StatusOK || header.Get("X-Coordinator-Read-Truncated") != "true" {
		t.Fatalf("GET %s: %d, truncated %q, %.300s", u, st, header.Get("X-Coordinator-Read-Truncated"), body)
	}
	var statuses []int
	var failures []string
	var mu sync.Mutex
	base, peak := peakRSS(t, s.Pid(), func() {
		parallel(parallelAttempts, func(int) {
			st, body, retryAfter, err := func() (int, []byte, string, error) {
				req, err := http.NewRequest(http.MethodGet, u, nil)
				if err != nil {
					return 0, nil, "", err
				}
				req.Header.Set("Authorization", viewer)
				res, err := hc.Do(req)
				if err != nil {
					return 0, nil, "", err
				}
				defer res.Body.Close()
				b, err := io.ReadAll(res.Body)
				return res.StatusCode, b, res.Header.Get("Retry-After"), err
			}()
			mu.Lock()
			defer mu.Unlock()
			statuses = append(statuses, st)
			shed := st == http.StatusServiceUnavailable && retryAfter != "" && bytes.Contains(body, []byte(contract.CodeRequestTimeout))
			if err != nil || (st != http.StatusOK && !shed) {
				failures = append(failures, fmt.Sprintf("%d %v %.200s", st, err, body))
			}
		})
	})
	t.Logf("grafana messages of 64 KB entries, shardIndex=all, limit 1000, %d parallel reads: RSS %s → peak %s (+%s); answers %s",
		parallelAttempts, mib(base), mib(peak), mib(peak-base), histogram(statuses))
	if len(failures) > 0 {
		t.Errorf("%d answers failed, or were neither 200 nor 503 REQUEST_TIMEOUT with Retry-After, e.g. %s", len(failures), failures[0])
	}
	if !slices.Contains(statuses, http.StatusOK) {
		t.Errorf("no read was served: %s", histogram(statuses))
	}
	if peak-base > maxRSSGrowth {
		t.Errorf("RSS grew by %s over its baseline %s, want at most %s", mib(peak-base), mib(base), mib(maxRSSGrowth))
	}
}

// Item 3: 64 parallel POSTs of 16 MiB bodies to the batch route, naming
// the coordinator's own live id (public at /actuator/info) with a fresh
// time and the body's real digest but a junk signature: none is served
// (no 2xx), and the coordinator's RSS stays within 32 MiB of its
// baseline.
func unsignedBatches(t *testing.T, bin string, rdb *redis.Client) {
	s := startCoordinator(t, bin, "batches", coordproc.ServerConfig{Store: coordproc.StoreRedis, KeyPrefix: testredis.Prefix(t, rdb)})
	admin := basic(defaultAdminUser, defaultAdminPass)
	var info struct {
		CoordinatorID string `json:"coordinatorId"`
	}
	st, raw, _ := call(t, http.DefaultClient, http.MethodGet, s.Root+"/actuator/info", "", "", nil)
	if st != http.StatusOK || json.Unmarshal(raw, &info) != nil || info.CoordinatorID == "" {
		t.Fatalf("/actuator/info: %d %s", st, raw)
	}
	// The sender id must be live in the coordinator's own view.
	eventually.True(t, "the coordinator lists itself", func() bool {
		v, ok := clusterView(t, http.DefaultClient, s.Base, admin)
		return ok && coordinatorOf(v, info.CoordinatorID) != nil
	})
	body := make([]byte, 16<<20)
	digest := sha256.Sum256(body)
	junk := make([]byte, sha256.Size)
	_, _ = rand.Read(junk)
	header := http.Header{
		"X-Coordinator-Forwarded-By":        {info.CoordinatorID},
		"X-Coordinator-Forward-Body-Digest": {base64.RawURLEncoding.EncodeToString(digest[:])},
		"X-Coordinator-Forward-Signature":   {base64.RawURLEncoding.EncodeToString(junk)},
		"Content-Type":                      {batchwire.ContentType},
	}
	hc := parallelClient(t)
	var statuses []int
	var served []string
	transportErrors := 0
	var mu sync.Mutex
	base, peak := peakRSS(t, s.Pid(), func() {
		parallel(parallelAttempts, func(int) {
			h := header.Clone()
			h.Set("X-Coordinator-Forwarded-At", strconv.FormatInt(time.Now().Unix(), 10))
			st, answer, err := try(hc, http.MethodPost, s.Root+"/internal/cluster/forwarded-heartbeats", "", bytes.NewReader(body), h)
			mu.Lock()
			defer mu.Unlock()
			if err != nil { // the coordinator answered and closed before taking the whole body
				transportErrors++
				return
			}
			statuses = append(statuses, st)
			if st >= 200 && st < 300 {
				served = append(served, fmt.Sprintf("%d %.200s", st, answer))
			}
		})
	})
	t.Logf("%d parallel 16 MiB batches with a junk signature: RSS %s → peak %s (+%s); answers %s, %d cut off before an answer",
		parallelAttempts, mib(base), mib(peak), mib(peak-base), histogram(statuses), transportErrors)
	if len(served) > 0 {
		t.Errorf("%d batches with a junk signature answered 2xx, e.g. %s", len(served), served[0])
	}
	if peak-base > maxRSSGrowth {
		t.Errorf("RSS grew by %s over its baseline %s, want at most %s", mib(peak-base), mib(base), mib(maxRSSGrowth))
	}
	if st, body, _ := call(t, http.DefaultClient, http.MethodGet, s.Root+"/healthz", "", "", nil); st != http.StatusOK {
		t.Errorf("healthz after the attack: %d %s", st, body)
	}
}

// Item 4: 1,000 wrong-password logins from one address, and after every
// 10th a right login (whose token then works) and a right Basic request:
// every right one succeeds, and every wrong one past the throttle's
// per-user limit is answered 429. The window is an hour, so that the
// flood stays in one window however slowly it runs.
func loginFlood(t *testing.T, bin string) {
	const perUser, perAddress = 5, 20
	s := startCoordinator(t, bin, "login-flood", coordproc.ServerConfig{
		Store: coordproc.StoreMemory, KeyPrefix: "attacktest-login",
		Env: []string{
			"COORDINATOR_API_LOGIN_THROTTLE_MAX_FAILURES_PER_USER=" + strconv.Itoa(perUser),
			"COORDINATOR_API_LOGIN_THROTTLE_MAX_FAILURES_PER_ADDRESS=" + strconv.Itoa(perAddress),
			"COORDINATOR_API_LOGIN_THROTTLE_WINDOW=1h",
		},
	})
	hc := &http.Client{Timeout: hangGuard}
	login := s.Base + contract.LoginTemplate
	wrong := map[int]int{}
	var wrongErrors, rightErrors []string
	start := time.Now()
	for i := 1; i <= 1000; i++ {
		st, body, err := try(hc, http.MethodPost, login, "", strings.NewReader(fmt.Sprintf(`{"username":%q,"password":"guess-%d"}`, defaultAdminUser, i)), jsonHeader())
		wrong[st]++
		switch want := http.StatusUnauthorized; {
		case err != nil:
			wrongErrors = append(wrongErrors, fmt.Sprintf("guess %d: %v", i, err))
		case i > perUser && st != http.StatusTooManyRequests, i <= perUser && st != want:
			wrongErrors = append(wrongErrors, fmt.Sprintf("guess %d: %d %.200s", i, st, body))
		}
		if i%10 != 0 {
			continue
		}
		st, body, err = try(hc, http.MethodPost, login, "", strings.NewReader(fmt.Sprintf(`{"username":%q,"password":%q}`, defaultAdminUser, defaultAdminPass)), jsonHeader())
		var tok contract.Login
		if err != nil || st != http.StatusOK || json.Unmarshal(body, &tok) != nil || tok.AccessToken == "" {
			rightErrors = append(rightErrors, fmt.Sprintf("right login after guess %d: %d %v %.200s", i, st, err, body))
			continue
		}
		for _, auth := range []string{basic(defaultAdminUser, defaultAdminPass), "Bearer " + tok.AccessToken} {
			if st, body, err := try(hc, http.MethodGet, s.Base+contract.MonitoringGroups, auth, nil, nil); err != nil || st != http.StatusOK {
				rightErrors = append(rightErrors, fmt.Sprintf("GET as admin (%s) after guess %d: %d %v %.200s", strings.Fields(auth)[0], i, st, err, body))
			}
		}
	}
	t.Logf("1,000 wrong logins and 100 right ones (each with a Basic and a Bearer request) in %s: wrong ones answered %s",
		time.Since(start).Round(time.Millisecond), histogram(expand(wrong)))
	if len(rightErrors) > 0 {
		t.Errorf("%d right credentials refused, e.g. %s", len(rightErrors), strings.Join(rightErrors[:min(3, len(rightErrors))], "; "))
	}
	if len(wrongErrors) > 0 {
		t.Errorf("%d wrong logins not answered 401 (the first %d) or 429 (the rest), e.g. %s", len(wrongErrors), perUser, strings.Join(wrongErrors[:min(3, len(wrongErrors))], "; "))
	}
}

// Item 5: coordinators tls (server.tls) and plain (advertising http://,
// through a proxy that records what reaches it) on one store: requests
// for a group placed on plain, sent to tls with an Authorization header,
// are refused there, nothing reaches plain with a credential, and tls's
// /cluster shows plain's forwarding as refused.
func noForwardingDowngrade(t *testing.T, bin string, rdb *redis.Client) {
	kp := testredis.Prefix(t, rdb)
	dir := t.TempDir()
	ca := testcerts.NewCA(t, "attacktest CA")
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	ca.Issue(t, "coordinator tls").Write(t, certFile, keyFile)
	tlsClient := &http.Client{Timeout: hangGuard, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool(), MinVersion: tls.VersionTLS12}}}
	t.Cleanup(tlsClient.CloseIdleConnections)

	// The proxy plain advertises; it passes what it receives on to plain
	// (whose port is known once plain started) and records it.
	var plainAt atomic.Pointer[url.URL]
	plainAt.Store(&url.URL{Scheme: "http", Host: "127.0.0.1:1"}) // until plain listens
	rec := &recorder{}
	proxy := httptest.NewServer(rec.wrap(&httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(plainAt.Load()) }}))
	t.Cleanup(proxy.Close)

	store := storeYAML(kp)
	startProcess(t, bin, dir, "plain", "http", http.DefaultClient, func(port int) string {
		plainAt.Store(&url.URL{Scheme: "http", Host: "127.0.0.1:" + strconv.Itoa(port)})
		return "coordinator:\n  id: plain\n  server: {address: \"127.0.0.1:" + strconv.Itoa(port) + "\"}\n" +
			"  cluster: {advertise-url: \"" + proxy.URL + "\"}\n" + store
	})
	tlsPort := startProcess(t, bin, dir, "tls", "https", tlsClient, func(port int) string {
		return "coordinator:\n  id: tls\n  server:\n    address: \"127.0.0.1:" + strconv.Itoa(port) + "\"\n" +
			"    tls: {cert-file: \"" + certFile + "\", key-file: \"" + keyFile + "\"}\n" + store
	})
	tlsRoot := "https://127.0.0.1:" + strconv.Itoa(tlsPort)
	tlsBase := tlsRoot + contract.BasePath
	admin := basic(defaultAdminUser, defaultAdminPass)
	eventually.True(t, "tls lists plain at the proxy's http URL", func() bool {
		v, ok := clusterView(t, tlsClient, tlsBase, admin)
		p := coordinatorOf(v, "plain")
		return ok && p != nil && p.URL == proxy.URL && coordinatorOf(v, "tls") != nil
	})

	prefix := placedOn(t, kp, "plain", []string{"plain", "tls"})
	before := rec.count()
	st, body, h := call(t, tlsClient, http.MethodGet, tlsBase+contract.GroupPath(prefix, "g"), admin, "", nil)
	if st < 400 {
		t.Errorf("GET of a group placed on plain, at tls: %d %s, want it refused", st, body)
	}
	if o := h.Get(contract.OwnerHeader); strings.HasPrefix(o, "http://") {
		t.Errorf("the refusal names plain's http URL %q as the owner (a client following it sends its credentials in clear)", o)
	}
	t.Logf("GET at tls: %d %s", st, body)
	st, resp, body := heartbeatVia(t, tlsClient, tlsBase, "Bearer member-token-of-the-victim", prefix, "g", "m-1", heartbeatBody("m-1", 0, ""))
	if st == http.StatusOK && resp.Status == contract.StatusOK {
		t.Errorf("a heartbeat of a group placed on plain, at tls, was served: %s", body)
	}
	t.Logf("heartbeat at tls: %d %s", st, body)
	if leaked := rec.credentials(); len(leaked) > 0 {
		t.Errorf("plain received credentials over http: %s", strings.Join(leaked, "; "))
	}
	if n := rec.count() - before; n > 0 {
		t.Errorf("%d requests were forwarded to plain over http: %s", n, strings.Join(rec.paths(), ", "))
	}
	eventually.True(t, "tls's /cluster shows forwarding to plain refused", func() bool {
		v, ok := clusterView(t, tlsClient, tlsBase, admin)
		p := coordinatorOf(v, "plain")
		return ok && p != nil && p.ForwardingRefused != ""
	})
	v, _ := clusterView(t, tlsClient, tlsBase, admin)
	t.Logf("tls's view of plain: %+v", *coordinatorOf(v, "plain"))
}

// Item 6: state-changing requests a browser could be made to send from
// another site (a form's Content-Type, a foreign Origin, Sec-Fetch-Site
// cross-site) are refused 415 and 403 and create nothing; a 401 carries
// no Basic challenge.
func crossSiteRequests(t *testing.T, s *coordproc.Server, prefix string) {
	root := basic(rootUser, rootPass)
	create := `{"requestedBy":"attack","initialShardCount":1}`
	for _, tc := range []struct {
		name, group string
		header      http.Header
		want        int
	}{
		{"text/plain", "csrf-text", http.Header{"Content-Type": {"text/plain"}}, http.StatusUnsupportedMediaType},
		{"form", "csrf-form", http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}, http.StatusUnsupportedMediaType},
		{"multipart", "csrf-multipart", http.Header{"Content-Type": {"multipart/form-data; boundary=x"}}, http.StatusUnsupportedMediaType},
		{"foreign origin", "csrf-origin", http.Header{"Content-Type": {"application/json"}, "Origin": {"https://evil.example"}}, http.StatusForbidden},
		{"null origin", "csrf-null", http.Header{"Content-Type": {"application/json"}, "Origin": {"null"}}, http.StatusForbidden},
		{"cross-site fetch", "csrf-fetch", http.Header{"Content-Type": {"application/json"}, "Sec-Fetch-Site": {"cross-site"}}, http.StatusForbidden},
	} {
		path := contract.GroupPath(prefix, tc.group)
		st, body, _ := call(t, http.DefaultClient, http.MethodPost, s.Base+path, root, create, tc.header)
		if st != tc.want {
			t.Errorf("%s create: %d %s, want %d", tc.name, st, body, tc.want)
		}
		if st, body, _ := call(t, http.DefaultClient, http.MethodGet, s.Base+path, root, "", nil); st != http.StatusNotFound {
			t.Errorf("%s: the group %s after the refused create: %d %s, want 404", tc.name, tc.group, st, body)
		}
	}
	if st, _, body := heartbeat(t, s.Base, basic(memberAUser, memberAPw), prefix, "ga", "a-csrf", heartbeatBody("a-csrf", 0, ""), "Content-Type", "text/plain"); st != http.StatusUnsupportedMediaType {
		t.Errorf("text/plain heartbeat: %d %s, want 415", st, body)
	}
	// The same request from the API's own origin is served.
	origin := http.Header{"Content-Type": {"application/json"}, "Origin": {s.Root}, "Sec-Fetch-Site": {"same-origin"}}
	if st, body, _ := call(t, http.DefaultClient, http.MethodPost, s.Base+contract.GroupPath(prefix, "csrf-same-origin"), root, create, origin); st != http.StatusCreated {
		t.Errorf("same-origin create: %d %s, want 201", st, body)
	}
	st, body, h := call(t, http.DefaultClient, http.MethodGet, s.Base+contract.MonitoringGroups, "", "", nil)
	if st != http.StatusUnauthorized {
		t.Errorf("anonymous GET: %d %s, want 401", st, body)
	}
	if ch := h.Values("Www-Authenticate"); len(ch) > 0 {
		t.Errorf("a 401 carries the challenge %q (browsers would cache Basic credentials)", ch)
	}
}

// Item 7: for group P/ga, entries of P-eu:0 (a shard of prefix P-eu) can
// be neither deleted, redriven nor paged through ga's dead-letter routes,
// whether they name a group or none.
func otherPrefixDeadLetters(t *testing.T, s *coordproc.Server, rdb *redis.Client, prefix string) {
	ctx := context.Background()
	other := prefix + "-eu:0"
	var ids []string
	for _, fields := range [][]any{{"v", "keep"}, {"group", "ga", "v", "keep"}} {
		id, err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: other, Values: fields}).Result()
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	root := basic(rootUser, rootPass)
	action, _ := json.Marshal(contract.DeadLetterAction{IDs: ids, Stream: other, RequestedBy: "attack", Reason: "issue 42 item 7"})
	for _, route := range []string{contract.GroupDeleteDead, contract.GroupRedrive} {
		st, body, _ := call(t, http.DefaultClient, http.MethodPost, s.Base+contract.Expand(route, prefix, "ga"), root, string(action), nil)
		if st < 400 || st >= 500 {
			t.Errorf("POST %s naming %s: %d %s, want 4xx", route, other, st, body)
		}
		if n, err := rdb.XLen(ctx, other).Result(); err != nil || n != int64(len(ids)) {
			t.Errorf("after POST %s: %s holds %d entries (%v), want %d", route, other, n, err, len(ids))
		}
	}
	page := s.Base + contract.Expand(contract.MonitoringDeadLetter, prefix, "ga") + "?stream=" + url.QueryEscape(other)
	for _, u := range []string{page, page + "&allGroups=true"} {
		if st, body, _ := call(t, http.DefaultClient, http.MethodGet, u, root, "", nil); st < 400 || st >= 500 || strings.Contains(string(body), "keep") {
			t.Errorf("GET %s: %d %s, want 4xx", u, st, body)
		}
	}
	// The group's own dead-letter stream is still served.
	if st, body, _ := call(t, http.DefaultClient, http.MethodGet, s.Base+contract.Expand(contract.MonitoringDeadLetter, prefix, "ga"), root, "", nil); st != http.StatusOK {
		t.Errorf("GET of ga's own dead letters: %d %s", st, body)
	}
}

// Item 8: coordinators c8-a and c8-b on one store, a group placed on and
// owned by c8-a: requests to c8-b with X-Coordinator-Forwarded-By: junk
// and X-Coordinator-Unproven-Mark are not served there (their answers
// name c8-a), and c8-b does not take the group, neither while c8-a holds
// its ownership record nor once the record is free.
func unprovenMark(t *testing.T, bin string, rdb *redis.Client) {
	kp := testredis.Prefix(t, rdb)
	ids := []string{"c8-a", "c8-b"}
	servers := map[string]*coordproc.Server{}
	for _, id := range ids {
		servers[id] = startCoordinator(t, bin, id, coordproc.ServerConfig{Store: coordproc.StoreRedis, KeyPrefix: kp})
	}
	a, b := servers["c8-a"], servers["c8-b"]
	admin := basic(defaultAdminUser, defaultAdminPass)
	eventually.True(t, "each coordinator lists both", func() bool {
		for _, s := range servers {
			if v, ok := clusterView(t, http.DefaultClient, s.Base, admin); !ok || len(v.Coordinators) != 2 {
				return false
			}
		}
		return true
	})
	prefix := placedOn(t, kp, "c8-a", ids)
	createGroup(t, a.Base, admin, prefix, "g", 4)
	owned := func(s *coordproc.Server) (contract.ClusterGroup, bool) {
		v, ok := clusterView(t, http.DefaultClient, s.Base, admin)
		for _, g := range v.Groups {
			if ok && g.StreamPrefix == prefix && g.ConsumerGroup == "g" {
				return g, true
			}
		}
		return contract.ClusterGroup{}, false
	}
	eventually.True(t, "both see the group owned by c8-a", func() bool {
		ga, okA := owned(a)
		gb, okB := owned(b)
		return okA && okB && ga.Owner == "c8-a" && gb.Owner == "c8-a" && gb.PlacedOn == "c8-a"
	})
	unproven := http.Header{"X-Coordinator-Forwarded-By": {"junk"}, "X-Coordinator-Unproven-Mark": {"x"}}
	attack := func(round string) {
		t.Helper()
		for i := range 2 {
			member := fmt.Sprintf("x-%s-%d", round, i)
			st, raw, h := call(t, http.DefaultClient, http.MethodPost, b.Base+contract.HeartbeatPath(prefix, "g", member), "", heartbeatBody(member, 0, ""), unproven)
			// RETRY naming c8-a, or (forwarded) c8-a's own answer: an
			// answer of c8-b's own would name c8-b.
			if st >= 500 || h.Get(contract.OwnerHeader) != a.Root {
				t.Errorf("%s: heartbeat %s with an unproven mark at c8-b: %d %s (owner %q), want an answer naming c8-a %s",
					round, member, st, raw, h.Get(contract.OwnerHeader), a.Root)
			}
		}
		for _, rq := range []struct{ method, path, body string }{
			{http.MethodGet, contract.GroupPath(prefix, "g"), ""},
			{http.MethodPost, contract.Expand(contract.GroupScale, prefix, "g"), `{"targetShardCount":8,"requestedBy":"attack","reason":"probe"}`},
		} {
			st, body, h := call(t, http.DefaultClient, rq.method, b.Base+rq.path, admin, rq.body, unproven)
			if h.Get(contract.OwnerHeader) != a.Root {
				t.Errorf("%s: %s %s with an unproven mark at c8-b: %d %s (owner %q), want an answer naming c8-a %s",
					round, rq.method, rq.path, st, body, h.Get(contract.OwnerHeader), a.Root)
			}
		}
	}
	attack("held")
	ctx := context.Background()
	ownerKey := kp + ":" + group.Key{StreamPrefix: prefix, ConsumerGroup: "g"}.HashTag() + ":owner"
	if n, err := rdb.Exists(ctx, ownerKey).Result(); err != nil || n != 1 {
		t.Fatalf("ownership record %s: %d %v", ownerKey, n, err)
	}
	// The record free, as while c8-a restarts.
	if err := rdb.HSet(ctx, ownerKey, "coordinator", "", "token", "").Err(); err != nil {
		t.Fatal(err)
	}
	attack("free")
	if o, err := rdb.HGet(ctx, ownerKey, "coordinator").Result(); err != nil || o == "c8-b" {
		t.Errorf("the ownership record names %q (%v) after the attacks", o, err)
	}
	if g, ok := owned(b); ok && g.Owner == "c8-b" {
		t.Errorf("c8-b took the group: %+v", g)
	}
	if v, ok := clusterView(t, http.DefaultClient, b.Base, admin); ok {
		for _, h := range v.Handovers {
			if h.StreamPrefix == prefix {
				t.Errorf("c8-b took c8-a's group and handed it over: %+v", h)
			}
		}
	}
}

// Item 9: a member's heartbeat claiming a runtimeMaxConcurrency of 2^62,
// or progress updated at 1e300, is INVALID_REQUEST and joins nothing.
func heartbeatLies(t *testing.T, s *coordproc.Server, prefix string) {
	memberA := basic(memberAUser, memberAPw)
	progress := `,"shardProgress":[{"shard":{"shardIndex":0},"pendingCount":0,"updatedAt":%s}]`
	for _, tc := range []struct{ name, member, body string }{
		{"runtimeMaxConcurrency 2^62", "a-9",
			strings.Replace(heartbeatBody("a-9", 0, ""), `"runtimeMaxConcurrency":1`, `"runtimeMaxConcurrency":4611686018427387904`, 1)},
		{"availableConcurrency 2^62", "a-9",
			strings.Replace(heartbeatBody("a-9", 0, ""), `"availableConcurrency":1`, `"availableConcurrency":4611686018427387904`, 1)},
		{"updatedAt 1e300", "a-9", heartbeatBody("a-9", 0, fmt.Sprintf(progress, "1e300"))},
		{"updatedAt year 9999", "a-9", heartbeatBody("a-9", 0, fmt.Sprintf(progress, `"9999-01-01T00:00:00Z"`))},
	} {
		if !strings.Contains(tc.body, "4611686018427387904") && !strings.Contains(tc.body, "updatedAt") {
			t.Fatalf("%s: the lie is not in the request %s", tc.name, tc.body)
		}
		st, resp, body := heartbeat(t, s.Base, memberA, prefix, "ga", tc.member, tc.body)
		var e contract.ErrorBody
		_ = json.Unmarshal(body, &e)
		if !(st == http.StatusBadRequest && e.ErrorCode == contract.CodeInvalidRequest) && !(st == http.StatusOK && resp.Status == contract.StatusInvalidRequest) {
			t.Errorf("%s: %d %s, want INVALID_REQUEST", tc.name, st, body)
		}
	}
	var members contract.MemberList
	st, raw, _ := call(t, http.DefaultClient, http.MethodGet, s.Base+contract.Expand(contract.MonitoringMembers, prefix, "ga"), basic(rootUser, rootPass), "", nil)
	if st != http.StatusOK || json.Unmarshal(raw, &members) != nil {
		t.Fatalf("members of ga: %d %s", st, raw)
	}
	for _, m := range members.Members {
		if m.MemberID == "a-9" {
			t.Errorf("a-9 joined with a lie: %+v", m)
		}
	}
}

// Item 10: with server.read-timeout and read-header-timeout 1s, a body or
// a header trickled a byte every 200 ms is cut off (the server closes the
// connection); with server.max-connections-per-address 8, more
// connections from 127.0.0.1 are closed unanswered.
func slowClients(t *testing.T, bin string) {
	const maxConns = 8
	s := startCoordinator(t, bin, "slow-clients", coordproc.ServerConfig{
		Store: coordproc.StoreMemory, KeyPrefix: "attacktest-slow",
		Env: []string{
			"COORDINATOR_SERVER_READ_TIMEOUT=1s",
			"COORDINATOR_SERVER_READ_HEADER_TIMEOUT=1s",
			"COORDINATOR_SERVER_MAX_CONNECTIONS_PER_ADDRESS=" + strconv.Itoa(maxConns),
		},
	})
	addr := strings.TrimPrefix(s.Root, "http://")
	hbPath := contract.BasePath + contract.HeartbeatPath("orders", "g", "m")
	for _, tc := range []struct{ name, head, trickle string }{
		{"body", "POST " + hbPath + " HTTP/1.1\r\nHost: coordinator\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n{", " "},
		{"header", "POST " + hbPath + " HTTP/1.1\r\nHost: coordinator\r\n", "X"},
	} {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(conn, tc.head); err != nil {
			t.Fatal(err)
		}
		stop := make(chan struct{})
		var writer sync.WaitGroup
		writer.Go(func() { // a byte every 200 ms for as long as the server takes them
			tick := time.NewTicker(200 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-stop:
					return
				case <-tick.C:
					if _, err := io.WriteString(conn, tc.trickle); err != nil {
						return
					}
				}
			}
		})
		answer, closed := readUntilClosed(conn)
		close(stop)
		writer.Wait()
		conn.Close()
		if !closed {
			t.Errorf("trickled %s: the server kept the connection open for %s (read %q)", tc.name, hangGuard, answer)
		} else if strings.HasPrefix(answer, "HTTP/1.1 2") {
			t.Errorf("trickled %s answered %q", tc.name, answer)
		} else {
			t.Logf("trickled %s: closed by the server after %q", tc.name, firstLine([]byte(answer), "HTTP"))
		}
	}

	// Connections held open, each after one answered request; the ones
	// over the cap are closed without an answer. One more slot than the
	// test's own may be taken by an idle keep-alive connection that
	// coordproc's readiness probe left in http.DefaultClient's pool.
	admitted, refused := 0, 0
	for i := range 2 * maxConns {
		conn, err := net.Dial("tcp", addr)
		if err != nil { // refused at connect: also refused
			refused++
			continue
		}
		t.Cleanup(func() { conn.Close() })
		_ = conn.SetDeadline(time.Now().Add(hangGuard))
		_, _ = io.WriteString(conn, "GET /healthz HTTP/1.1\r\nHost: coordinator\r\n\r\n")
		r := bufio.NewReader(conn)
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				t.Fatalf("connection %d: neither answered nor closed within %s", i+1, hangGuard)
			}
			refused++
			continue
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("connection %d: healthz %d", i+1, resp.StatusCode)
		}
		if refused > 0 {
			t.Errorf("connection %d answered after an earlier one was refused (%d admitted)", i+1, admitted)
		}
		admitted++
	}
	t.Logf("%d connections from one address: %d served, %d closed unanswered (cap %d)", 2*maxConns, admitted, refused, maxConns)
	if admitted == 0 || admitted > maxConns {
		t.Errorf("%d connections held open from one address, want 1..%d", admitted, maxConns)
	}
}

// readUntilClosed reads c until the server closes it (EOF or a reset:
// closed true) or hangGuard passes (closed false).
func readUntilClosed(c net.Conn) (string, bool) {
	_ = c.SetReadDeadline(time.Now().Add(hangGuard))
	got, err := io.ReadAll(c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return string(got), false
	}
	return string(got), true
}

// ---- coordinators ----

// startCoordinator starts bin through coordproc with c (Redis on the
// shared server, a heartbeat interval of 1 s and a member lease of 30 s
// unless c sets them), stopped at cleanup, and logs its log's end when
// the test failed.
func startCoordinator(t *testing.T, bin, name string, c coordproc.ServerConfig) *coordproc.Server {
	t.Helper()
	c.RedisAddr = testredis.SharedAddr
	if c.Interval == 0 {
		c.Interval = time.Second
	}
	if c.LeaseTTL == 0 {
		c.LeaseTTL = 30 * time.Second
	}
	if c.ID == "" {
		c.ID = name
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	s, err := coordproc.StartServer(ctx, bin, dir, name, c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Logf("stop %s: %v", name, err)
		}
		if t.Failed() {
			logTail(t, name, filepath.Join(dir, name+".log"))
		}
	})
	return s
}

// process is a coordinator run from bin directly (runProcess,
// startProcess), for configurations coordproc does not write: a
// non-loopback address, server.tls, an advertise-url of the test's
// choosing.
type process struct {
	cmd    *exec.Cmd
	exited chan error // receives Wait's result once; put back by its reader
}

// runProcess starts bin -config cfg with the test's environment, its
// output going to logPath; it is stopped (SIGTERM, then SIGKILL) at
// cleanup.
func runProcess(t *testing.T, bin, cfg, logPath string) *process {
	t.Helper()
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	cmd := exec.Command(bin, "-config", cfg)
	cmd.Env = os.Environ()
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &process{cmd: cmd, exited: make(chan error, 1)}
	go func() { p.exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-p.exited:
			p.exited <- err
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			p.exited <- <-p.exited
		}
	})
	return p
}

// startProcess runs bin (runProcess) with the configuration yamlFor
// gives for a free loopback port, written to dir/<name>.yaml, and returns
// that port once scheme://127.0.0.1:<port>/readyz answers 200 through hc.
// A port taken by another process before the coordinator bound it is
// replaced by another one.
func startProcess(t *testing.T, bin, dir, name, scheme string, hc *http.Client, yamlFor func(port int) string) int {
	t.Helper()
	cfg, logPath := filepath.Join(dir, name+".yaml"), filepath.Join(dir, name+".log")
	t.Cleanup(func() {
		if t.Failed() {
			logTail(t, name, logPath)
		}
	})
	for attempt := 1; ; attempt++ {
		port, err := freeport.Loopback()
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(cfg, []byte(yamlFor(port)), 0o600); err != nil {
			t.Fatal(err)
		}
		p := runProcess(t, bin, cfg, logPath)
		var exited error
		eventually.True(t, name+" ready", func() bool {
			select {
			case err := <-p.exited:
				p.exited <- err
				exited = fmt.Errorf("exited: %v", err)
				return true
			default:
			}
			res, err := hc.Get(scheme + "://127.0.0.1:" + strconv.Itoa(port) + "/readyz")
			if err != nil {
				return false
			}
			res.Body.Close()
			return res.StatusCode == http.StatusOK
		})
		if exited == nil {
			return port
		}
		out, _ := os.ReadFile(logPath)
		if attempt == 5 || !strings.Contains(string(out), "address already in use") {
			t.Fatalf("%s %v before it was ready:\n%s", name, exited, out)
		}
	}
}

// storeYAML is the `coordinator:` lines of the Redis store on the shared
// Redis under keyPrefix, with the admin mutations' rate limit off.
func storeYAML(keyPrefix string) string {
	host, port, _ := net.SplitHostPort(testredis.SharedAddr)
	return fmt.Sprintf("  store: {type: redis, key-prefix: %q}\n  redis: {host: %q, port: %s}\n  api: {rate-limit: {enabled: false}}\n", keyPrefix, host, port)
}

// logTail logs the end of a coordinator's log.
func logTail(t *testing.T, name, path string) {
	b, _ := os.ReadFile(path)
	t.Logf("%s's log, the end:\n%s", name, b[max(0, len(b)-4000):])
}

// placedOn returns a stream prefix under keyPrefix that rendezvous hashing
// over ids places on id (cluster.Node.Placed for a prefix no group of the
// store has yet; with one listed prefix and two coordinators the bounded
// placement agrees).
func placedOn(t *testing.T, keyPrefix, id string, ids []string) string {
	t.Helper()
	for i := range 1000 {
		p := fmt.Sprintf("%s-p%d", keyPrefix, i)
		if o, ok := placement.Owner(p, ids); ok && o == id {
			return p
		}
	}
	t.Fatalf("no prefix placed on %s", id)
	return ""
}

// coordinatorOf returns v's coordinator id, nil when v lists none.
func coordinatorOf(v contract.ClusterView, id string) *contract.ClusterCoordinator {
	for i := range v.Coordinators {
		if v.Coordinators[i].ID == id {
			return &v.Coordinators[i]
		}
	}
	return nil
}

// clusterView reads GET /cluster at base as auth; ok is false unless it
// answered 200 with a view.
func clusterView(t *testing.T, hc *http.Client, base, auth string) (contract.ClusterView, bool) {
	t.Helper()
	var v contract.ClusterView
	st, body, err := try(hc, http.MethodGet, base+contract.ClusterTemplate, auth, nil, nil)
	return v, err == nil && st == http.StatusOK && json.Unmarshal(body, &v) == nil
}

// ---- users ----

type grant struct {
	Stream         string   `json:"stream"`
	Group          string   `json:"group"`
	Operations     []string `json:"operations"`
	MemberIDPrefix string   `json:"member-id-prefix,omitempty"`
}

type user struct {
	Username string   `json:"username"`
	Password string   `json:"password"`
	Roles    []string `json:"roles,omitempty"`
	Grants   []grant  `json:"grants,omitempty"`
}

// usersEnv is COORDINATOR_API_USERS for users: JSON, which is YAML flow
// text (config.applyEnv).
func usersEnv(t *testing.T, users ...user) string {
	t.Helper()
	b, err := json.Marshal(users)
	if err != nil {
		t.Fatal(err)
	}
	return "COORDINATOR_API_USERS=" + string(b)
}

// basic is the Authorization header of Basic credentials.
func basic(user, password string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+password))
}

// ---- requests ----

// call sends method url with body (JSON unless header sets another
// Content-Type; "" sends none), auth as Authorization ("" for none) and
// header, and returns the answer's status, body and header; a transport
// error fails the test.
func call(t *testing.T, hc *http.Client, method, url, auth, body string, header http.Header) (int, []byte, http.Header) {
	t.Helper()
	h := http.Header{}
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
		h.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		h[k] = v
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	req.Header = h
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	res, err := hc.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the answer: %v", method, url, err)
	}
	return res.StatusCode, b, res.Header
}

// try is call for goroutines other than the test's: it returns the
// transport error instead of failing the test.
func try(hc *http.Client, method, url, auth string, body io.Reader, header http.Header) (int, []byte, error) {
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		return 0, nil, err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	res, err := hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return res.StatusCode, b, err
}

func jsonHeader() http.Header { return http.Header{"Content-Type": {"application/json"}} }

// createGroup creates group g of prefix with shards shards as auth.
func createGroup(t *testing.T, base, auth, prefix, g string, shards int) {
	t.Helper()
	body := fmt.Sprintf(`{"requestedBy":"attacktest","initialShardCount":%d}`, shards)
	if st, answer, _ := call(t, http.DefaultClient, http.MethodPost, base+contract.GroupPath(prefix, g), auth, body, nil); st != http.StatusCreated {
		t.Fatalf("create %s/%s: %d %s", prefix, g, st, answer)
	}
}

// heartbeatBody is a heartbeat of member at epoch (0 joins, -1 leaves)
// that owns nothing, with extra JSON members appended (",\"k\":v…").
func heartbeatBody(member string, epoch int64, extra string) string {
	return fmt.Sprintf(`{"protocolVersion":1,"requestId":"r-%s-%d","memberId":%q,"memberEpoch":%d,"metadataVersion":0,`+
		`"runtimeConsumerCapacity":{"runtimeMaxConcurrency":1,"availableConcurrency":1},"ownedShards":[]%s}`, member, epoch, member, epoch, extra)
}

// heartbeat POSTs body as member's heartbeat in prefix/g at base with
// auth, and the header pairs kv (name, value, …), and returns the status,
// the decoded heartbeat answer (when it is one) and the raw body.
func heartbeat(t *testing.T, base, auth, prefix, g, member, body string, kv ...string) (int, contract.HeartbeatResponse, []byte) {
	t.Helper()
	return heartbeatVia(t, http.DefaultClient, base, auth, prefix, g, member, body, kv...)
}

// heartbeatVia is heartbeat through hc.
func heartbeatVia(t *testing.T, hc *http.Client, base, auth, prefix, g, member, body string, kv ...string) (int, contract.HeartbeatResponse, []byte) {
	t.Helper()
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Set(kv[i], kv[i+1])
	}
	st, raw, _ := call(t, hc, http.MethodPost, base+contract.HeartbeatPath(prefix, g, member), auth, body, h)
	var resp contract.HeartbeatResponse
	_ = json.Unmarshal(raw, &resp)
	return st, resp, raw
}

// parallelClient is a client that opens a connection per request in
// flight (no cap per host), closed at cleanup.
func parallelClient(t *testing.T) *http.Client {
	tr := &http.Transport{MaxIdleConnsPerHost: parallelAttempts, DisableCompression: true}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: hangGuard}
}

// parallel runs f(0..n-1) at once and waits for all.
func parallel(n int, f func(int)) {
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			f(i)
		})
	}
	close(start)
	wg.Wait()
}

// ---- memory ----

// rss is the resident set size of process pid, from /proc/<pid>/status.
func rss(pid int) (int64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(rest)
			if len(f) != 2 || f[1] != "kB" {
				break
			}
			kb, err := strconv.ParseInt(f[0], 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
}

// peakRSS returns the RSS of pid just before run (base) and the highest
// sampled while run runs and when it has returned (peak).
func peakRSS(t *testing.T, pid int, run func()) (base, peak int64) {
	t.Helper()
	base, err := rss(pid)
	if err != nil {
		t.Fatal(err)
	}
	stop, done := make(chan struct{}), make(chan int64)
	go func() {
		p := base
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			if v, err := rss(pid); err == nil {
				p = max(p, v)
			}
			select {
			case <-stop:
				done <- p
				return
			case <-tick.C:
			}
		}
	}()
	run()
	close(stop)
	return base, <-done
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// ---- reporting ----

// histogram formats statuses as "403×64".
func histogram(statuses []int) string {
	counts := map[int]int{}
	for _, s := range statuses {
		counts[s]++
	}
	keys := make([]int, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%d×%d", k, counts[k]))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, " ")
}

// expand turns counts per status back into a list of statuses.
func expand(counts map[int]int) []int {
	var out []int
	for s, n := range counts {
		for range n {
			out = append(out, s)
		}
	}
	return out
}

// firstLine returns the first line of b that contains sub (or b's first
// line).
func firstLine(b []byte, sub string) string {
	lines := strings.Split(string(b), "\n")
	for _, l := range lines {
		if strings.Contains(l, sub) {
			return strings.TrimSpace(l)
		}
	}
	return strings.TrimSpace(lines[0])
}

// randomText is 16 random bytes, base64url.
func randomText(t *testing.T) string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// recorder records the requests that pass through a proxy: their paths
// and any credential they carry (an Authorization header, or one inside
// the body, as a batch of forwarded heartbeats carries its items').
type recorder struct {
	mu     sync.Mutex
	seen   []string
	leaked []string
}

func (r *recorder) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(body))
		r.mu.Lock()
		r.seen = append(r.seen, req.Method+" "+req.URL.Path)
		if a := req.Header.Get("Authorization"); a != "" {
			r.leaked = append(r.leaked, req.URL.Path+": Authorization: "+a)
		}
		if bytes.Contains(bytes.ToLower(body), []byte("authorization")) {
			r.leaked = append(r.leaked, req.URL.Path+": a body that carries an Authorization header")
		}
		r.mu.Unlock()
		h.ServeHTTP(w, req)
	})
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.seen)
}

func (r *recorder) paths() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.seen...)
}

func (r *recorder) credentials() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.leaked...)
}
