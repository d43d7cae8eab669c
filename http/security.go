package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"github.com/julienschmidt/httprouter"

	"github.com/redis-stream-coordinator/coordinator/audit"
	"github.com/redis-stream-coordinator/coordinator/contract"
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
//  2. authentication: 401 with WWW-Authenticate when the credentials are
//     missing or invalid, 403 when the principal lacks the route's role;
//  3. rate limit (when Limiter is set): Admin API mutations under
//     <base>/streams/… except heartbeats, keyed principal:P:G (G = * for
//     stream-level routes), counted before the body is read or validated.
type Security struct {
	// Users authenticates callers and issues tokens; required.
	Users *security.Users
	// AuthenticateMemberAPI is api.authenticate-member-api: heartbeats need
	// MEMBER when true and no check at all when false.
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
	// route) per user name tried and per client address; a key that used
	// up its permits is answered 429 with Retry-After, its credentials
	// unchecked, until its window ends.
	FailedAuthPerUser    *ratelimit.Limiter
	FailedAuthPerAddress *ratelimit.Limiter
	// Now is the clock of audit timestamps and rate-limit windows; nil
	// means time.Now.
	Now func() time.Time
}

// guard is the Security of one API, bound to its base path.
type guard struct {
	Security
	policy        security.Policy
	auditRoutes   audit.Routes
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
		auditRoutes:   audit.Routes{BasePath: base},
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
	return append(slices.Clip(o.Middleware), g.audited, g.authenticated, g.rateLimited)
}

// securityRoutes are the routes that exist only with Security: login (#1)
// and session (#12), templates relative to the base path.
func (a *API) securityRoutes() []route {
	if a.guard == nil {
		return nil
	}
	return []route{
		{Route{Method: http.MethodPost, Template: contract.LoginTemplate, Action: string(audit.Login)}, a.login},
		{Route{Method: http.MethodGet, Template: contract.MonitoringSession}, a.session},
	}
}

// Error codes of the access checks.
const (
	codeUnauthorized = string(contract.CodeUnauthorized)
	codeForbidden    = string(contract.CodeForbidden)
)

// wwwAuthenticate is the challenge of every 401 (docs/protocol.md §1).
var wwwAuthenticate = []string{`Basic realm="redis-stream-coordinator"`}

// unauthorized answers 401 with the Basic challenge and the docs/protocol.md §0 error body.
func unauthorized(w http.ResponseWriter) {
	w.Header()["Www-Authenticate"] = wwwAuthenticate
	writeError(w, http.StatusUnauthorized, codeUnauthorized, "Authentication required: valid Basic credentials or Bearer token")
}

// authorize applies docs/protocol.md §1 to r, whose route (or its absence) decided role and
// needed: it returns r, carrying the principal when one was authenticated,
// or answers 401/403 and returns false. Requests that need no
// authentication pass with their credentials unchecked. The authenticated
// principal is recorded on the request's audit event even when it is then
// refused with 403.
func (g *guard) authorize(w http.ResponseWriter, r *http.Request, role security.Role, needed bool) (*http.Request, bool) {
	if !needed {
		return r, true
	}
	header := r.Header.Get("Authorization")
	throttle := g.throttle(r, security.BasicUsername(header))
	if throttle.refused(w) {
		return nil, false
	}
	p, err := g.Users.Authenticate(header)
	if err != nil {
		if header != "" {
			throttle.failed()
		}
		unauthorized(w)
		return nil, false
	}
	if ev := audit.FromContext(r.Context()); ev != nil {
		ev.SetPrincipal(p.Username, p.RoleNames())
	}
	if !p.Has(role) {
		writeError(w, http.StatusForbidden, codeForbidden, "Role "+string(role)+" is required")
		return nil, false
	}
	return r.WithContext(context.WithValue(r.Context(), principalKey{}, p)), true
}

// authenticated is the authentication middleware (see Security): the
// route's method and template decide the required role, once per route.
func (g *guard) authenticated(rt Route, h httprouter.Handle) httprouter.Handle {
	role, needed := g.policy.RequiredRole(rt.Method, rt.Template)
	return func(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
		if r, ok := g.authorize(w, r, role, needed); ok {
			h(w, r, ps)
		}
	}
}

// guardUnrouted applies authorize (security.Policy.Unrouted) before an
// unrouted answer (404, 405). Unrouted requests are neither audited nor
// rate limited: they change nothing.
func (g *guard) guardUnrouted(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		role, needed := g.policy.Unrouted(r.Method, r.URL.Path)
		if r, ok := g.authorize(w, r, role, needed); ok {
			h.ServeHTTP(w, r)
		}
	})
}

type principalKey struct{}

// principal returns the principal authorize stored in ctx; the zero
// Principal on routes that need no authentication.
func principal(ctx context.Context) security.Principal {
	p, _ := ctx.Value(principalKey{}).(security.Principal)
	return p
}
