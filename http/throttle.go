package httpapi

import (
	"net/http"
	"strconv"

	"github.com/redis-stream-coordinator/coordinator/ratelimit"
)

// authThrottle holds the keys a failed authentication counts against: the
// user name tried (when known) and the client's address (clientAddress).
type authThrottle struct {
	g    *guard
	keys []throttleKey
}

type throttleKey struct {
	limiter *ratelimit.Limiter
	key     string
}

// throttle returns the throttle of a request trying username ("" when
// none is named, e.g. a Bearer token).
func (g *guard) throttle(r *http.Request, username string) authThrottle {
	t := authThrottle{g: g}
	if l := g.FailedAuthPerUser; l != nil && username != "" {
		t.keys = append(t.keys, throttleKey{l, "user:" + username})
	}
	if l := g.FailedAuthPerAddress; l != nil {
		t.keys = append(t.keys, throttleKey{l, "addr:" + clientAddress(r)})
	}
	return t
}

// refused answers 429 with Retry-After, and returns true, when any key has
// used up its failures; credentials are then not even checked.
func (t authThrottle) refused(w http.ResponseWriter) bool {
	now := t.g.Now()
	for _, k := range t.keys {
		if exhausted, retryAfter := k.limiter.Exhausted(k.key, now); exhausted {
			w.Header().Set("Retry-After", strconv.FormatInt(ratelimit.RetryAfterSeconds(retryAfter), 10))
			writeError(w, http.StatusTooManyRequests, codeRateLimited, "Too many failed authentications; retry later")
			return true
		}
	}
	return false
}

// failed counts one failed authentication against every key, logging a
// warning for each key it uses up.
func (t authThrottle) failed() {
	now := t.g.Now()
	for _, k := range t.keys {
		k.limiter.Allow(k.key, now)
		if exhausted, retryAfter := k.limiter.Exhausted(k.key, now); exhausted {
			t.g.log.Warn("authentication throttled after repeated failures", "key", k.key, "retryAfter", retryAfter)
		}
	}
}
