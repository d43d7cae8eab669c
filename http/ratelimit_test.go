package httpapi

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/ratelimit"
)

// Rate-limit tests (docs/protocol.md §9.2, the seed's "Rate Limiting") with the
// seed's 60 mutations per one-minute window and a manual clock.

const limitWindow = time.Minute

// newLimitedEnv is a secure API limiting 60 mutations per window; the
// member API is authenticated so heartbeats run with a principal too.
func newLimitedEnv(t *testing.T) *secureEnv {
	t.Helper()
	limiter, err := ratelimit.New(60, limitWindow)
	if err != nil {
		t.Fatal(err)
	}
	return newSecureEnv(t, &fakeCoord{View: sampleView()}, func(_ *secureEnv, s *Security) {
		s.Limiter = limiter
		s.AuthenticateMemberAPI = true
	})
}

// wantLimited checks a 429 answer and returns its Retry-After seconds.
func wantLimited(t *testing.T, rec *httptest.ResponseRecorder) int {
	t.Helper()
	if rec.Code != http.StatusTooManyRequests {
		t.Fatalf("status %d %s, want 429", rec.Code, rec.Body)
	}
	secs, err := strconv.Atoi(rec.Header().Get("Retry-After"))
	if err != nil || secs < 1 || secs > int(limitWindow/time.Second) {
		t.Fatalf("Retry-After %q, want 1..%d", rec.Header().Get("Retry-After"), int(limitWindow/time.Second))
	}
	return secs
}

func TestRateLimitSixtyFirstMutation(t *testing.T) {
	e := newLimitedEnv(t)
	grp := contract.BasePath + "/streams/orders/groups/workers"
	writer := basicOf("writer")
	for i := range 60 {
		if rec := e.send("POST", grp, writer, createBody); rec.Code != http.StatusCreated {
			t.Fatalf("mutation %d: %d %s", i+1, rec.Code, rec.Body)
		}
	}
	e.clock.Advance(20*time.Second + 500*time.Millisecond)
	calls := e.coord.Calls
	rec := e.send("DELETE", grp, writer, deleteBody)
	wantJSON(t, rec, http.StatusTooManyRequests, `{"status":"TOO_MANY_REQUESTS","errorCode":"RATE_LIMIT_EXCEEDED","message":"Coordinator API rate limit exceeded"}`)
	if secs := wantLimited(t, rec); secs != 40 {
		t.Errorf("Retry-After %d, want ceil(39.5) = 40", secs)
	}
	if e.coord.Calls != calls {
		t.Error("a refused mutation reached the coordinator")
	}

	t.Run("other principal, group or stream-level key", func(t *testing.T) {
		for _, tc := range []struct{ auth, path string }{
			{basicOf("root"), grp},
			{e.bearerOf(t, "writer") /* same principal, Bearer */, contract.BasePath + "/streams/orders/groups/other"},
			{writer, contract.BasePath + "/streams/billing/groups/workers"},
			{writer, contract.BasePath + "/streams/orders"},
		} {
			if rec := e.send("POST", tc.path, tc.auth, createBody); rec.Code != http.StatusCreated {
				t.Errorf("POST %s: %d %s", tc.path, rec.Code, rec.Body)
			}
		}
	})
	t.Run("reads and heartbeats are never limited", func(t *testing.T) {
		writer := e.bearerOf(t, "writer") // Basic would check the bcrypt hash each time
		for range 100 {
			for _, rec := range []*httptest.ResponseRecorder{
				e.send("GET", grp, writer, ""),
				e.send("GET", contract.BasePath+"/monitoring/streams/orders/groups/workers", writer, ""),
				e.send("POST", grp+"/members/m1/heartbeat", basicOf("root"), `{"memberId":"m1"}`),
				e.send("POST", grp+"/members/m1/heartbeat", basicOf("member"), `{"memberId":"m1"}`),
			} {
				if rec.Code == http.StatusTooManyRequests {
					t.Fatal("429 on a read or heartbeat")
				}
			}
		}
	})
	t.Run("refusals do not extend the window", func(t *testing.T) {
		e.clock.Advance(39 * time.Second)
		if secs := wantLimited(t, e.send("POST", grp, writer, createBody)); secs != 1 {
			t.Errorf("Retry-After %d, want 1", secs)
		}
		e.clock.Advance(500 * time.Millisecond)
		if rec := e.send("POST", grp, writer, createBody); rec.Code != http.StatusCreated {
			t.Errorf("first mutation of the next window: %d %s", rec.Code, rec.Body)
		}
	})
}

// TestRateLimitCountsBeforeValidation: requests with invalid bodies use
// permits too, and are refused before the body is read.
func TestRateLimitCountsBeforeValidation(t *testing.T) {
	e := newLimitedEnv(t)
	grp := contract.BasePath + "/streams/orders/groups/workers"
	for i := range 60 {
		if rec := e.send("POST", grp, basicOf("writer"), `{"initialShardCount":`); rec.Code != http.StatusBadRequest {
			t.Fatalf("invalid mutation %d: %d %s", i+1, rec.Code, rec.Body)
		}
	}
	wantLimited(t, e.send("POST", grp, basicOf("writer"), createBody))
	wantLimited(t, e.send("POST", grp, basicOf("writer"), `{"initialShardCount":`))
	if e.coord.Calls != 0 {
		t.Errorf("coordinator called %d times", e.coord.Calls)
	}
}

// TestRateLimitAfterAuthentication: refused callers (401, 403) use no
// permits, and a limiter without permits refuses every mutation.
func TestRateLimitAfterAuthentication(t *testing.T) {
	e := newLimitedEnv(t)
	grp := contract.BasePath + "/streams/orders/groups/workers"
	for range 100 {
		checkDecision(t, e.send("POST", grp, basicOf("reader"), createBody), http.StatusForbidden)
		checkDecision(t, e.send("POST", grp, "", createBody), http.StatusUnauthorized)
	}
	if rec := e.send("POST", grp, basicOf("writer"), createBody); rec.Code != http.StatusCreated {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}

	none, err := ratelimit.New(0, limitWindow)
	if err != nil {
		t.Fatal(err)
	}
	e = newSecureEnv(t, &fakeCoord{View: sampleView()}, func(_ *secureEnv, s *Security) { s.Limiter = none })
	if secs := wantLimited(t, e.send("POST", grp, basicOf("writer"), createBody)); secs != 60 {
		t.Errorf("Retry-After %d, want 60", secs)
	}
}

func TestNoLimiterNoLimit(t *testing.T) {
	e := newSecureEnv(t, &fakeCoord{View: sampleView()}, nil)
	for i := range 100 {
		if rec := e.send("POST", contract.BasePath+"/streams/orders/groups/workers", basicOf("root"), createBody); rec.Code != http.StatusCreated {
			t.Fatalf("mutation %d: %d", i+1, rec.Code)
		}
	}
}
