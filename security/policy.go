package security

import (
	"strings"

	"github.com/redis-stream-coordinator/coordinator/contract"
)

// Policy decides what a request needs from the route it matched in
// contract.Routes, never from its path: nothing a caller puts in a stream,
// group or member name can change the rule that applies.
type Policy struct {
	// BasePath is coordinator.api.base-path; blank means contract.BasePath.
	// A trailing slash is ignored.
	BasePath string
	// AuthenticateMemberAPI is coordinator.api.authenticate-member-api:
	// heartbeats need OpHeartbeat when true and no credential when false.
	AuthenticateMemberAPI bool
}

// Required returns the operation a request matched to rt needs:
// rt.Operation, except that heartbeats are open while
// AuthenticateMemberAPI is false.
func (p Policy) Required(rt contract.Route) contract.Operation {
	if rt.Operation == contract.OpHeartbeat && !p.AuthenticateMemberAPI {
		return contract.OpOpen
	}
	return rt.Operation
}

// Unrouted returns what a request that matched no route (an unknown path
// or method, answered 404 or 405) needs: under the base path an
// authenticated principal, so that 401 comes before 404/405 and an answer
// never depends on names in the path; outside it nothing.
func (p Policy) Unrouted(path string) contract.Operation {
	if !underPath(path, contract.CleanBasePath(p.BasePath)) {
		return contract.OpOpen
	}
	return contract.OpAuthenticated
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

// underPath reports whether path is prefix itself or below it, segment-wise
// (/a/b covers /a/b/x but not /a/bc).
func underPath(path, prefix string) bool {
	return path == prefix || strings.HasPrefix(path, prefix+"/")
}
