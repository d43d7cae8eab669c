package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis-stream-coordinator/coordinator/internal/testkit/eventually"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/testredis"
)

// logBuffer collects the process log; waitFor blocks until a line contains
// a given message.
type logBuffer struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	changed chan struct{}
}

func newLogBuffer() *logBuffer { return &logBuffer{changed: make(chan struct{}, 1)} }

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	select {
	case l.changed <- struct{}{}:
	default:
	}
	return len(p), nil
}

// String returns the log so far.
func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// find returns the first JSON log record whose msg is msg.
func (l *logBuffer) find(msg string) (map[string]any, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	sc := bufio.NewScanner(bytes.NewReader(l.buf.Bytes()))
	for sc.Scan() {
		var rec map[string]any
		if json.Unmarshal(sc.Bytes(), &rec) == nil && rec["msg"] == msg {
			return rec, true
		}
	}
	return nil, false
}

// start runs the coordinator with args and returns its base URL, read from
// the "coordinator listening" log record, and a stop function (also run at
// cleanup) that shuts it down and checks it stopped cleanly.
func start(t *testing.T, args ...string) (string, func()) {
	t.Helper()
	base, stop, _ := startLogged(t, args...)
	return base, stop
}

// startLogged is start, also returning the process log.
func startLogged(t *testing.T, args ...string) (string, func(), *logBuffer) {
	t.Helper()
	logs := newLogBuffer()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, args, logs) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("run: %v", err)
			}
			if _, ok := logs.find("coordinator stopped"); !ok {
				t.Errorf("no shutdown log")
			}
		})
	}
	t.Cleanup(stop)
	for {
		if rec, ok := logs.find("coordinator listening"); ok {
			return rec["scheme"].(string) + "://" + rec["address"].(string), stop, logs
		}
		select {
		case err := <-done:
			t.Fatalf("run ended before listening: %v\n%s", err, logs.String())
		case <-logs.changed:
		}
	}
}

func writeConfig(t *testing.T, yaml string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "coordinator.yaml")
	if err := os.WriteFile(p, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// send makes one request (body "" sends none) as the default admin
// principal and returns status and body.
func send(t *testing.T, method, url, body string) (int, string) {
	t.Helper()
	return sendAs(t, adminAuth, method, url, body)
}

// sendAs is send with the Authorization header auth ("" for none).
func sendAs(t *testing.T, auth, method, url, body string) (int, string) {
	t.Helper()
	st, b, _ := sendVia(t, http.DefaultClient, auth, method, url, body)
	return st, b
}

// sendVia is sendAs through hc, also returning the answer's headers.
func sendVia(t *testing.T, hc *http.Client, auth, method, url, body string) (int, string, http.Header) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b), resp.Header
}

const joinHeartbeat = `{"protocolVersion":1,"requestId":"r1","memberId":"m1","memberEpoch":0,"metadataVersion":0,
	"runtimeConsumerCapacity":{"runtimeMaxConcurrency":1,"availableConcurrency":1}}`

// createAndJoin creates group workers of stream with 2 shards and lets m1 join.
func createAndJoin(t *testing.T, api, stream string) {
	t.Helper()
	st, body := send(t, "POST", api+"/streams/"+stream+"/groups/workers", `{"initialShardCount":2,"requestedBy":"it"}`)
	if st != http.StatusCreated || !strings.Contains(body, `"shardCount":2`) {
		t.Fatalf("create: %d %s", st, body)
	}
	st, body = send(t, "POST", api+"/streams/"+stream+"/groups/workers/members/m1/heartbeat", joinHeartbeat)
	if st != http.StatusOK || !strings.Contains(body, `"status":"OK"`) ||
		!strings.Contains(body, `"assignedShards":[{"shardIndex":0},{"shardIndex":1}]`) {
		t.Fatalf("heartbeat: %d %s", st, body)
	}
}

func TestRunServesTheAPI(t *testing.T) {
	cfg := writeConfig(t, "coordinator:\n  id: it\n  server: {address: \"127.0.0.1:0\"}\n")
	base, _ := start(t, "-config", cfg)
	eventually.True(t, "ready (the store's first probe answered)", func() bool {
		st, _ := send(t, "GET", base+"/readyz", "")
		return st == http.StatusOK
	})
	createAndJoin(t, base+"/coord/v1", "orders")
	waitHealthBody(t, base, `{"status":"UP","coordinatorId":"it","redis":"NOT_CONFIGURED","loop":"UP","store":{"type":"memory","breaker":"closed","status":"UP"},"cluster":"SERVING"}`)
	if st, body := send(t, "GET", base+"/actuator/info", ""); st != http.StatusOK || body != `{"version":"`+buildVersion()+`","coordinatorId":"it"}` {
		t.Fatalf("info: %d %s", st, body)
	}
}

// waitHealthBody polls the health report until it is want; meanwhile only
// probes still UNKNOWN may differ.
func waitHealthBody(t *testing.T, base, want string) {
	t.Helper()
	eventually.True(t, "health "+want, func() bool {
		st, body := send(t, "GET", base+"/coord/v1/monitoring/health", "")
		if body == want {
			return true
		}
		if st != http.StatusOK || !strings.Contains(body, `"UNKNOWN"`) {
			t.Fatalf("health: %d %s, want %s", st, body, want)
		}
		return false
	})
}

// testDSN is the PostgreSQL database of the machine's test services.
const testDSN = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// TestRunKeepsGroupsAcrossRestarts runs the coordinator twice on each
// shared store: the group created by the first process is served by the
// second. Health pings Redis only when the store is Redis.
func TestRunKeepsGroupsAcrossRestarts(t *testing.T) {
	tests := []struct {
		name  string
		store func(t *testing.T) string // the store's YAML lines
		redis string                    // the settled health redis state
	}{
		{"redis", func(t *testing.T) string {
			return redisStoreYAML(testredis.SharedAddr, testredis.Prefix(t, testredis.Shared(t)))
		}, "UP"},
		{"jdbc", func(*testing.T) string {
			return fmt.Sprintf("  store: {type: jdbc, jdbc: {url: %q}}\n", testDSN)
		}, "NOT_CONFIGURED"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			stream := fmt.Sprintf("it-%d", time.Now().UnixNano())
			cfg := writeConfig(t, "coordinator:\n  id: it\n  server: {address: \"127.0.0.1:0\"}\n"+tc.store(t))
			base, stop := start(t, "-config", cfg)
			createAndJoin(t, base+"/coord/v1", stream)
			stop()

			base, _ = start(t, "-config", cfg)
			grp := base + "/coord/v1/streams/" + stream + "/groups/workers"
			st, body := send(t, "GET", grp, "")
			if st != http.StatusOK || !strings.Contains(body, `"targetAssignmentSummary":{"m1":2}`) {
				t.Fatalf("group after restart: %d %s", st, body)
			}
			waitHealthBody(t, base, `{"status":"UP","coordinatorId":"it","redis":"`+tc.redis+`","loop":"UP","store":{"type":"`+tc.name+`","breaker":"closed","status":"UP"},"cluster":"SERVING"}`)
			if st, body := send(t, "DELETE", grp, `{"requestedBy":"it","reason":"cleanup","force":true}`); st != http.StatusOK {
				t.Fatalf("delete: %d %s", st, body)
			}
		})
	}
}

func TestRunReadsConfigFromEnvironment(t *testing.T) {
	t.Setenv("COORDINATOR_CONFIG", writeConfig(t, "coordinator:\n  server: {address: \"127.0.0.1:0\"}\n  api: {base-path: /api}\n"))
	base, _ := start(t, "-log-format", "json")
	st, body := send(t, "POST", base+"/api/streams/orders", `{"requestedBy":"it"}`)
	if st != http.StatusCreated || body != `{"streamPrefix":"orders","shardCount":4,"metadataVersion":1}` {
		t.Fatalf("create stream: %d %s", st, body)
	}
}

func TestRunRejectsBadSetups(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknown key", []string{"-config", writeConfig(t, "coordinator:\n  nope: 1\n")}, "coordinator.nope"},
		{"missing file", []string{"-config", filepath.Join(t.TempDir(), "absent.yaml")}, "absent.yaml"},
		{"log format", []string{"-log-format", "xml"}, "xml"},
		{"log level", []string{"-log-level", "loud"}, "loud"},
		{"insecure defaults", []string{"-config", writeConfig(t, "coordinator:\n  server: {address: \":0\"}\n")}, "coordinator.api.allow-insecure-defaults: true"},
		{"argument", []string{"extra"}, "extra"},
		{"flag", []string{"-bogus"}, "bogus"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := run(context.Background(), tc.args, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("run = %v, want an error mentioning %s", err, tc.want)
			}
		})
	}
}
