package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/julienschmidt/httprouter"

	"github.com/redis-stream-coordinator/coordinator/audit"
	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/ratelimit"
	"github.com/redis-stream-coordinator/coordinator/security"
)

// Security enables access control, audit and rate limiting (docs/protocol.md §1,
// docs/protocol.md §9) and the login and session endpoints (#1, #12).
//
// Every request under the base path is checked against security.Policy:
// routed requests by a route middleware, unrouted ones (unknown paths and
// methods, OPTIONS) before their 404/405, so an unknown path may answer 401
// before 404 as docs/protocol.md §1 says. Paths outside the base path (/healthz, /readyz,
// /actuator/…, /metrics) stay open.
//
// The per-route middlewares run in this order, outermost first, after
// Options.Middleware:
//
//  1. audit (routes with an audit action only): records one event per
//     request whatever the outcome, including 401, 403 and 429;
//  2. authorisation: 401 when the credentials are missing or invalid
//     (WWW-Authenticate only with BasicChallenge), 429 while guesses are
//     throttled (throttle.go), 403 when no role or grant of the principal
//     covers the route's operation on the request's resource
//     (contract.Route, security.Principal.Allows);
//  3. same origin (state-changing routes): 403 for cross-site browser
//     requests, 415 for a body not declared JSON (csrf.go);
//  4. rate limit (when Limiter is set): Admin API mutations under
//     <base>/streams/… except heartbeats, keyed principal:P:G (G = * for
//     stream-level routes), counted before the body is read or validated.
type Security struct {
	// Users authenticates callers and issues tokens; required.
	Users *security.Users
	// AuthenticateMemberAPI is api.authenticate-member-api: heartbeats need
	// the heartbeat operation when true and no check at all when false.
	AuthenticateMemberAPI bool
	// Audit receives the audit events; nil records none. A failing sink is
	// logged and never fails the request.
	Audit audit.Sink
	// History supplies the recentMutations of GET
	// /monitoring/streams/{P}/groups/{G}; nil shows none.
	History audit.History
	// Limiter, when non-nil, limits Admin API mutations (docs/protocol.md §9.2).
	Limiter *ratelimit.Limiter
	// CreateLimiter, when non-nil, limits group creations (CREATE_GROUP,
	// CREATE_STREAM) per principal, whatever the group: Limiter's key is
	// per group, so it does not bound how many groups a caller makes.
	CreateLimiter *ratelimit.Limiter
	// FailedAuthPerUser and FailedAuthPerAddress, when non-nil, count
	// failed authentications (a wrong password or token, on login or any
	// route) per user name tried and client address, and per client
	// address; while a key has used up its permits, only a credential that
	// is cheap to check and right passes, anything else is answered 429
	// with Retry-After (throttle.go).
	FailedAuthPerUser    *ratelimit.Limiter
	FailedAuthPerAddress *ratelimit.Limiter
	// TrustedProxies are the networks of reverse proxies whose
	// X-Forwarded-For names the client address the throttle counts
	// against (api.trusted-proxies); empty: the connection's peer.
	TrustedProxies []netip.Prefix
	// BasicChallenge adds WWW-Authenticate: Basic to every 401
	// (api.basic-challenge). Off by default: browsers cache Basic
	// credentials once challenged and send them cross-site.
	BasicChallenge bool
	// Now is the clock of audit timestamps and rate-limit windows; nil
	// means time.Now.
	Now func() time.Time
}

// guard is the Security of one API, bound to its base path.
type guard struct {
	Security
	policy        security.Policy
	coordinatorID string
	log           *slog.Logger
}

// secure installs o.Security, when set, on the API being built by New: it
// guards the router's unrouted answers and returns the middlewares to wrap
// every route with (o.Middleware, then audit, authentication and rate
// limit). Without Security the API is open and o.Middleware is returned.
// It panics when Security.Users is nil (a wiring error).
func (a *API) secure(o Options, base string) []Middleware {
	s := o.Security
	if s == nil {
		return o.Middleware
	}
	if s.Users == nil {
		panic("httpapi: Security.Users is required")
	}
	g := &guard{
		Security:      *s,
		policy:        security.Policy{BasePath: base, AuthenticateMemberAPI: s.AuthenticateMemberAPI},
		coordinatorID: o.CoordinatorID,
		log:           o.Logger,
	}
	if g.Now == nil {
		g.Now = time.Now
	}
	a.guard = g
	r := a.router
	r.NotFound = g.guardUnrouted(r.NotFound)
	r.MethodNotAllowed = g.guardUnrouted(r.MethodNotAllowed)
	// OPTIONS goes through the guarded 405 instead of httprouter's
	// unauthenticated automatic answer.
	r.HandleOPTIONS = false
	return append(slices.Clip(o.Middleware), g.audited, g.authenticated, sameOrigin, g.rateLimited)
}

// securityRoutes are the routes that exist only with Security: login (#1)
// and session (#12), templates relative to the base path.
func (a *API) securityRoutes() []route {
	if a.guard == nil {
		return nil
	}
	return []route{
		{Route{Method: http.MethodPost, Template: contract.LoginTemplate}, a.login},
		{Route{Method: http.MethodGet, Template: contract.MonitoringSession}, a.session},
	}
}

// Error codes of the access checks.
const (
	codeUnauthorized = string(contract.CodeUnauthorized)
	codeForbidden    = string(contract.CodeForbidden)
)

// basicChallenge is the challenge a 401 carries when Security.BasicChallenge
// is set (docs/protocol.md §1). Off by default: a browser that was once
// challenged would send its cached Basic credentials with every request,
// cross-site ones included.
var basicChallenge = []string{`Basic realm="redis-stream-coordinator"`}

// unauthorized answers 401 with the docs/protocol.md §0 error body, and the
// Basic challenge when configured.
func (g *guard) unauthorized(w http.ResponseWriter) {
	if g.BasicChallenge {
		w.Header()["Www-Authenticate"] = basicChallenge
	}
	writeError(w, http.StatusUnauthorized, codeUnauthorized, "Authentication required: valid Basic credentials or Bearer token")
}

// authorize applies docs/security.md to r: op is what the request needs
// (security.Policy), scope and res the resource it acts on. It returns r,
// carrying the principal when one was authenticated, or answers 401, 403
// or 429 and returns false. Requests that need no credential pass with
// their credentials unchecked. The authenticated principal is recorded on
// the request's audit event even when it is then refused with 403.
func (g *guard) authorize(w http.ResponseWriter, r *http.Request, op contract.Operation, scope contract.Scope, res security.Resource) (*http.Request, bool) {
	if op == contract.OpOpen {
		return r, true
	}
	header := r.Header.Get("Authorization")
	p, ok := g.authenticate(w, r, header, func() (security.Principal, error) { return g.Users.Authenticate(header) })
	if !ok {
		return nil, false
	}
	if ev := audit.FromContext(r.Context()); ev != nil {
		ev.SetPrincipal(p.Username, p.RoleNames())
	}
	if !p.Allows(op, scope, res) {
		writeError(w, http.StatusForbidden, codeForbidden, forbiddenMessage(op, scope, res))
		return nil, false
	}
	ctx := context.WithValue(r.Context(), principalKey{}, p)
	ctx = context.WithValue(ctx, operationKey{}, op)
	return r.WithContext(ctx), true
}

// authenticate checks the credentials of a request through check, under
// the failed-authentication throttle (see throttle.go): it returns the
// principal, or answers 401 or 429 and returns false.
func (g *guard) authenticate(w http.ResponseWriter, r *http.Request, header string, check func() (security.Principal, error)) (security.Principal, bool) {
	throttle := g.throttle(r, security.BasicUsername(header))
	if throttle.exhausted() {
		// Guesses from this user name and address are throttled: only a
		// credential that is cheap to check and right still passes.
		if p, ok := g.Users.AuthenticateKnown(header); ok {
			return p, true
		}
		throttle.refuse(w)
		return security.Principal{}, false
	}
	p, err := check()
	if err != nil {
		if header != "" {
			throttle.failed()
		}
		g.unauthorized(w)
		return security.Principal{}, false
	}
	return p, true
}

// forbiddenMessage says which operation on which resource was refused.
func forbiddenMessage(op contract.Operation, scope contract.Scope, res security.Resource) string {
	switch scope {
	case contract.ScopeStream:
		return "Operation " + string(op) + " on every group of stream prefix " + res.Stream + " is not granted"
	case contract.ScopeGroup:
		msg := "Operation " + string(op) + " on stream prefix " + res.Stream + ", group " + res.Group
		if op == contract.OpHeartbeat {
			msg += ", member " + res.Member
		}
		return msg + " is not granted"
	}
	return "Operation " + string(op) + " is not granted on any resource"
}

// authenticated is the authorisation middleware (see Security): the
// route's operation and scope are fixed per route; the resource comes from
// the route's path parameters, or for the Grafana rows of one group from
// the streamPrefix and consumerGroup query parameters.
func (g *guard) authenticated(rt Route, h httprouter.Handle) httprouter.Handle {
	op := g.policy.Required(contract.Route{Operation: rt.Operation})
	return func(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
		scope, res := resourceOf(rt.Scope, r, ps)
		if r, ok := g.authorize(w, r, op, scope, res); ok {
			h(w, r, ps)
		}
	}
}

// resourceOf returns the resource a request to a route of scope acts on.
// A ScopeAny route naming one group in its query is checked as that
// group's route.
func resourceOf(scope contract.Scope, r *http.Request, ps httprouter.Params) (contract.Scope, security.Resource) {
	if scope == contract.ScopeAny {
		q := r.URL.Query()
		p, g := strings.TrimSpace(q.Get("streamPrefix")), strings.TrimSpace(q.Get("consumerGroup"))
		if p != "" && g != "" {
			return contract.ScopeGroup, security.Resource{Stream: p, Group: g}
		}
		return scope, security.Resource{}
	}
	return scope, security.Resource{Stream: ps.ByName("streamPrefix"), Group: ps.ByName("consumerGroup"), Member: ps.ByName("memberId")}
}

// guardUnrouted applies authorize (security.Policy.Unrouted) before an
// unrouted answer (404, 405). Unrouted requests are neither audited nor
// rate limited: they change nothing.
func (g *guard) guardUnrouted(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r, ok := g.authorize(w, r, g.policy.Unrouted(r.URL.Path), contract.ScopeNone, security.Resource{}); ok {
			h.ServeHTTP(w, r)
		}
	})
}

type (
	principalKey struct{}
	operationKey struct{}
)

// principal returns the principal authorize stored in ctx; the zero
// Principal on routes that need no authentication.
func principal(ctx context.Context) security.Principal {
	p, _ := ctx.Value(principalKey{}).(security.Principal)
	return p
}

// visible reports whether the caller of ctx may see group key in an
// answer that lists groups: it holds the route's operation on it. Without
// access control (or on an open route) every group is visible.
func visible(ctx context.Context, key group.Key) bool {
	op, ok := ctx.Value(operationKey{}).(contract.Operation)
	if !ok {
		return true
	}
	return principal(ctx).Allows(op, contract.ScopeGroup, security.Resource{Stream: key.StreamPrefix, Group: key.ConsumerGroup})
}
