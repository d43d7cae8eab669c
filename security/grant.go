package security

import (
	"fmt"
	"slices"
	"strings"

	"github.com/redis-stream-coordinator/coordinator/contract"
)

// Pattern matches stream prefixes or consumer group names, as Kafka's ACL
// resource patterns do: a literal name, the literal "*" for every name, or
// a prefix (every name that starts with Value; an empty prefix matches
// every name).
type Pattern struct {
	Value    string
	Prefixed bool
}

// Any is the pattern that matches every name.
var Any = Pattern{Value: "*"}

// Matches reports whether name is covered by p.
func (p Pattern) Matches(name string) bool {
	switch {
	case p.Prefixed:
		return strings.HasPrefix(name, p.Value)
	case p.Value == "*":
		return true
	}
	return name == p.Value
}

// matchesEvery reports whether p covers every name (so a stream-level
// route, which acts on all the groups of a prefix, is within it).
func (p Pattern) matchesEvery() bool {
	return (!p.Prefixed && p.Value == "*") || (p.Prefixed && p.Value == "")
}

// Grant allows operations on the groups whose stream prefix and name match
// its patterns. A grant with OpHeartbeat and a MemberIDPrefix lets its
// holder heartbeat only as member ids that start with that prefix.
type Grant struct {
	Streams        Pattern
	Groups         Pattern
	Operations     []contract.Operation
	MemberIDPrefix string
}

// Resource is what a request acts on: a group (Stream and Group), every
// group of a prefix (Group ""), and for heartbeats the member id.
type Resource struct {
	Stream string
	Group  string
	Member string
}

// allows reports whether g covers op on res at scope.
func (g Grant) allows(op contract.Operation, scope contract.Scope, res Resource) bool {
	if !slices.Contains(g.Operations, op) {
		return false
	}
	switch scope {
	case contract.ScopeNone, contract.ScopeAny:
		return true
	case contract.ScopeStream:
		return g.Streams.Matches(res.Stream) && g.Groups.matchesEvery()
	}
	if !g.Streams.Matches(res.Stream) || !g.Groups.Matches(res.Group) {
		return false
	}
	return op != contract.OpHeartbeat || strings.HasPrefix(res.Member, g.MemberIDPrefix)
}

// ParseOperation reads an operation name from configuration: case,
// surrounding blanks and '-' for '_' are forgiven.
func ParseOperation(name string) (contract.Operation, bool) {
	op := contract.Operation(strings.ReplaceAll(strings.ToUpper(strings.TrimSpace(name)), "-", "_"))
	return op, slices.Contains(contract.Operations, op)
}

// ParsePattern reads a pattern from configuration: kind is "literal"
// (or blank) or "prefixed".
func ParsePattern(value, kind string) (Pattern, error) {
	switch strings.ToLower(strings.TrimSpace(kind)) {
	case "", "literal":
		if value == "" {
			return Pattern{}, fmt.Errorf("a literal pattern must not be blank (\"*\" matches every name)")
		}
		return Pattern{Value: value}, nil
	case "prefixed":
		return Pattern{Value: value, Prefixed: true}, nil
	}
	return Pattern{}, fmt.Errorf("unknown pattern type %q: want literal or prefixed", kind)
}

// roleGrants are the grants each global role stands for: every resource,
// the operations of docs/security.md's upgrade table.
var roleGrants = map[Role][]contract.Operation{
	RoleAdmin:   contract.Operations,
	RoleWrite:   {contract.OpDescribe, contract.OpReadMessages, contract.OpAlter, contract.OpCreate, contract.OpDelete},
	RoleRead:    {contract.OpDescribe, contract.OpReadMessages},
	RoleMonitor: {contract.OpDescribe, contract.OpReadMessages},
	RoleMember:  {contract.OpHeartbeat},
}

// grantOf returns the grant a global role stands for.
func grantOf(r Role) Grant {
	return Grant{Streams: Any, Groups: Any, Operations: roleGrants[r]}
}

// GrantViews returns the principal's configured grants as GET
// /monitoring/session shows them; nil when it has none.
func (p Principal) GrantViews() []contract.GrantView {
	var out []contract.GrantView
	for _, g := range p.Grants {
		out = append(out, contract.GrantView{
			Stream: g.Streams.Value, StreamPattern: g.Streams.kind(),
			Group: g.Groups.Value, GroupPattern: g.Groups.kind(),
			Operations: slices.Clone(g.Operations), MemberIDPrefix: g.MemberIDPrefix,
		})
	}
	return out
}

// kind is the pattern type's configuration name.
func (p Pattern) kind() string {
	if p.Prefixed {
		return "prefixed"
	}
	return "literal"
}
