package contract

import "reflect"

// Operation is what a route does to the resource it names, the unit of
// authorisation (docs/security.md, "Grants"). A principal's grants name
// operations on stream-prefix and group patterns; a route needs its
// operation on the route's resource.
type Operation string

// The operations. OpOpen routes need no credential at all.
const (
	OpOpen Operation = ""
	// OpHeartbeat: send member heartbeats (and the bench harness's no-op
	// copy); a grant may bind it to a member-id prefix.
	OpHeartbeat Operation = "HEARTBEAT"
	// OpDescribe: read coordination state (groups, members, assignments,
	// lag, migrations, offsets, producer routing, health, the cluster).
	OpDescribe Operation = "DESCRIBE"
	// OpReadMessages: read message payloads and dead-letter contents; not
	// implied by OpDescribe.
	OpReadMessages Operation = "READ_MESSAGES"
	// OpAlter: change a group's consumption: offset resets, pause and
	// resume, scaling, rollback, dead-letter redrive and delete.
	OpAlter Operation = "ALTER"
	// OpCreate and OpDelete: create and delete groups (and streams).
	OpCreate Operation = "CREATE"
	OpDelete Operation = "DELETE"
	// OpAuthenticated: any authenticated principal (the session route, and
	// requests that match no route); no grant names it.
	OpAuthenticated Operation = "AUTHENTICATED"
)

// Operations lists every operation a grant may name, in the order
// docs/security.md gives them.
var Operations = []Operation{OpHeartbeat, OpDescribe, OpReadMessages, OpAlter, OpCreate, OpDelete}

// Scope tells which resource a route's operation applies to.
type Scope uint8

const (
	// ScopeNone: the route names no stream (login, the API description).
	ScopeNone Scope = iota
	// ScopeAny: the route names no stream but answers about whatever the
	// caller may see (lists, health, the cluster, Grafana's rows): it needs
	// the operation on at least one resource, and its answer holds only
	// the groups the caller holds the operation on. A Grafana route that
	// selects one group by its streamPrefix and consumerGroup query
	// parameters needs the operation on that group.
	ScopeAny
	// ScopeStream: the route names a stream prefix and no group; only a
	// grant whose group pattern matches every group of the prefix ("*")
	// covers it.
	ScopeStream
	// ScopeGroup: the route names a stream prefix and a group.
	ScopeGroup
)

// Feature names the option a route exists under; FeatureAlways routes
// always exist.
type Feature uint8

const (
	FeatureAlways Feature = iota
	// FeatureSecurity: login and session exist only with access control.
	FeatureSecurity
	// FeatureCluster: the cluster view exists only with cluster membership.
	FeatureCluster
	// FeatureBench: the load harness's no-op route (debug.bench-endpoints).
	FeatureBench
)

// Route is one route of the Admin, Monitoring and member APIs: everything
// the server's router, access control, audit and drain read of it, and
// what clients need to call it. Template is relative to the base path.
type Route struct {
	Method   string
	Template string
	// Operation is what the caller needs on the resource (Scope).
	Operation Operation
	Scope     Scope
	// Action is the audit action (docs/protocol.md §9.1); "" for routes
	// that are not audited.
	Action Action
	// Mutates marks the routes that change coordinator state: drained at
	// shutdown (503 COORDINATOR_TERMINATING) and, under security, needing
	// a JSON body from a same-origin caller.
	Mutates bool
	// Feature is the option the route exists under.
	Feature Feature
	// Request is the type of the route's JSON request body, nil when it
	// takes none. Answers are the types of its success answer's JSON body:
	// one, or one per variant the request selects (an offset reset answers
	// the live reset, the forced reset's result or the dry run's preview);
	// none when the answer is not one of contract's types (the API
	// description itself).
	Request reflect.Type
	Answers []reflect.Type
}

// typeOf is the reflect.Type of T, for Route.Request.
func typeOf[T any]() reflect.Type { return reflect.TypeFor[T]() }

// answer is Route.Answers of a route with one answer type, T.
func answer[T any]() []reflect.Type { return []reflect.Type{reflect.TypeFor[T]()} }

// Action is an audited mutation (docs/protocol.md §9.1): the action of
// an audit event and of the routes that are audited.
type Action string

// The audited actions, one per audited route of Routes.
const (
	ActionCreateStream      Action = "CREATE_STREAM"
	ActionScaleStream       Action = "SCALE_STREAM"
	ActionCreateGroup       Action = "CREATE_GROUP"
	ActionDeleteGroup       Action = "DELETE_GROUP"
	ActionScaleGroup        Action = "SCALE_GROUP"
	ActionRollbackMigration Action = "ROLLBACK_MIGRATION"
	// ActionLogin is POST /auth/login, audited for its failures (outcome
	// UNAUTHORIZED, or FAILED for 429) as much as its successes. Its
	// events carry no stream prefix, name the user only once
	// authenticated, and the body is not fingerprinted.
	ActionLogin              Action = "LOGIN"
	ActionResetOffsets       Action = "RESET_OFFSETS"
	ActionRedriveDeadLetters Action = "REDRIVE_DEAD_LETTERS"
	ActionDeleteDeadLetters  Action = "DELETE_DEAD_LETTERS"
	// ActionPauseShards and ActionResumeShards change a group's paused
	// shards (docs/operations.md).
	ActionPauseShards  Action = "PAUSE_SHARDS"
	ActionResumeShards Action = "RESUME_SHARDS"
)

// Grafana's row routes (docs/protocol.md §10.3), relative to the base path.
const (
	GrafanaGroups         = GrafanaPrefix + "/groups"
	GrafanaStreamOptions  = GrafanaPrefix + "/options/streams"
	GrafanaGroupOptions   = GrafanaPrefix + "/options/consumer-groups"
	GrafanaShardOptions   = GrafanaPrefix + "/options/shards"
	GrafanaMembers        = GrafanaPrefix + "/members"
	GrafanaShards         = GrafanaPrefix + "/shards"
	GrafanaAssignments    = GrafanaPrefix + "/assignments"
	GrafanaMessages       = GrafanaPrefix + "/messages"
	methodGet, methodPost = "GET", "POST"
)

// Routes is the route table: every route the coordinator serves under its
// base path. The server registers exactly these (a test in http walks the
// router against it).
var Routes = []Route{
	{Method: methodPost, Template: LoginTemplate, Operation: OpOpen, Scope: ScopeNone, Action: ActionLogin, Feature: FeatureSecurity, Request: typeOf[LoginRequest](), Answers: answer[Login]()},
	{Method: methodGet, Template: OpenAPITemplate, Operation: OpOpen, Scope: ScopeNone},
	{Method: methodGet, Template: MonitoringSession, Operation: OpAuthenticated, Scope: ScopeNone, Feature: FeatureSecurity, Answers: answer[Session]()},

	{Method: methodPost, Template: StreamTemplate, Operation: OpCreate, Scope: ScopeStream, Action: ActionCreateStream, Mutates: true, Request: typeOf[CreateRequest](), Answers: answer[StreamCreated]()},
	{Method: methodPost, Template: StreamScale, Operation: OpAlter, Scope: ScopeStream, Action: ActionScaleStream, Mutates: true, Request: typeOf[ScaleRequest](), Answers: answer[StreamScaleView]()},
	{Method: methodPost, Template: GroupTemplate, Operation: OpCreate, Scope: ScopeGroup, Action: ActionCreateGroup, Mutates: true, Request: typeOf[CreateRequest](), Answers: answer[GroupView]()},
	{Method: methodGet, Template: GroupTemplate, Operation: OpDescribe, Scope: ScopeGroup, Answers: answer[GroupView]()},
	{Method: "DELETE", Template: GroupTemplate, Operation: OpDelete, Scope: ScopeGroup, Action: ActionDeleteGroup, Mutates: true, Request: typeOf[DeleteRequest](), Answers: answer[GroupView]()},
	{Method: methodGet, Template: GroupRouting, Operation: OpDescribe, Scope: ScopeGroup, Answers: answer[RoutingView]()},
	{Method: methodGet, Template: GroupHistory, Operation: OpDescribe, Scope: ScopeGroup, Answers: answer[HistoryView]()},
	{Method: methodPost, Template: GroupScale, Operation: OpAlter, Scope: ScopeGroup, Action: ActionScaleGroup, Mutates: true, Request: typeOf[ScaleRequest](), Answers: answer[Migration]()},
	{Method: methodGet, Template: GroupMigration, Operation: OpDescribe, Scope: ScopeGroup, Answers: answer[Migration]()},
	{Method: methodPost, Template: GroupRollback, Operation: OpAlter, Scope: ScopeGroup, Action: ActionRollbackMigration, Mutates: true, Request: typeOf[RollbackRequest](), Answers: answer[Migration]()},
	{Method: methodPost, Template: GroupOffsetsReset, Operation: OpAlter, Scope: ScopeGroup, Action: ActionResetOffsets, Mutates: true, Request: typeOf[OffsetReset](), Answers: []reflect.Type{typeOf[LiveReset](), typeOf[OffsetResetResult](), typeOf[ResetPreview]()}},
	{Method: methodPost, Template: GroupRedrive, Operation: OpAlter, Scope: ScopeGroup, Action: ActionRedriveDeadLetters, Mutates: true, Request: typeOf[DeadLetterAction](), Answers: answer[DeadLetterResults]()},
	{Method: methodPost, Template: GroupDeleteDead, Operation: OpAlter, Scope: ScopeGroup, Action: ActionDeleteDeadLetters, Mutates: true, Request: typeOf[DeadLetterAction](), Answers: answer[DeadLetterResults]()},
	{Method: methodPost, Template: GroupPause, Operation: OpAlter, Scope: ScopeGroup, Action: ActionPauseShards, Mutates: true, Request: typeOf[PauseRequest](), Answers: answer[PausedView]()},
	{Method: methodPost, Template: GroupResume, Operation: OpAlter, Scope: ScopeGroup, Action: ActionResumeShards, Mutates: true, Request: typeOf[PauseRequest](), Answers: answer[PausedView]()},
	{Method: methodPost, Template: HeartbeatTemplate, Operation: OpHeartbeat, Scope: ScopeGroup, Mutates: true, Request: typeOf[HeartbeatRequest](), Answers: answer[HeartbeatResponse]()},
	{Method: methodPost, Template: BenchNoopTemplate, Operation: OpHeartbeat, Scope: ScopeGroup, Mutates: true, Feature: FeatureBench, Request: typeOf[HeartbeatRequest](), Answers: answer[HeartbeatResponse]()},

	{Method: methodGet, Template: ClusterTemplate, Operation: OpDescribe, Scope: ScopeAny, Feature: FeatureCluster, Answers: answer[ClusterView]()},
	{Method: methodGet, Template: MonitoringHealth, Operation: OpDescribe, Scope: ScopeAny, Answers: answer[HealthReport]()},
	{Method: methodGet, Template: MonitoringCompat, Operation: OpDescribe, Scope: ScopeAny, Answers: answer[Compatibility]()},
	{Method: methodGet, Template: MonitoringGroups, Operation: OpDescribe, Scope: ScopeAny, Answers: answer[GroupList]()},
	{Method: methodGet, Template: MonitoringGroup, Operation: OpDescribe, Scope: ScopeGroup, Answers: answer[MonitoredGroup]()},
	{Method: methodGet, Template: MonitoringMembers, Operation: OpDescribe, Scope: ScopeGroup, Answers: answer[MemberList]()},
	{Method: methodGet, Template: MonitoringAssigned, Operation: OpDescribe, Scope: ScopeGroup, Answers: answer[AssignmentsView]()},
	{Method: methodGet, Template: MonitoringConsumed, Operation: OpDescribe, Scope: ScopeGroup, Answers: answer[Consumption]()},
	{Method: methodGet, Template: MonitoringMigrations, Operation: OpDescribe, Scope: ScopeGroup, Answers: answer[MigrationList]()},
	{Method: methodGet, Template: MonitoringOffsets, Operation: OpDescribe, Scope: ScopeGroup, Answers: answer[Offsets]()},
	{Method: methodGet, Template: MonitoringPaused, Operation: OpDescribe, Scope: ScopeGroup, Answers: answer[PausedView]()},
	{Method: methodGet, Template: MonitoringResets, Operation: OpDescribe, Scope: ScopeGroup, Answers: answer[ResetList]()},
	{Method: methodGet, Template: MonitoringReset, Operation: OpDescribe, Scope: ScopeGroup, Answers: answer[LiveReset]()},
	{Method: methodGet, Template: GroupStatus, Operation: OpDescribe, Scope: ScopeGroup, Answers: answer[StatusView]()},
	{Method: methodGet, Template: GroupScaling, Operation: OpDescribe, Scope: ScopeGroup, Answers: answer[ScalingView]()},
	{Method: methodGet, Template: MonitoringMessages, Operation: OpReadMessages, Scope: ScopeGroup, Answers: answer[MessagesPage]()},
	{Method: methodGet, Template: MonitoringDeadLetter, Operation: OpReadMessages, Scope: ScopeGroup, Answers: answer[DeadLetterPage]()},

	{Method: methodGet, Template: GrafanaGroups, Operation: OpDescribe, Scope: ScopeAny, Answers: answer[[]GrafanaGroupRow]()},
	{Method: methodGet, Template: GrafanaStreamOptions, Operation: OpDescribe, Scope: ScopeAny, Answers: answer[[]GrafanaOption]()},
	{Method: methodGet, Template: GrafanaGroupOptions, Operation: OpDescribe, Scope: ScopeAny, Answers: answer[[]GrafanaOption]()},
	{Method: methodGet, Template: GrafanaShardOptions, Operation: OpDescribe, Scope: ScopeAny, Answers: answer[[]GrafanaOption]()},
	{Method: methodGet, Template: GrafanaMembers, Operation: OpDescribe, Scope: ScopeAny, Answers: answer[[]GrafanaMemberRow]()},
	{Method: methodGet, Template: GrafanaShards, Operation: OpDescribe, Scope: ScopeAny, Answers: answer[[]GrafanaShardRow]()},
	{Method: methodGet, Template: GrafanaAssignments, Operation: OpDescribe, Scope: ScopeAny, Answers: answer[[]GrafanaAssignmentRow]()},
	{Method: methodGet, Template: GrafanaMessages, Operation: OpReadMessages, Scope: ScopeAny, Answers: answer[[]GrafanaMessageRow]()},
}

// LookupRoute returns the route of method and template (relative to the
// base path).
func LookupRoute(method, template string) (Route, bool) {
	for _, r := range Routes {
		if r.Method == method && r.Template == template {
			return r, true
		}
	}
	return Route{}, false
}
