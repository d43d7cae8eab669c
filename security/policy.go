package security

import (
	"strings"

	"github.com/redis-stream-coordinator/coordinator/contract"
)

// Policy is the route → required-role table of docs/protocol.md §1. It decides on the
// matched route (its method and template, which the code fixes), never on
// the request's path: nothing a caller puts in a stream, group or member
// name can change the rule that applies.
type Policy struct {
	// BasePath is coordinator.api.base-path; blank means contract.BasePath.
	// A trailing slash is ignored.
	BasePath string
	// AuthenticateMemberAPI is coordinator.api.authenticate-member-api:
	// heartbeats need MEMBER when true and no check at all when false.
	AuthenticateMemberAPI bool
}

// RequiredRole returns the role a request matched to a route needs and
// whether it needs authentication at all. template is the route's full
// template including the base path, with parameters in braces
// (contract.BasePath + contract.StreamTemplate). Rules, first match wins, only for
// templates at or below the base path:
//
//  1. <base>/auth/login and <base>/openapi.json (the API description) → open;
//  2. <base> + contract.HeartbeatTemplate (or contract.BenchNoopTemplate,
//     the load harness's no-op copy, debug.bench-endpoints) → MEMBER when
//     AuthenticateMemberAPI, otherwise open;
//  3. <base>/monitoring and below → READ;
//  4. anything else → WRITE for POST, PATCH, PUT and DELETE, else READ.
//
// Templates outside the base path (/actuator/health, /metrics, …) are open.
// Methods are compared case-insensitively.
func (p Policy) RequiredRole(method, template string) (role Role, needsAuth bool) {
	base := p.basePath()
	if !underPath(template, base) {
		return "", false
	}
	switch {
	case template == base+contract.LoginTemplate, template == base+contract.OpenAPITemplate:
		return "", false
	case p.IsHeartbeat(template):
		if p.AuthenticateMemberAPI {
			return RoleMember, true
		}
		return "", false
	case underPath(template, base+contract.MonitoringPrefix):
		return RoleRead, true
	}
	return readOrWrite(method), true
}

// Unrouted returns the role a request that matched no route (an unknown
// path or method, answered 404 or 405) needs: under the base path every
// such request is authenticated, WRITE for mutating methods and READ
// otherwise, so that 401/403 come before 404/405 and an answer never
// depends on names in the path; outside the base path nothing is checked.
func (p Policy) Unrouted(method, path string) (role Role, needsAuth bool) {
	if !underPath(path, p.basePath()) {
		return "", false
	}
	return readOrWrite(method), true
}

// IsHeartbeat reports whether template (base path included) is the member
// heartbeat route or the load harness's no-op copy of it.
func (p Policy) IsHeartbeat(template string) bool {
	base := p.basePath()
	return template == base+contract.HeartbeatTemplate || template == base+contract.BenchNoopTemplate
}

func readOrWrite(method string) Role {
	if IsMutatingMethod(method) {
		return RoleWrite
	}
	return RoleRead
}

// IsMutatingMethod reports whether method is POST, PATCH, PUT or DELETE
// (case-insensitively).
func IsMutatingMethod(method string) bool {
	switch strings.ToUpper(method) {
	case "POST", "PATCH", "PUT", "DELETE":
		return true
	}
	return false
}

func (p Policy) basePath() string { return contract.CleanBasePath(p.BasePath) }

// underPath reports whether path is prefix itself or below it, segment-wise
// (/a/b covers /a/b/x but not /a/bc).
func underPath(path, prefix string) bool {
	return path == prefix || strings.HasPrefix(path, prefix+"/")
}
