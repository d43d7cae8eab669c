package security

import (
	"time"

	"golang.org/x/crypto/bcrypt"

	"testing"

	"github.com/redis-stream-coordinator/coordinator/contract"
)

func TestPatternMatches(t *testing.T) {
	for _, c := range []struct {
		p     Pattern
		name  string
		match bool
	}{
		{Any, "orders", true},
		{Any, "", true},
		{Pattern{Value: "orders"}, "orders", true},
		{Pattern{Value: "orders"}, "orders-eu", false},
		{Pattern{Value: "orders"}, "Orders", false},
		{Pattern{Value: "team-a-", Prefixed: true}, "team-a-orders", true},
		{Pattern{Value: "team-a-", Prefixed: true}, "team-a-", true},
		{Pattern{Value: "team-a-", Prefixed: true}, "team-b-orders", false},
		{Pattern{Value: "*", Prefixed: true}, "orders", false},
		{Pattern{Prefixed: true}, "anything", true},
	} {
		if got := c.p.Matches(c.name); got != c.match {
			t.Errorf("%v matches %q = %v, want %v", c.p, c.name, got, c.match)
		}
	}
}

// TestRoleGrants: each global role stands for its operations on every
// resource (docs/security.md's upgrade table) and nothing else.
func TestRoleGrants(t *testing.T) {
	want := map[Role][]contract.Operation{
		RoleAdmin:   contract.Operations,
		RoleWrite:   {contract.OpDescribe, contract.OpReadMessages, contract.OpAlter, contract.OpCreate, contract.OpDelete},
		RoleRead:    {contract.OpDescribe, contract.OpReadMessages},
		RoleMonitor: {contract.OpDescribe, contract.OpReadMessages},
		RoleMember:  {contract.OpHeartbeat},
	}
	res := Resource{Stream: "any-stream", Group: "any-group", Member: "any-member"}
	for role, ops := range want {
		p := Principal{Username: "x", Roles: []Role{role}}
		for _, op := range contract.Operations {
			allowed := false
			for _, o := range ops {
				allowed = allowed || o == op
			}
			for _, scope := range []contract.Scope{contract.ScopeAny, contract.ScopeStream, contract.ScopeGroup} {
				if got := p.Allows(op, scope, res); got != allowed {
					t.Errorf("%s %s at scope %d = %v, want %v", role, op, scope, got, allowed)
				}
			}
		}
	}
	if (Principal{}).Allows(contract.OpDescribe, contract.ScopeAny, Resource{}) {
		t.Error("a principal without roles or grants may DESCRIBE")
	}
	if !(Principal{}).Allows(contract.OpAuthenticated, contract.ScopeNone, Resource{}) {
		t.Error("OpAuthenticated needs more than a principal")
	}
}

// TestGrantScopes: a scoped grant covers its patterns only; stream-level
// routes need a group pattern that matches every group; a heartbeat grant
// binds member ids to its prefix.
func TestGrantScopes(t *testing.T) {
	teamA := Principal{Username: "team-a", Grants: []Grant{
		{Streams: Pattern{Value: "team-a-", Prefixed: true}, Groups: Any, Operations: []contract.Operation{contract.OpDescribe, contract.OpAlter}},
		{Streams: Pattern{Value: "orders"}, Groups: Pattern{Value: "billing"}, Operations: []contract.Operation{contract.OpHeartbeat}, MemberIDPrefix: "billing-"},
	}}
	for _, c := range []struct {
		op    contract.Operation
		scope contract.Scope
		res   Resource
		want  bool
	}{
		{contract.OpDescribe, contract.ScopeGroup, Resource{Stream: "team-a-x", Group: "g"}, true},
		{contract.OpAlter, contract.ScopeStream, Resource{Stream: "team-a-x"}, true},
		{contract.OpDescribe, contract.ScopeGroup, Resource{Stream: "team-b-x", Group: "g"}, false},
		{contract.OpReadMessages, contract.ScopeGroup, Resource{Stream: "team-a-x", Group: "g"}, false},
		{contract.OpCreate, contract.ScopeGroup, Resource{Stream: "team-a-x", Group: "g"}, false},
		{contract.OpDescribe, contract.ScopeAny, Resource{}, true},
		{contract.OpReadMessages, contract.ScopeAny, Resource{}, false},
		{contract.OpHeartbeat, contract.ScopeGroup, Resource{Stream: "orders", Group: "billing", Member: "billing-1"}, true},
		{contract.OpHeartbeat, contract.ScopeGroup, Resource{Stream: "orders", Group: "billing", Member: "shipping-1"}, false},
		{contract.OpHeartbeat, contract.ScopeGroup, Resource{Stream: "orders", Group: "shipping", Member: "billing-1"}, false},
		{contract.OpHeartbeat, contract.ScopeGroup, Resource{Stream: "orders-eu", Group: "billing", Member: "billing-1"}, false},
		// The heartbeat grant names one group: it does not cover the stream.
		{contract.OpHeartbeat, contract.ScopeStream, Resource{Stream: "orders"}, false},
	} {
		if got := teamA.Allows(c.op, c.scope, c.res); got != c.want {
			t.Errorf("%s scope %d %+v = %v, want %v", c.op, c.scope, c.res, got, c.want)
		}
	}
}

func TestParseGrantParts(t *testing.T) {
	if op, ok := ParseOperation(" read-messages "); !ok || op != contract.OpReadMessages {
		t.Errorf("ParseOperation = %q, %v", op, ok)
	}
	if _, ok := ParseOperation("AUTHENTICATED"); ok {
		t.Error("AUTHENTICATED is not an operation a grant may name")
	}
	if p, err := ParsePattern("team-", "PREFIXED"); err != nil || !p.Prefixed || p.Value != "team-" {
		t.Errorf("ParsePattern = %+v, %v", p, err)
	}
	if _, err := ParsePattern("", "literal"); err == nil {
		t.Error("a blank literal pattern is accepted")
	}
	if _, err := ParsePattern("x", "regex"); err == nil {
		t.Error("an unknown pattern type is accepted")
	}
}

// TestGrantsOnlyUser: a user with grants and no role logs in, and its
// token carries the grants (read from the configuration, not the token).
func TestGrantsOnlyUser(t *testing.T) {
	g := Grant{Streams: Pattern{Value: "orders"}, Groups: Any, Operations: []contract.Operation{contract.OpDescribe}}
	u, _ := newTestUsers(t, Options{AdminUsername: "admin", AdminPassword: "a", TokenSecret: "s",
		Users: []User{{Username: "viewer", Password: "pw-v", Grants: []Grant{g}}}})
	tok, err := u.Login("viewer", "pw-v")
	if err != nil {
		t.Fatal(err)
	}
	p, err := u.Authenticate("Bearer " + tok.AccessToken)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Allows(contract.OpDescribe, contract.ScopeGroup, Resource{Stream: "orders", Group: "g"}) ||
		p.Allows(contract.OpDescribe, contract.ScopeGroup, Resource{Stream: "other", Group: "g"}) {
		t.Errorf("token principal %+v", p)
	}
	if _, err := NewUsers(Options{Users: []User{{Username: "nobody", Password: "x"}}}); err == nil {
		t.Error("a user with neither roles nor grants is accepted")
	}
}

// TestSessionHasAnEnd: refreshing a token with itself keeps the session's
// start, so no chain of refreshes outlives SessionMaxLifetime.
func TestSessionHasAnEnd(t *testing.T) {
	opts := defaultOptions()
	opts.TokenTTL, opts.SessionMaxLifetime, opts.TokenLeeway = time.Hour, 3*time.Hour, -1
	u, clock := newTestUsers(t, opts)
	tok, err := u.Login("admin", "password")
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		clock.Advance(50 * time.Minute)
		p, err := u.Authenticate("Bearer " + tok.AccessToken)
		if err != nil {
			t.Fatalf("refresh at %s: %v", clock.Now(), err)
		}
		tok = u.Refresh(p)
	}
	clock.Advance(50 * time.Minute) // 2 h 30 min into the session
	p, err := u.Authenticate("Bearer " + tok.AccessToken)
	if err != nil {
		t.Fatal(err)
	}
	tok = u.Refresh(p)
	if want := t0.Add(3 * time.Hour).Truncate(time.Second); !tok.ExpiresAt.Equal(want) {
		t.Errorf("last refresh expires at %s, want the session's end %s", tok.ExpiresAt, want)
	}
	clock.Advance(31 * time.Minute)
	if _, err := u.Authenticate("Bearer " + tok.AccessToken); err == nil {
		t.Error("a token outlived the session")
	}
	// Logging in again with the password starts a new session.
	if _, err := u.Login("admin", "password"); err != nil {
		t.Fatal(err)
	}
	if _, err := NewUsers(Options{AdminUsername: "a", AdminPassword: "b", TokenTTL: time.Hour, SessionMaxLifetime: time.Minute}); err == nil {
		t.Error("a session shorter than a token is accepted")
	}
}

// TestAuthenticateKnown: the throttled path accepts right credentials
// that are cheap to check and nothing else.
func TestAuthenticateKnown(t *testing.T) {
	hash, err := bcrypt.GenerateFromPassword([]byte("hashed-pw"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := newTestUsers(t, Options{AdminUsername: "admin", AdminPassword: "a", TokenSecret: "s", Users: []User{
		{Username: "plain", Password: "plain-pw", Roles: []string{"READ"}},
		{Username: "hashed", Password: string(hash), Roles: []string{"READ"}},
	}})
	if _, ok := u.AuthenticateKnown(BasicAuthorization("plain", "plain-pw")); !ok {
		t.Error("right plain-text password refused")
	}
	if _, ok := u.AuthenticateKnown(BasicAuthorization("plain", "wrong")); ok {
		t.Error("wrong password accepted")
	}
	if _, ok := u.AuthenticateKnown(BasicAuthorization("hashed", "hashed-pw")); ok {
		t.Error("a bcrypt password never checked by bcrypt was accepted cheaply")
	}
	tok, err := u.Login("hashed", "hashed-pw")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := u.AuthenticateKnown(BasicAuthorization("hashed", "hashed-pw")); !ok {
		t.Error("a bcrypt password that passed bcrypt is not known")
	}
	if _, ok := u.AuthenticateKnown(BasicAuthorization("hashed", "hashed-pw2")); ok {
		t.Error("wrong bcrypt password accepted")
	}
	if _, ok := u.AuthenticateKnown("Bearer " + tok.AccessToken); !ok {
		t.Error("valid token refused")
	}
	if _, ok := u.AuthenticateKnown(BasicAuthorization("nobody", "x")); ok {
		t.Error("unknown user accepted")
	}
}

// TestUnknownUsersCostAsMuch: with a bcrypt user configured, an unknown
// user name is checked against a bcrypt hash of the same cost.
func TestUnknownUsersCostAsMuch(t *testing.T) {
	hash, err := bcrypt.GenerateFromPassword([]byte("pw"), bcrypt.MinCost+1)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := newTestUsers(t, Options{Users: []User{{Username: "h", Password: string(hash), Roles: []string{"READ"}}}})
	if cost, err := bcrypt.Cost(u.unknownUser.bcryptHash); err != nil || cost != bcrypt.MinCost+1 {
		t.Errorf("unknown user's credential cost %d (%v), want %d", cost, err, bcrypt.MinCost+1)
	}
	plain, _ := newTestUsers(t, defaultOptions())
	if plain.unknownUser.bcryptHash != nil {
		t.Error("bcrypt for unknown users without any bcrypt user")
	}
}
