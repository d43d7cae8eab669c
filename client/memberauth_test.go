package client

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis-stream-coordinator/coordinator/client/member"
	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/eventually"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/testredis"
)

// memberAuthEnv turns member authentication on in a coordinator process
// and configures its users: ops (WRITE: creates groups, may not
// heartbeat) and worker (MEMBER). With users listed the admin pair is no
// principal (docs/security.md).
var memberAuthEnv = []string{
	"COORDINATOR_API_AUTHENTICATE_MEMBER_API=true",
	"COORDINATOR_API_USERS=[{username: ops, password: ops-pw-5e1a, roles: [WRITE]}, {username: worker, password: worker-pw-77c3, roles: [MEMBER]}]",
}

// wire counts, per request path suffix, the requests a client sent and
// records the Authorization scheme of each heartbeat.
type wire struct {
	next http.RoundTripper

	mu       sync.Mutex
	logins   int
	schemes  map[string]int // scheme of each heartbeat's Authorization ("" none)
	statuses map[int]int    // status of each heartbeat answer
}

func newWire() *wire {
	return &wire{next: http.DefaultTransport, schemes: map[string]int{}, statuses: map[int]int{}}
}

func (w *wire) RoundTrip(r *http.Request) (*http.Response, error) {
	heartbeat := strings.HasSuffix(r.URL.Path, "/heartbeat")
	w.mu.Lock()
	switch {
	case strings.HasSuffix(r.URL.Path, contract.LoginTemplate):
		w.logins++
	case heartbeat:
		scheme, _, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		w.schemes[scheme]++
	}
	w.mu.Unlock()
	res, err := w.next.RoundTrip(r)
	if err == nil && heartbeat {
		w.mu.Lock()
		w.statuses[res.StatusCode]++
		w.mu.Unlock()
	}
	return res, err
}

func (w *wire) client() *http.Client { return &http.Client{Transport: w, Timeout: 10 * time.Second} }

func (w *wire) loginCount() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.logins
}

func (w *wire) heartbeats(status int) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.statuses[status]
}

// With api.authenticate-member-api on, a real coordinator process refuses
// heartbeats without a MEMBER credential (none: 401, a wrong password: one
// refused login and no heartbeat sent, a WRITE user: 403), and members of
// the MEMBER user join and share the group, one logging in with
// WithBearerLogin, one with a fixed token (WithBearerToken). Then the
// token secret is rotated (the coordinator restarts with another one, so
// every token it issued before is refused): the logging-in member gets a
// 401, logs in again and goes on, while the member with the fixed token is
// refused, stops reading its shards when its local lease lapses, and the
// other takes them over; no shard is ever read by both.
func TestMemberAuthenticationEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a coordinator process and Redis")
	}
	// Not parallel: the restart below reads the new secret from the
	// environment (t.Setenv), which parallel tests may not change.
	t.Setenv("COORDINATOR_TOKEN_SECRET", "token-secret-one-3f9d0c2b")
	rs := testredis.Start(t)
	srv := startCoordinator(t, "redis", rs.Addr, "memberauth", 3*time.Second, memberAuthEnv...)
	ctx := context.Background()
	ops := NewCoordinator(srv.Base, WithBearerLogin("ops", "ops-pw-5e1a"))
	if _, err := ops.CreateGroup(ctx, "ma", "g", 4, "test"); err != nil {
		t.Fatal(err)
	}
	join := func(id string) *contract.HeartbeatRequest {
		req := member.New(member.Config{ID: id, Name: "g"}).Request()
		return &req
	}
	status := func(err error) int {
		var ae *APIError
		if errors.As(err, &ae) {
			return ae.StatusCode
		}
		return 0
	}

	// No credentials: 401 UNAUTHORIZED.
	if _, _, err := NewCoordinator(srv.Base).heartbeat(ctx, "", "ma", "g", join("anonymous")); status(err) != http.StatusUnauthorized || !IsErrorCode(err, CodeUnauthorized) {
		t.Errorf("heartbeat without credentials: %v, want 401 %s", err, CodeUnauthorized)
	}
	// A wrong password: the login is refused once, not retried, and the
	// heartbeat is not sent.
	bad := newWire()
	_, _, err := NewCoordinator(srv.Base, WithBearerLogin("worker", "wrong"), WithHTTPClient(bad.client())).heartbeat(ctx, "", "ma", "g", join("intruder"))
	var le *LoginError
	if !errors.As(err, &le) || status(err) != http.StatusUnauthorized {
		t.Errorf("heartbeat with a wrong password: %v, want a *LoginError with 401", err)
	}
	if bad.loginCount() != 1 || bad.heartbeats(http.StatusOK)+bad.heartbeats(http.StatusUnauthorized) != 0 {
		t.Errorf("wrong password: %d logins, heartbeats %v: want 1 login and no heartbeat", bad.loginCount(), bad.statuses)
	}
	// A user without the MEMBER role: 403 FORBIDDEN.
	if _, _, err := ops.heartbeat(ctx, "", "ma", "g", join("operator")); status(err) != http.StatusForbidden {
		t.Errorf("heartbeat as a WRITE user: %v, want 403", err)
	}
	if g, err := ops.Group(ctx, "ma", "g"); err != nil || len(g.CurrentAssignmentSummary) != 0 || len(g.TargetAssignmentSummary) != 0 {
		t.Fatalf("after the refused heartbeats the group has members: %+v, %v", g, err)
	}

	// The MEMBER user may not read groups: a member of a missing group
	// cannot learn that it is missing, says so once and keeps rejoining.
	var logs lockedLog
	lost, err := NewMember(MemberConfig{Coordinator: NewCoordinator(srv.Base, WithBearerLogin("worker", "worker-pw-77c3")),
		StreamPrefix: "ma", Group: "missing", MemberID: "lost", Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	lctx, stopLost := context.WithCancel(ctx)
	lostDone := make(chan error, 1)
	go func() { lostDone <- lost.Run(lctx) }()
	eventually.True(t, "the member of a missing group warns that it cannot read the group", func() bool {
		return strings.Contains(logs.String(), "may not read the group (403)")
	})
	stopLost()
	if err := <-lostDone; err != nil {
		t.Errorf("the member of a missing group: %v", err)
	}
	if n := strings.Count(logs.String(), "may not read the group"); n != 1 {
		t.Errorf("the warning was logged %d times, want once:\n%s", n, logs.String())
	}

	r := newReaders(t)
	run := func(id string, coord *Coordinator) (*Member, context.CancelFunc, chan error) {
		m, err := NewMember(MemberConfig{Coordinator: coord, StreamPrefix: "ma", Group: "g", MemberID: id, Hooks: r.hooks(id)})
		if err != nil {
			t.Fatal(err)
		}
		mctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- m.Run(mctx) }()
		return m, cancel, done
	}
	loginWire := newWire()
	_, stopLogin, loginDone := run("m-login", NewCoordinator(srv.Base, WithBearerLogin("worker", "worker-pw-77c3"), WithHTTPClient(loginWire.client())))
	eventually.True(t, "m-login reads the 4 shards", func() bool { return r.count("m-login") == 4 })
	tok, err := NewCoordinator(srv.Base).Login(ctx, "worker", "worker-pw-77c3")
	if err != nil {
		t.Fatal(err)
	}
	tokenWire := newWire()
	mToken, stopToken, tokenDone := run("m-token", NewCoordinator(srv.Base, WithBearerToken(tok.AccessToken), WithHTTPClient(tokenWire.client())))
	eventually.True(t, "m-login and m-token read 2 shards each", func() bool { return r.count("m-login") == 2 && r.count("m-token") == 2 })
	if n := loginWire.loginCount(); n != 1 {
		t.Errorf("m-login logged in %d times before the rotation, want once (the token is kept and reused)", n)
	}

	// Rotate the token secret: every token issued so far is refused.
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	t.Setenv("COORDINATOR_TOKEN_SECRET", "token-secret-two-81be44a0")
	if err := srv.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	eventually.True(t, "m-token's fixed token is refused", func() bool { return tokenWire.heartbeats(http.StatusUnauthorized) > 0 })
	eventually.True(t, "m-token stops reading", func() bool { return r.count("m-token") == 0 })
	for s := range 4 {
		if mToken.MayRead(s) {
			t.Errorf("m-token may still read shard %d with its token refused", s)
		}
	}
	// Stopped now: each refused heartbeat is a failed authentication the
	// coordinator's login throttle counts against the address.
	stopToken()
	if err := <-tokenDone; err != nil && !errors.Is(err, ErrLeaveNotAnswered) {
		t.Errorf("m-token: %v", err)
	}
	eventually.True(t, "m-login reads the 4 shards", func() bool { return r.count("m-login") == 4 })
	if n := loginWire.loginCount(); n < 2 {
		t.Errorf("m-login logged in %d times: want a new login after its token was refused", n)
	}
	if n := loginWire.heartbeats(http.StatusUnauthorized); n == 0 {
		t.Error("m-login's old token was never refused: the test did not rotate the secret")
	}
	for _, w := range []*wire{loginWire, tokenWire} {
		w.mu.Lock()
		if len(w.schemes) != 1 || w.schemes["Bearer"] == 0 {
			t.Errorf("heartbeat Authorization schemes %v: want Bearer only", w.schemes)
		}
		w.mu.Unlock()
	}

	stopLogin()
	if err := <-loginDone; err != nil {
		t.Errorf("m-login: %v", err)
	}
}

// lockedLog is a log destination a member writes to while the test reads.
type lockedLog struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
