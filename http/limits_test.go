package httpapi

import (
	"net/http"
	"testing"

	"github.com/redis-stream-coordinator/coordinator/contract"
)

// The group caps (defaults.max-groups, max-groups-per-stream) are decided
// where creates are, in the actor system: actors/caps_test.go.

// TestCreateRateLimitPerPrincipal: the per-group limiter let one caller
// create any number of distinct groups; CreateLimiter counts creates per
// principal whatever the group.
func TestCreateRateLimitPerPrincipal(t *testing.T) {
	e := newSecureEnv(t, &fakeCoord{View: sampleView()}, func(_ *secureEnv, s *Security) { s.CreateLimiter = mustLimiter(t, 2) })
	body := `{"requestedBy":"t"}`
	for i, want := range []int{http.StatusCreated, http.StatusCreated, http.StatusTooManyRequests} {
		rec := e.send("POST", contract.BasePath+"/streams/p/groups/g"+string(rune('0'+i)), basicOf("root"), body)
		if rec.Code != want {
			t.Fatalf("create %d: %d %s, want %d", i, rec.Code, rec.Body, want)
		}
	}
	if rec := e.send("POST", contract.BasePath+"/streams/p/groups/g9", e.bearerOf(t, "writer"), body); rec.Code != http.StatusCreated {
		t.Errorf("another principal: %d", rec.Code)
	}
}
