package main

import (
	"bufio"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/eventually"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/testcerts"
	"github.com/redis-stream-coordinator/coordinator/security"
)

// connWait bounds a wait for the server to close a connection: it only
// turns a hang into a failure (the server's timeouts in these tests are 1s).
const connWait = 60 * time.Second

// rawConn dials the coordinator at base (http://host:port) over plain TCP.
func rawConn(t *testing.T, base string) (net.Conn, *bufio.Reader) {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c, bufio.NewReader(c)
}

// healthz sends GET /healthz on a keep-alive connection and reads the
// whole answer, which must be 200.
func healthz(t *testing.T, c net.Conn, r *bufio.Reader) {
	t.Helper()
	if _, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: coordinator\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || resp.Close {
		t.Fatalf("healthz: %d close=%v %v", resp.StatusCode, resp.Close, err)
	}
}

// closedByServer reads (and discards) what the server sends on c until it
// closes the connection: EOF or a reset, not the test's own deadline.
func closedByServer(t *testing.T, c net.Conn, r *bufio.Reader) string {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(connWait))
	got, err := io.ReadAll(r)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("the server kept the connection open (read %q)", got)
	}
	return string(got)
}

// Issue 42 item 10: a body trickled a byte at a time is cut off after
// server.read-timeout, and an idle keep-alive connection is closed after
// server.idle-timeout. The test waits for the close and asserts no timing.
func TestSlowClientsAreCutOff(t *testing.T) {
	t.Parallel()
	base, _ := start(t, "-config", writeConfig(t, `coordinator:
  id: slow-clients
  server: {address: "127.0.0.1:0", read-header-timeout: 1s, read-timeout: 1s, idle-timeout: 1s}
`))

	t.Run("trickled body", func(t *testing.T) {
		t.Parallel()
		c, r := rawConn(t, base)
		head := "POST " + contract.BasePath + "/streams/orders/groups/g/members/m/heartbeat HTTP/1.1\r\nHost: coordinator\r\n" +
			"Content-Type: application/json\r\nContent-Length: 1000000\r\n\r\n{"
		if _, err := io.WriteString(c, head); err != nil {
			t.Fatal(err)
		}
		stop := make(chan struct{})
		defer close(stop)
		go func() { // a byte every 100 ms for as long as the server takes it
			tick := time.NewTicker(100 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-stop:
					return
				case <-tick.C:
					if _, err := c.Write([]byte(" ")); err != nil {
						return
					}
				}
			}
		}()
		if answer := closedByServer(t, c, r); strings.HasPrefix(answer, "HTTP/1.1 200") {
			t.Errorf("trickled heartbeat answered %q", answer)
		}
	})

	t.Run("idle keep-alive", func(t *testing.T) {
		t.Parallel()
		c, r := rawConn(t, base)
		healthz(t, c, r)
		if rest := closedByServer(t, c, r); rest != "" {
			t.Errorf("unexpected bytes on the idle connection: %q", rest)
		}
	})
}

// server.max-connections-per-address: with a cap of 2, a third connection
// from 127.0.0.1 is closed without an answer; once a connection is closed
// a new one is served again.
func TestConnectionsPerAddressCapped(t *testing.T) {
	t.Parallel()
	base, _, logs := startLogged(t, "-config", writeConfig(t, `coordinator:
  id: conn-cap
  server: {address: "127.0.0.1:0", max-connections-per-address: 2}
`))
	c1, r1 := rawConn(t, base)
	healthz(t, c1, r1)
	c2, r2 := rawConn(t, base)
	healthz(t, c2, r2)

	c3, r3 := rawConn(t, base)
	_, _ = io.WriteString(c3, "GET /healthz HTTP/1.1\r\nHost: coordinator\r\n\r\n")
	if answer := closedByServer(t, c3, r3); answer != "" {
		t.Fatalf("a connection over the cap was answered %q", answer)
	}
	if _, ok := logs.find("connection refused: too many open connections from one address"); !ok {
		t.Errorf("refusal not logged:\n%s", logs.String())
	}
	healthz(t, c2, r2) // the admitted ones still work

	_ = c1.Close()
	eventually.True(t, "a new connection served after one closed", func() bool {
		c, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
		if err != nil {
			return false
		}
		defer c.Close()
		_, _ = io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: coordinator\r\nConnection: close\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}

// rootToken returns the Authorization header of a token for the ADMIN
// user root, signed with secret as the coordinator's own login signs it
// (the test is about pprof, not about the login route).
func rootToken(t *testing.T, secret string) string {
	t.Helper()
	users, err := security.NewUsers(security.Options{
		Users: []security.User{{Username: "root", Password: "root-pw-93c1", Roles: []string{"ADMIN"}}}, TokenSecret: secret})
	if err != nil {
		t.Fatal(err)
	}
	l, err := users.Login("root", "root-pw-93c1")
	if err != nil {
		t.Fatal(err)
	}
	return "Bearer " + l.AccessToken
}

// Issue 42 item 11: /debug/pprof/ needs an ADMIN principal (Basic or
// Bearer); others get 401 or 403 with the JSON error body and no Basic
// challenge. The API is served as before.
func TestPprofNeedsAdmin(t *testing.T) {
	t.Parallel()
	base, _ := start(t, "-config", writeConfig(t, `coordinator:
  id: pprof-auth
  server: {address: "127.0.0.1:0"}
  api:
    token-secret: pprof-test-secret-4b1e
    users:
      - {username: root, password: root-pw-93c1, roles: [ADMIN]}
      - {username: viewer, password: viewer-pw, roles: [READ, WRITE, MEMBER]}
  debug: {pprof: true}
`))
	api := base + contract.BasePath
	rootAuth := basicAuth("root", "root-pw-93c1")
	for _, tc := range []struct {
		name, auth string
		status     int
		code       contract.Code
	}{
		{"anonymous", "", http.StatusUnauthorized, contract.CodeUnauthorized},
		{"wrong password", basicAuth("root", "guess"), http.StatusUnauthorized, contract.CodeUnauthorized},
		{"junk token", "Bearer junk", http.StatusUnauthorized, contract.CodeUnauthorized},
		{"every other role", basicAuth("viewer", "viewer-pw"), http.StatusForbidden, contract.CodeForbidden},
		{"admin", rootAuth, http.StatusOK, ""},
		{"admin token", rootToken(t, "pprof-test-secret-4b1e"), http.StatusOK, ""},
	} {
		for _, path := range []string{"/debug/pprof/", "/debug/pprof/cmdline", "/debug/pprof/heap?debug=1", "/debug/pprof/symbol"} {
			st, body, h := sendVia(t, http.DefaultClient, tc.auth, "GET", base+path, "")
			if st != tc.status {
				t.Errorf("%s %s: %d %.200s, want %d", tc.name, path, st, body, tc.status)
				continue
			}
			if tc.code == "" {
				continue
			}
			var e contract.ErrorBody
			if err := json.Unmarshal([]byte(body), &e); err != nil || e.ErrorCode != tc.code || e.Status != contract.StatusName(st) ||
				h.Get("Content-Type") != "application/json" {
				t.Errorf("%s %s: body %s (%s), want the %s error body", tc.name, path, body, h.Get("Content-Type"), tc.code)
			}
			if ch := h.Values("Www-Authenticate"); len(ch) > 0 {
				t.Errorf("%s %s: challenge %q", tc.name, path, ch)
			}
		}
	}
	if st, body := sendAs(t, "", "GET", base+"/healthz", ""); st != http.StatusOK {
		t.Errorf("healthz: %d %s", st, body)
	}
	if st, body := sendAs(t, rootAuth, "GET", api+"/monitoring/groups", ""); st != http.StatusOK {
		t.Errorf("the API behind pprof: %d %s", st, body)
	}
}

// With server.tls the cap applies under TLS: with a cap of 1, a second
// connection from 127.0.0.1 is closed before its handshake completes,
// while the first one is served over HTTPS.
func TestConnectionsPerAddressCappedUnderTLS(t *testing.T) {
	t.Parallel()
	ca := testcerts.NewCA(t, "server CA")
	certFile, keyFile := writePair(t, t.TempDir(), "server", ca.Issue(t, "coordinator"))
	root, _ := startTLS(t, fmt.Sprintf("    max-connections-per-address: 1\n    tls: {cert-file: %q, key-file: %q}\n", certFile, keyFile))
	addr := strings.TrimPrefix(root, "https://")
	first, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: ca.Pool(), MinVersion: tls.VersionTLS12, NextProtos: []string{"http/1.1"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = first.Close() })
	healthz(t, first, bufio.NewReader(first))

	cfg := &tls.Config{RootCAs: ca.Pool(), MinVersion: tls.VersionTLS12}
	if second, err := tls.DialWithDialer(&net.Dialer{Timeout: connWait}, "tcp", addr, cfg); err == nil {
		_ = second.Close()
		t.Fatal("a TLS handshake over the cap succeeded")
	}
	healthz(t, first, bufio.NewReader(first)) // the admitted one still works
}
