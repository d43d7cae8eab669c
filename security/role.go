package security

import (
	"slices"
	"strings"
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

// Grants reports whether holding r satisfies a requirement of required.
func (r Role) Grants(required Role) bool {
	switch r {
	case RoleAdmin:
		return true
	case RoleWrite:
		return required == RoleWrite || required == RoleRead
	case RoleRead, RoleMonitor:
		return required == RoleRead
	case RoleMember:
		return required == RoleMember
	}
	return false
}

// Principal is an authenticated caller.
type Principal struct {
	// Username is the configured user name (or a token's subject).
	Username string
	// Roles are the roles as configured or carried by the token, sorted by
	// name and free of duplicates. They are not expanded by the grants.
	Roles []Role
}

// Has reports whether any of the principal's roles grants required.
func (p Principal) Has(required Role) bool {
	return slices.ContainsFunc(p.Roles, func(r Role) bool { return r.Grants(required) })
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
