package contract

import (
	"net/url"
	"strings"
)

// BasePath is the default base path of the coordinator's API routes
// (coordinator.api.base-path, docs/protocol.md §0). Every template below is
// relative to the base path.
const BasePath = "/coord/v1"

// Route templates (docs/protocol.md §2) relative to the base path, with
// their parameters in braces. The server registers these (an http test
// checks each one); clients fill them with Expand (or the builders
// below). The …Prefix constants are not routes, only the paths the
// monitoring routes start with.
const (
	LoginTemplate     = "/auth/login"
	OpenAPITemplate   = "/openapi.json"
	ClusterTemplate   = "/cluster"
	StreamTemplate    = "/streams/{streamPrefix}"
	StreamScale       = StreamTemplate + "/scale"
	GroupTemplate     = StreamTemplate + "/groups/{consumerGroup}"
	GroupRouting      = GroupTemplate + "/producer-routing"
	GroupStatus       = GroupTemplate + "/status"
	GroupScaling      = GroupTemplate + "/scaling"
	GroupScale        = GroupTemplate + "/scale"
	GroupMigration    = GroupTemplate + "/migrations/{reshardingId}"
	GroupRollback     = GroupMigration + "/rollback"
	GroupOffsetsReset = GroupTemplate + "/offsets/reset"
	GroupRedrive      = GroupTemplate + "/dead-letters/redrive"
	GroupDeleteDead   = GroupTemplate + "/dead-letters/delete"
	GroupPause        = GroupTemplate + "/shards/pause"
	GroupResume       = GroupTemplate + "/shards/resume"
	GroupHistory      = GroupTemplate + "/history"
	HeartbeatTemplate = GroupTemplate + "/members/{memberId}/heartbeat"
	// BenchNoopTemplate is the load harness's no-op heartbeat route
	// (debug.bench-endpoints): the heartbeat route's stack without the
	// group's runtime.
	BenchNoopTemplate = "/bench/noop" + HeartbeatTemplate

	MonitoringPrefix     = "/monitoring"
	MonitoringSession    = MonitoringPrefix + "/session"
	MonitoringHealth     = MonitoringPrefix + "/health"
	MonitoringCompat     = MonitoringPrefix + "/compatibility"
	MonitoringGroups     = MonitoringPrefix + "/groups"
	MonitoringGroup      = MonitoringPrefix + GroupTemplate
	MonitoringMembers    = MonitoringGroup + "/members"
	MonitoringAssigned   = MonitoringGroup + "/assignments"
	MonitoringConsumed   = MonitoringGroup + "/consumption"
	MonitoringMigrations = MonitoringGroup + "/migrations"
	MonitoringOffsets    = MonitoringGroup + "/offsets"
	MonitoringMessages   = MonitoringGroup + "/shards/{shardIndex}/messages"
	MonitoringDeadLetter = MonitoringGroup + "/dead-letters"
	MonitoringPaused     = MonitoringGroup + "/paused-shards"
	MonitoringResets     = MonitoringGroup + "/offsets/resets"
	MonitoringReset      = MonitoringResets + "/{resetId}"
	GrafanaPrefix        = MonitoringPrefix + "/grafana"
)

// Expand fills template's parameters, in order, with params, each escaped
// as one path segment; a parameter without a value is left as it is.
func Expand(template string, params ...string) string {
	var b strings.Builder
	b.Grow(len(template) + 16*len(params))
	rest := template
	for _, p := range params {
		open := strings.IndexByte(rest, '{')
		if open < 0 {
			break
		}
		end := strings.IndexByte(rest[open:], '}')
		if end < 0 {
			break
		}
		b.WriteString(rest[:open])
		b.WriteString(url.PathEscape(p))
		rest = rest[open+end+1:]
	}
	b.WriteString(rest)
	return b.String()
}

// StreamPath is the path of stream prefix p (StreamTemplate).
func StreamPath(p string) string { return Expand(StreamTemplate, p) }

// GroupPath is the path of the group g of stream prefix p (GroupTemplate).
func GroupPath(p, g string) string { return Expand(GroupTemplate, p, g) }

// HeartbeatPath is the heartbeat path of member m of the group g of p
// (HeartbeatTemplate).
func HeartbeatPath(p, g, m string) string { return Expand(HeartbeatTemplate, p, g, m) }

// CleanBasePath returns p without surrounding white space and trailing
// slashes, with a leading slash; a blank p (or only slashes) is BasePath.
// It is how coordinator.api.base-path is read everywhere.
func CleanBasePath(p string) string {
	base := strings.TrimRight(strings.TrimSpace(p), "/")
	if base == "" {
		return BasePath
	}
	if !strings.HasPrefix(base, "/") {
		base = "/" + base
	}
	return base
}

// Headers of the member protocol.
const (
	// OwnerHeader names the coordinator (its base URL,
	// scheme://host:port) that owns the group, or should, on the answers
	// of a group's routes in a cluster (docs/cluster.md), refused or
	// answered as GROUP_OWNED_ELSEWHERE / RETRY among them: a client that
	// knows it sends the group's requests there (the member its next
	// heartbeat).
	OwnerHeader = "X-Coordinator-Owner"
)
