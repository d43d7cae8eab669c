package httpapi

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis-stream-coordinator/coordinator/audit"
	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/ratelimit"
)

// TestFailedLoginsThrottledAndAudited: wrong passwords are counted per
// user name and client address, and per client address; once a key used
// up its failures, wrong credentials get 429 with Retry-After without a
// check, while a right credential that is cheap to check still passes
// (issue 42: guesses never lock out the right password). The audit events
// of failed attempts do not name the user tried.
func TestFailedLoginsThrottledAndAudited(t *testing.T) {
	sink := audit.NewMemorySink(100, 1000)
	e := newSecureEnv(t, &fakeCoord{}, func(e *secureEnv, s *Security) {
		s.FailedAuthPerUser = mustLimiter(t, 3)
		s.FailedAuthPerAddress = mustLimiter(t, 5)
		s.Audit = sink
	})
	login := contract.BasePath + "/auth/login"
	groups := contract.BasePath + "/monitoring/groups"
	reader := userNamed("reader")
	body := func(pw string) string { return `{"username":"reader","password":"` + pw + `"}` }
	for i := range 3 {
		if rec := e.send("POST", login, "", body("wrong")); rec.Code != http.StatusUnauthorized {
			t.Fatalf("attempt %d: %d %s", i+1, rec.Code, rec.Body)
		}
	}
	rec := e.send("POST", login, "", body("wrong"))
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") != "60" {
		t.Fatalf("4th wrong password: %d Retry-After %q %s", rec.Code, rec.Header().Get("Retry-After"), rec.Body)
	}
	if rec := e.send("POST", login, "", body(reader.password)); rec.Code != http.StatusOK {
		t.Fatalf("right password while throttled: %d %s", rec.Code, rec.Body)
	}
	if rec := e.send("GET", groups, basicOf("reader"), ""); rec.Code != http.StatusOK {
		t.Fatalf("right Basic while throttled: %d %s", rec.Code, rec.Body)
	}
	// Another user from the same address: two more failures use up the
	// address. writer's password is a bcrypt hash never checked since
	// start, so it is not cheap to check: 429 until the window ends.
	for range 2 {
		e.send("GET", groups, basic("writer", "nope"), "")
	}
	if rec := e.send("GET", groups, basicOf("writer"), ""); rec.Code != http.StatusTooManyRequests {
		t.Fatalf("unverified bcrypt password from a throttled address: %d", rec.Code)
	}
	if rec := e.send("GET", groups, basicOf("monitor"), ""); rec.Code != http.StatusOK {
		t.Fatalf("plain-text password from a throttled address: %d", rec.Code)
	}
	// Another address is not throttled.
	req := e.request("GET", groups, basicOf("writer"))
	req.RemoteAddr = "198.51.100.7:4242"
	if rec := e.serve(req); rec.Code != http.StatusOK {
		t.Fatalf("other address: %d %s", rec.Code, rec.Body)
	}
	// Now that writer's password passed bcrypt, it passes the throttle too.
	if rec := e.send("GET", groups, basicOf("writer"), ""); rec.Code != http.StatusOK {
		t.Fatalf("verified bcrypt password from a throttled address: %d", rec.Code)
	}
	e.clock.Set(t0.Add(time.Minute))
	if rec := e.send("GET", groups, basic("writer", "nope"), ""); rec.Code != http.StatusUnauthorized {
		t.Fatalf("after the window: %d %s", rec.Code, rec.Body)
	}

	events, err := sink.Recent(context.Background(), "", "", 100)
	if err != nil {
		t.Fatal(err)
	}
	outcomes := map[contract.AuditOutcome]int{}
	for _, ev := range events {
		if ev.Action != contract.ActionLogin || ev.RequestBodySHA256 != nil || ev.RequestSummary["username"] != "" {
			t.Errorf("event %+v", ev)
		}
		if (ev.Outcome == contract.AuditSuccess) != (ev.Principal != nil && *ev.Principal == "reader") {
			t.Errorf("event %+v: only successes name their principal", ev)
		}
		outcomes[ev.Outcome]++
	}
	if outcomes[contract.AuditUnauthorized] != 3 || outcomes[contract.AuditFailed] != 1 || outcomes[contract.AuditSuccess] != 1 {
		t.Errorf("login outcomes %v, want 3 UNAUTHORIZED, 1 FAILED (429), 1 SUCCESS", outcomes)
	}
	if strings.Contains(e.logs.String(), "nope") || strings.Contains(e.logs.String(), `"user:`) {
		t.Errorf("the log names what was tried: %s", e.logs)
	}
}

// TestRightPasswordDuringAFlood: 1,000 wrong guesses a minute from one
// address, at the default limits, never keep the right password (sent
// from the same address, by login and by Basic) out.
func TestRightPasswordDuringAFlood(t *testing.T) {
	e := newSecureEnv(t, &fakeCoord{}, func(e *secureEnv, s *Security) {
		s.FailedAuthPerUser = mustLimiter(t, 5)
		s.FailedAuthPerAddress = mustLimiter(t, 20)
	})
	login := contract.BasePath + "/auth/login"
	right, refused, rightTries := userNamed("monitor"), 0, 0
	for i := range 1000 {
		e.clock.Set(t0.Add(time.Duration(i) * 60 * time.Millisecond)) // 1,000 in a minute
		if rec := e.send("POST", login, "", `{"username":"monitor","password":"guess-`+strconv.Itoa(i)+`"}`); rec.Code == http.StatusTooManyRequests {
			refused++
		}
		if i%10 == 0 {
			rightTries++
			if rec := e.send("POST", login, "", `{"username":"monitor","password":"`+right.password+`"}`); rec.Code != http.StatusOK {
				t.Fatalf("right login %d during the flood: %d %s", rightTries, rec.Code, rec.Body)
			}
			if rec := e.send("GET", contract.BasePath+"/monitoring/groups", basicOf("monitor"), ""); rec.Code != http.StatusOK {
				t.Fatalf("right Basic %d during the flood: %d %s", rightTries, rec.Code, rec.Body)
			}
		}
	}
	if refused < 900 {
		t.Errorf("only %d of 1,000 wrong guesses were throttled", refused)
	}
	t.Logf("%d right logins and Basic calls succeeded; %d of 1,000 guesses answered 429 unchecked", rightTries, refused)
}

func mustLimiter(t *testing.T, n int) *ratelimit.Limiter {
	t.Helper()
	l, err := ratelimit.New(n, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	return l
}
