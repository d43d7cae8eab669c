package httpapi

import (
	"context"
	"crypto/tls"
	"log/slog"
	"net/http"
	"runtime/debug"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/julienschmidt/httprouter"

	"github.com/redis-stream-coordinator/coordinator/console"
	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/observe"
)

// Runtime is what the HTTP layer needs from the runtime (actors.System). Every
// method answers from the group's committed state; errors are *group.Error,
// contract.Err* or persistence.Err* (wrapped), or the context's error.
type Runtime interface {
	// Heartbeat runs one member heartbeat (docs/protocol.md §4.2). The request has passed
	// group.ValidateHeartbeat; the coordinator may keep the pointer.
	Heartbeat(ctx context.Context, key group.Key, req *contract.HeartbeatRequest) (contract.HeartbeatResponse, error)
	// CreateGroup creates a group (docs/protocol.md §2.2); streamLevel marks endpoint #2.
	CreateGroup(ctx context.Context, key group.Key, req contract.CreateRequest, streamLevel bool) (contract.GroupView, error)
	// DeleteGroup deletes a group's metadata and returns its pre-delete view (docs/protocol.md §2.3).
	DeleteGroup(ctx context.Context, key group.Key, req contract.DeleteRequest) (contract.GroupView, error)
	// Group returns the GroupResponse (docs/protocol.md §2.2).
	Group(ctx context.Context, key group.Key) (contract.GroupView, error)
	// Members returns every member record sorted by member id (docs/protocol.md §2.6).
	Members(ctx context.Context, key group.Key) ([]group.Member, error)
	// Assignments returns the /assignments projection (docs/protocol.md §2.6).
	Assignments(ctx context.Context, key group.Key) (contract.AssignmentsView, error)
	// Routing returns the producer-routing metadata (docs/protocol.md §2.4).
	Routing(ctx context.Context, key group.Key) (group.Routing, error)
	// Groups returns every group's GroupResponse.
	Groups(ctx context.Context) ([]contract.GroupView, error)
	// ForceReset sets the consumer group's position on req's shards
	// (every shard when none is named) to req.Target at once, racing the
	// members reading them: the runtime performs the Redis writes. Redis
	// failures match contract.ErrDataPlane.
	ForceReset(ctx context.Context, key group.Key, req group.ResetRequest) (contract.OffsetResetResult, error)
	// PreviewReset answers what a reset of req would do, changing nothing
	// (a dry run); errors are ForceReset's.
	PreviewReset(ctx context.Context, key group.Key, req group.ResetRequest) (contract.ResetPreview, error)
	Resharding
	LiveOps
}

// Route describes one registered route to middlewares.
type Route struct {
	// Method is the HTTP method, e.g. "POST".
	Method string
	// Template is the full path template including the base path, with
	// parameters in braces: contract.BasePath + contract.GroupTemplate.
	Template string
	// Mutation is true for the routes that change coordinator state
	// (contract.Route.Mutates).
	Mutation bool
	// Action is the audit action of an Admin API mutation (docs/protocol.md §9.1), e.g.
	// "CREATE_GROUP", or LOGIN; empty for reads and heartbeats
	// (contract.Route.Action).
	Action contract.Action
	// Kind tells the middlewares that treat some routes apart which route
	// this is; New sets it from the template.
	Kind RouteKind
	// Operation and Scope are what access control checks (contract.Route).
	Operation contract.Operation
	Scope     contract.Scope
}

// RouteKind classifies a route by its contract template.
type RouteKind uint8

const (
	// RouteUnscoped names no group: login, the monitoring lists, the
	// cluster view, Grafana's rows.
	RouteUnscoped RouteKind = iota
	// RouteGroup names a stream prefix (and mostly a group): it is served
	// by the group's owner.
	RouteGroup
	// RouteHeartbeat is the member heartbeat (contract.HeartbeatTemplate)
	// or the load harness's no-op copy of it (contract.BenchNoopTemplate).
	RouteHeartbeat
	// RouteProducerRouting is the producer routing read (contract.GroupRouting).
	RouteProducerRouting
)

// Scoped reports whether a route of kind k names a stream prefix.
func (k RouteKind) Scoped() bool { return k != RouteUnscoped }

// routeKind classifies a template relative to the base path.
func routeKind(template string) RouteKind {
	switch template {
	case contract.HeartbeatTemplate, contract.BenchNoopTemplate:
		return RouteHeartbeat
	case contract.GroupRouting:
		return RouteProducerRouting
	}
	if strings.Contains(template, "{streamPrefix}") {
		return RouteGroup
	}
	return RouteUnscoped
}

// Middleware wraps the handle of one route. It is called once per route
// when the API is built; the returned handle runs for every request.
type Middleware func(Route, httprouter.Handle) httprouter.Handle

// Options configure an API. Only Runtime is required.
type Options struct {
	// BasePath prefixes the coordinator routes; blank or "/" means the
	// default contract.BasePath (contract.CleanBasePath reads it for the
	// security policy and audit too).
	BasePath string
	Runtime  Runtime
	// Settings supply the validation limits (MaxShardCount, heartbeat
	// rules); the zero value means group.DefaultSettings().
	Settings group.Settings
	// Health answers GET /monitoring/health; nil reports UP with Redis
	// NOT_CONFIGURED (the memory store without Redis).
	Health observe.HealthChecker
	// Metrics, when non-nil, is served at /actuator/prometheus and /metrics,
	// behind MetricsCredential when that is set.
	Metrics           http.Handler
	MetricsCredential MetricsCredential
	CoordinatorID     string
	// Version is the build's version, served by /actuator/info.
	Version string
	// Logger receives panics and server-side (5xx) errors; default slog.Default().
	Logger *slog.Logger
	// MaxBodyBytes caps request bodies (413 above it); default 1 MiB.
	MaxBodyBytes int64
	// Middleware wraps every coordinator route; the first is outermost.
	Middleware []Middleware
	// DataPlane serves /offsets, the message explorers and the Grafana
	// rows' offsets; nil answers the Redis reads 503 REDIS_NOT_CONFIGURED
	// and gives the Grafana rows unknown offsets.
	DataPlane DataPlane
	// Status answers the consumption status and scaling routes and adds
	// status and desiredMembers to the group views; nil (no Redis) answers
	// those routes 503 REDIS_NOT_CONFIGURED and leaves the views as they
	// are.
	Status StatusSource
	// Streams resets group positions and reads, redrives and deletes dead
	// letters; nil answers those routes 503 REDIS_NOT_CONFIGURED.
	Streams StreamOperator
	// BenchEndpoints adds the load harness's no-op route (BenchNoopTemplate;
	// debug.bench-endpoints).
	BenchEndpoints bool
	// Security, when non-nil, enables authentication, audit, rate limiting
	// and the login and session routes (see Security); its middlewares run
	// inside Middleware. Nil serves an open API.
	Security *Security
	// Cluster, when non-nil, forwards the requests of a group's routes to
	// the coordinator the group is placed on, outside every middleware,
	// serves GET /cluster (ClusterView) and the other coordinators'
	// batches of forwarded heartbeats (ForwardBatchPath). Forwarded, if
	// set, counts each forward (reached: the owner answered).
	Cluster   Cluster
	Forwarded func(reached bool)
	// PeerTLS configures the connections of forwards to owners whose URL
	// is https (nil: the system roots, no client certificate).
	PeerTLS *tls.Config
}

// DefaultMaxBodyBytes is the request body limit of docs/protocol.md §3.
const DefaultMaxBodyBytes = 1 << 20

// API is the coordinator's HTTP handler.
type API struct {
	runtime  Runtime
	settings group.Settings
	health   observe.HealthChecker
	log      *slog.Logger
	maxBody  int64
	router   *httprouter.Router
	draining atomic.Bool
	data     DataPlane
	status   StatusSource
	ops      StreamOperator
	// info is the body of /actuator/info.
	info info
	// benchEndpoints is Options.BenchEndpoints.
	benchEndpoints bool
	// guard is the installed Security; nil when the API is open.
	guard *guard
	// cluster is Options.Cluster (nil: one coordinator, no /cluster).
	cluster Cluster
}

// New builds the API and registers every route. It panics when
// o.Runtime is nil (a wiring error).
func New(o Options) *API {
	if o.Runtime == nil {
		panic("httpapi: Options.Runtime is required")
	}
	if o.Settings == (group.Settings{}) {
		o.Settings = group.DefaultSettings()
	}
	if o.Health == nil {
		o.Health = staticHealth{contract.HealthReport{Status: "UP", CoordinatorID: o.CoordinatorID, Redis: contract.RedisNotConfigured, Loop: "UP"}}
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	a := &API{
		runtime:  o.Runtime,
		settings: o.Settings,
		health:   o.Health,
		log:      o.Logger,
		maxBody:  o.MaxBodyBytes,
		data:     o.DataPlane,
		status:   o.Status,
		ops:      o.Streams,
		info:     info{Version: o.Version, CoordinatorID: o.CoordinatorID},

		benchEndpoints: o.BenchEndpoints,
		cluster:        o.Cluster,
	}
	a.router = a.newRouter()
	r := a.router

	base := contract.CleanBasePath(o.BasePath)
	middleware := a.secure(o, base)
	var fwd *forwarder
	if o.Cluster != nil {
		fwd = newForwarder(a, o.Cluster, o.Forwarded, o.PeerTLS, base)
		middleware = append([]Middleware{fwd.wrap}, middleware...)
		r.POST(ForwardBatchPath, fwd.serveBatch)
	}
	for _, rt := range a.routes() {
		h := rt.handle
		spec, ok := contract.LookupRoute(rt.Method, rt.Template)
		if !ok {
			panic("httpapi: route " + rt.Method + " " + rt.Template + " is not in contract.Routes")
		}
		rt.Mutation, rt.Action, rt.Operation, rt.Scope = spec.Mutates, spec.Action, spec.Operation, spec.Scope
		rt.Kind = routeKind(rt.Template)
		rt.Template = base + rt.Template
		if rt.Mutation {
			h = a.drainGate(h)
		}
		for i := len(middleware) - 1; i >= 0; i-- {
			h = middleware[i](rt.Route, h)
		}
		r.Handle(rt.Method, routerPath(rt.Template), h)
	}

	r.GET("/healthz", func(w http.ResponseWriter, _ *http.Request, _ httprouter.Params) {
		writeJSON(w, http.StatusOK, probeUp)
	})
	r.GET("/readyz", a.ready)
	r.GET("/actuator/health", a.actuatorHealth)
	r.GET(APIDocsPath, openAPI)
	r.GET("/actuator/info", func(w http.ResponseWriter, _ *http.Request, _ httprouter.Params) {
		writeJSON(w, http.StatusOK, a.info)
	})
	// The web console's static files are open (docs/protocol.md §1: /console/**); the
	// API calls it makes carry the token.
	ui := console.Handler(base)
	r.Handler(http.MethodGet, console.Path, ui)
	r.Handler(http.MethodGet, console.Path+"/*file", ui)
	if o.Metrics != nil {
		metrics := o.MetricsCredential.protect(o.Metrics)
		r.Handler(http.MethodGet, "/actuator/prometheus", metrics)
		r.Handler(http.MethodGet, "/metrics", metrics)
	}
	return a
}

// newRouter returns a router answering unknown paths and methods, and
// panics, with JSON error bodies.
func (a *API) newRouter() *httprouter.Router {
	r := httprouter.New()
	r.RedirectTrailingSlash = false
	r.RedirectFixedPath = false
	r.NotFound = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		writeError(w, http.StatusNotFound, string(contract.CodeNotFound), "No route for this path")
	})
	r.MethodNotAllowed = http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		writeError(w, http.StatusMethodNotAllowed, string(contract.CodeMethodNotAllowed), "Method "+req.Method+" is not supported for this path")
	})
	r.PanicHandler = a.recovered
	return r
}

// ServeHTTP serves one request.
func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) { a.router.ServeHTTP(w, r) }

// Drain starts a graceful shutdown: from now on the mutation routes
// (Route.Mutation: creates, deletes, heartbeats) answer 503
// COORDINATOR_TERMINATING and readiness answers 503; reads keep working
// until the server stops.
func (a *API) Drain() { a.draining.Store(true) }

// route is a Route with its handle; Template is relative to the base path
// until New prefixes it.
type route struct {
	Route
	handle httprouter.Handle
}

// routes lists the coordinator routes (docs/protocol.md §2), templates relative to the base path.
func (a *API) routes() []route {
	const (
		stream   = contract.StreamTemplate
		grp      = contract.GroupTemplate
		monGroup = contract.MonitoringGroup
	)
	return slices.Concat([]route{
		{Route{Method: http.MethodPost, Template: stream}, a.create(true, streamCreatedBody)},
		{Route{Method: http.MethodPost, Template: grp}, a.create(false, groupCreatedBody)},
		{Route{Method: http.MethodGet, Template: grp}, read(a, a.group, asIs[contract.GroupView])},
		{Route{Method: http.MethodDelete, Template: grp}, a.deleteGroup},
		{Route{Method: http.MethodGet, Template: contract.GroupRouting}, read(a, a.runtime.Routing, routingBody)},
		{Route{Method: http.MethodGet, Template: contract.GroupHistory}, a.history},
		{Route{Method: http.MethodPost, Template: contract.HeartbeatTemplate}, a.heartbeat},
		{Route{Method: http.MethodGet, Template: contract.MonitoringHealth}, a.healthReport},
		{Route{Method: http.MethodGet, Template: contract.MonitoringCompat}, compatibility},
		{Route{Method: http.MethodGet, Template: contract.MonitoringGroups}, a.listGroups},
		{Route{Method: http.MethodGet, Template: monGroup}, read(a, a.groupWithMutations, asIs[contract.MonitoredGroup])},
		{Route{Method: http.MethodGet, Template: contract.MonitoringMembers}, read(a, a.runtime.Members, membersBody)},
		{Route{Method: http.MethodGet, Template: contract.MonitoringAssigned}, read(a, a.runtime.Assignments, asIs[contract.AssignmentsView])},
		{Route{Method: http.MethodGet, Template: contract.MonitoringConsumed}, read(a, a.runtime.Members, consumptionBody)},
		{Route{Method: http.MethodGet, Template: contract.OpenAPITemplate}, openAPI},
	}, a.reshardingRoutes(), a.positionRoutes(), a.statusRoutes(), a.liveOpsRoutes(), a.grafanaRoutes(), a.securityRoutes(), a.benchRoutes(), a.clusterRoutes())
}

// clusterRoutes serves the cluster view when the API has a Cluster.
func (a *API) clusterRoutes() []route {
	if a.cluster == nil {
		return nil
	}
	return []route{{Route{Method: http.MethodGet, Template: contract.ClusterTemplate}, a.clusterView}}
}

// routerPath turns "/a/{b}/c" into httprouter's "/a/:b/c".
func routerPath(template string) string {
	return strings.NewReplacer("{", ":", "}", "").Replace(template)
}

// drainGate answers 503 COORDINATOR_TERMINATING once Drain was called.
func (a *API) drainGate(h httprouter.Handle) httprouter.Handle {
	return func(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
		if a.draining.Load() {
			if a.cluster != nil && a.cluster.Leaving() {
				// Another coordinator serves the group: the runtime refuses
				// with its address (a heartbeat gets status RETRY).
				h(w, r, ps)
				return
			}
			a.fail(w, r, contract.ErrTerminating)
			return
		}
		h(w, r, ps)
	}
}

// probe is the body of the liveness and readiness probes.
type probe struct {
	Status string `json:"status"`
}

// Probe and readiness statuses.
const (
	statusUp           = "UP"
	statusDegraded     = "DEGRADED"
	statusUnknown      = "UNKNOWN"
	statusOutOfService = "OUT_OF_SERVICE"
)

var probeUp = probe{statusUp}

// info is the body of /actuator/info.
type info struct {
	Version       string `json:"version"`
	CoordinatorID string `json:"coordinatorId"`
}

// readiness returns the health report and the readiness answer: 503 with
// status OUT_OF_SERVICE once draining; 503 while the report is not ready,
// with its status (DEGRADED: the store is DOWN or DEGRADED, or this
// coordinator does not serve), or UNKNOWN where the report says UP (the
// store's first probe has not ended); else 200.
func (a *API) readiness(ctx context.Context) (int, contract.HealthReport) {
	rep := a.health.Check(ctx)
	switch {
	case a.draining.Load():
		rep.Status = statusOutOfService
		return http.StatusServiceUnavailable, rep
	case !rep.Ready():
		if rep.Status == statusUp {
			rep.Status = statusUnknown
		}
		return http.StatusServiceUnavailable, rep
	}
	return http.StatusOK, rep
}

// ready is the readiness probe /readyz: {"status"} with readiness's code.
func (a *API) ready(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	code, rep := a.readiness(r.Context())
	writeJSON(w, code, probe{rep.Status})
}

// actuatorHealth is /actuator/health: the docs/protocol.md §10.2 report with readiness's
// code (status OUT_OF_SERVICE while draining).
func (a *API) actuatorHealth(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	code, rep := a.readiness(r.Context())
	writeJSON(w, code, rep)
}

// recovered answers a handler panic with 500 INTERNAL_ERROR. An
// http.ErrAbortHandler panic is re-raised: it asks net/http to abort the
// response silently.
func (a *API) recovered(w http.ResponseWriter, r *http.Request, p any) {
	if p == http.ErrAbortHandler {
		panic(p)
	}
	a.log.Error("panic serving request", "method", r.Method, "path", r.URL.Path, "panic", p, "stack", string(debug.Stack()))
	writeError(w, http.StatusInternalServerError, string(contract.CodeInternalError), msgInternal)
}

// staticHealth is the observe.HealthChecker used when Options.Health is nil.
type staticHealth struct{ report contract.HealthReport }

func (s staticHealth) Check(context.Context) contract.HealthReport { return s.report }
