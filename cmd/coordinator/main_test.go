package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
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

// start runs the coordinator with args until the test ends and returns its
// base URL, read from the "coordinator listening" log record.
func start(t *testing.T, args ...string) (string, *logBuffer) {
	t.Helper()
	logs := newLogBuffer()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, args, logs) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
		if _, ok := logs.find("coordinator stopped"); !ok {
			t.Errorf("no shutdown log")
		}
	})
	for {
		if rec, ok := logs.find("coordinator listening"); ok {
			if rec["store"] != "memory" {
				t.Errorf("listening record %v", rec)
			}
			return "http://" + rec["address"].(string), logs
		}
		select {
		case err := <-done:
			t.Fatalf("run ended before listening: %v\n%s", err, logs.buf.String())
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

func post(t *testing.T, url, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestRunServesTheAPI(t *testing.T) {
	cfg := writeConfig(t, "coordinator:\n  id: it\n  server: {address: \"127.0.0.1:0\"}\n  api: {base-path: /coord/v1}\n")
	base, _ := start(t, "-config", cfg)

	resp, err := http.Get(base + "/readyz")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("readyz: %v %v", resp, err)
	}
	resp.Body.Close()

	st, body := post(t, base+"/coord/v1/streams/orders/groups/workers", `{"initialShardCount":2,"requestedBy":"it"}`)
	if st != http.StatusCreated || !strings.Contains(body, `"shardCount":2`) {
		t.Fatalf("create: %d %s", st, body)
	}
	st, body = post(t, base+"/coord/v1/streams/orders/groups/workers/members/m1/heartbeat",
		`{"protocolVersion":1,"requestId":"r1","memberId":"m1","memberEpoch":0,"metadataVersion":0,
		  "runtimeConsumerCapacity":{"runtimeMaxConcurrency":1,"availableConcurrency":1}}`)
	if st != http.StatusOK || !strings.Contains(body, `"status":"OK"`) ||
		!strings.Contains(body, `"assignedShards":[{"shardIndex":0},{"shardIndex":1}]`) {
		t.Fatalf("heartbeat: %d %s", st, body)
	}
	resp, err = http.Get(base + "/coord/v1/monitoring/health")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(b), `"coordinatorId":"it"`) {
		t.Fatalf("health: %s", b)
	}
}

func TestRunReadsConfigFromEnvironment(t *testing.T) {
	t.Setenv("COORDINATOR_CONFIG", writeConfig(t, "coordinator:\n  server: {address: \"127.0.0.1:0\"}\n  api: {base-path: /api}\n"))
	base, _ := start(t, "-log-format", "json")
	st, body := post(t, base+"/api/streams/orders", `{"requestedBy":"it"}`)
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
		{"store not built in", []string{"-config", writeConfig(t, "coordinator:\n  store: {type: redis}\n")}, `"redis"`},
		{"log format", []string{"-log-format", "xml"}, "xml"},
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
