package security

import (
	"slices"
	"strings"
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
)

// Role is an Admin API role name as it appears in configuration and tokens.
type Role string

// The roles of docs/protocol.md §1. MONITOR is the legacy alias of READ; ADMIN is the legacy
// full permission set.
const (
	RoleRead    Role = "READ"
	RoleWrite   Role = "WRITE"
	RoleMember  Role = "MEMBER"
	RoleAdmin   Role = "ADMIN"
	RoleMonitor Role = "MONITOR"
)

// allRoles lists every role, sorted by name.
var allRoles = []Role{RoleAdmin, RoleMember, RoleMonitor, RoleRead, RoleWrite}

// ParseRole returns the role whose name is exactly name. Tokens use it:
// unknown or differently cased names are not roles.
func ParseRole(name string) (Role, bool) {
	r := Role(name)
	return r, slices.Contains(allRoles, r)
}

// parseConfiguredRole accepts a role name from configuration: surrounding
// blanks and letter case are ignored.
func parseConfiguredRole(name string) (Role, bool) {
	return ParseRole(strings.ToUpper(strings.TrimSpace(name)))
}

// Principal is an authenticated caller.
type Principal struct {
	// Username is the configured user name (or a token's subject).
	Username string
	// Roles are the roles as configured or carried by the token, sorted by
	// name and free of duplicates. Each stands for a grant on every
	// resource (roleGrants).
	Roles []Role
	// Grants are the user's configured grants (api.users[].grants), read
	// from the configuration on every request, never from a token.
	Grants []Grant
	// AuthTime is when the principal last proved its password: tokens
	// carry it across refreshes, and a session ends
	// Options.SessionMaxLifetime after it.
	AuthTime time.Time
}

// Allows reports whether the principal may perform op on res at scope
// (contract.Route): some role's grant or configured grant covers it.
// OpOpen and OpAuthenticated are allowed to every principal.
func (p Principal) Allows(op contract.Operation, scope contract.Scope, res Resource) bool {
	if op == contract.OpOpen || op == contract.OpAuthenticated {
		return true
	}
	for _, r := range p.Roles {
		if grantOf(r).allows(op, scope, res) {
			return true
		}
	}
	return slices.ContainsFunc(p.Grants, func(g Grant) bool { return g.allows(op, scope, res) })
}

// RoleNames returns the principal's role names, sorted.
func (p Principal) RoleNames() []string {
	names := make([]string, len(p.Roles))
	for i, r := range p.Roles {
		names[i] = string(r)
	}
	return names
}

// normalizeRoles returns roles sorted by name without duplicates.
func normalizeRoles(roles []Role) []Role {
	out := slices.Clone(roles)
	slices.Sort(out)
	return slices.Compact(out)
}
