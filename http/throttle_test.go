package httpapi

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/redis-stream-coordinator/coordinator/audit"
	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/ratelimit"
)

// TestFailedLoginsThrottledAndAudited: wrong passwords are counted per user
// name and per client address; once a key used up its failures even the
// right password gets 429 with Retry-After until the window ends, and
// every login attempt is audited with the user name tried (issue 21).
func TestFailedLoginsThrottledAndAudited(t *testing.T) {
	sink := audit.NewMemorySink(100, 1000)
	e := newSecureEnv(t, &fakeCoord{}, func(e *secureEnv, s *Security) {
		s.FailedAuthPerUser = mustLimiter(t, 3)
		s.FailedAuthPerAddress = mustLimiter(t, 5)
		s.Audit = sink
	})
	login := contract.BasePath + "/auth/login"
	reader := userNamed("reader")
	body := func(pw string) string { return `{"username":"reader","password":"` + pw + `"}` }
	for i := range 3 {
		if rec := e.send("POST", login, "", body("wrong")); rec.Code != http.StatusUnauthorized {
			t.Fatalf("attempt %d: %d %s", i+1, rec.Code, rec.Body)
		}
	}
	rec := e.send("POST", login, "", body(reader.password))
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") != "60" {
		t.Fatalf("right password after 3 failures: %d Retry-After %q %s", rec.Code, rec.Header().Get("Retry-After"), rec.Body)
	}
	// Basic on another route counts against the same user.
	if rec := e.send("GET", contract.BasePath+"/monitoring/groups", basicOf("reader"), ""); rec.Code != http.StatusTooManyRequests {
		t.Fatalf("Basic while throttled: %d", rec.Code)
	}
	// Another user from the same address: two more failures use up the address.
	for range 2 {
		e.send("GET", contract.BasePath+"/monitoring/groups", basic("writer", "nope"), "")
	}
	if rec := e.send("GET", contract.BasePath+"/monitoring/groups", basicOf("monitor"), ""); rec.Code != http.StatusTooManyRequests {
		t.Fatalf("address throttled: %d", rec.Code)
	}
	// Another address is not.
	req := e.request("GET", contract.BasePath+"/monitoring/groups", basicOf("monitor"))
	req.RemoteAddr = "198.51.100.7:4242"
	if rec := e.serve(req); rec.Code != http.StatusOK {
		t.Fatalf("other address: %d %s", rec.Code, rec.Body)
	}
	e.clock.Set(t0.Add(time.Minute))
	if rec := e.send("POST", login, "", body(reader.password)); rec.Code != http.StatusOK {
		t.Fatalf("after the window: %d %s", rec.Code, rec.Body)
	}

	events, err := sink.Recent(context.Background(), "", "", 100)
	if err != nil {
		t.Fatal(err)
	}
	outcomes := map[audit.Outcome]int{}
	for _, ev := range events {
		if ev.Action != audit.Login || ev.RequestSummary["username"] != "reader" || ev.RequestBodySHA256 != nil {
			t.Errorf("event %+v", ev)
		}
		outcomes[ev.Outcome]++
	}
	if outcomes[audit.OutcomeUnauthorized] != 3 || outcomes[audit.OutcomeFailed] != 1 || outcomes[audit.OutcomeSuccess] != 1 {
		t.Errorf("login outcomes %v, want 3 UNAUTHORIZED, 1 FAILED (429), 1 SUCCESS", outcomes)
	}
}

func mustLimiter(t *testing.T, n int) *ratelimit.Limiter {
	t.Helper()
	l, err := ratelimit.New(n, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	return l
}
