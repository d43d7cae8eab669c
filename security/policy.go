package security

import (
	"strings"

	"github.com/redis-stream-coordinator/coordinator/internal/basepath"
)

// OpenAPIPath is the path of the OpenAPI document below the base path; it
// is open like login.
const OpenAPIPath = "/openapi.json"

// DefaultBasePath is the Admin API base path used when Policy.BasePath is blank.
const DefaultBasePath = basepath.Default

// Policy is the route → required-role table of §1.
type Policy struct {
	// BasePath is coordinator.api.base-path; blank means DefaultBasePath.
	// A trailing slash is ignored.
	BasePath string
	// AuthenticateMemberAPI is coordinator.api.authenticate-member-api:
	// heartbeats need MEMBER when true and no check at all when false.
	AuthenticateMemberAPI bool
}

// RequiredRole returns the role a request needs and whether it needs
// authentication at all. path is the request's URL path (r.URL.Path). Rules,
// first match wins, only for the base path and below:
//
//  1. <base>/auth/login and <base>/openapi.json (the API description) → open;
//  2. a path containing /members/ and ending in /heartbeat → MEMBER when
//     AuthenticateMemberAPI, otherwise open;
//  3. <base>/monitoring and below → READ;
//  4. <base>/streams and below → WRITE for POST, PATCH, PUT and DELETE, else READ;
//  5. anything else under the base → WRITE for those methods, else READ.
//
// Paths outside the base path (/actuator/health, /metrics, …) are open.
// Methods are compared case-insensitively.
func (p Policy) RequiredRole(method, path string) (role Role, needsAuth bool) {
	base := p.basePath()
	if !underPath(path, base) {
		return "", false
	}
	switch {
	case path == base+"/auth/login", path == base+OpenAPIPath:
		return "", false
	case strings.Contains(path, "/members/") && strings.HasSuffix(path, "/heartbeat"):
		if p.AuthenticateMemberAPI {
			return RoleMember, true
		}
		return "", false
	case underPath(path, base+"/monitoring"):
		return RoleRead, true
	}
	if IsMutatingMethod(method) {
		return RoleWrite, true
	}
	return RoleRead, true
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

func (p Policy) basePath() string { return basepath.Clean(p.BasePath) }

// underPath reports whether path is prefix itself or below it, segment-wise
// (/coord/v1 covers /coord/v1/x but not /coord/v10).
func underPath(path, prefix string) bool {
	return path == prefix || strings.HasPrefix(path, prefix+"/")
}
