package httpapi

import (
	"net/http"
	"strconv"
	"time"

	"github.com/julienschmidt/httprouter"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/ratelimit"
)

// codeRateLimited is the errorCode of a 429 (docs/protocol.md §9.2).
const codeRateLimited = string(contract.CodeRateLimitExceeded)

// rateLimited is the rate-limit middleware (docs/protocol.md §9.2). It wraps the mutating
// routes under <base>/streams/ except heartbeats when a limiter is
// configured, and runs after authentication, so the key's principal is
// the authenticated one (those routes always need an operation). A refused
// request answers 429 with Retry-After before the handler reads the body.
// An accepted request counts whatever the handler then answers (a 400 for
// an invalid body included); a refused one does not.
//
// Creates (CREATE_GROUP, CREATE_STREAM) also take a permit of
// CreateLimiter, when set, keyed by the principal alone.
func (g *guard) rateLimited(rt Route, h httprouter.Handle) httprouter.Handle {
	perGroup := g.Limiter != nil && g.limits(rt)
	creates := g.CreateLimiter != nil && (rt.Action == contract.ActionCreateGroup || rt.Action == contract.ActionCreateStream)
	if !perGroup && !creates {
		return h
	}
	return func(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
		name := principal(r.Context()).Username
		now := g.Now()
		ok, retryAfter := true, time.Duration(0)
		if perGroup {
			ok, retryAfter = g.Limiter.Allow(ratelimit.Key(name, ps.ByName("streamPrefix"), ps.ByName("consumerGroup")), now)
		}
		if ok && creates {
			ok, retryAfter = g.CreateLimiter.Allow(name, now)
		}
		if !ok {
			w.Header().Set("Retry-After", strconv.FormatInt(ratelimit.RetryAfterSeconds(retryAfter), 10))
			writeError(w, http.StatusTooManyRequests, codeRateLimited, "Coordinator API rate limit exceeded")
			return
		}
		h(w, r, ps)
	}
}

// limits reports whether rt is rate limited: a mutating method on a route
// that names a stream prefix (all under <base>/streams/) and is not a
// heartbeat.
func (g *guard) limits(rt Route) bool {
	return rt.Mutation && rt.Kind == RouteGroup
}
