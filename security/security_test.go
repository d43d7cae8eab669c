package security

import (
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"golang.org/x/crypto/bcrypt"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/fakeclock"
)

var t0 = time.Date(2026, 5, 21, 0, 0, 3, 123_000_000, time.UTC)

func newTestUsers(t *testing.T, opts Options) (*Users, *fakeclock.Clock) {
	t.Helper()
	c := fakeclock.New(t0)
	opts.Now = c.Now
	u, err := NewUsers(opts)
	if err != nil {
		t.Fatalf("NewUsers: %v", err)
	}
	return u, c
}

func defaultOptions() Options {
	return Options{AdminUsername: "admin", AdminPassword: "password"}
}

func basic(user, password string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+password))
}

func mustUnauthenticated(t *testing.T, err error) {
	t.Helper()
	if !errors.Is(err, ErrUnauthenticated) {
		t.Fatalf("err = %v, want ErrUnauthenticated", err)
	}
}

func TestDefaultAdminPrincipal(t *testing.T) {
	u, _ := newTestUsers(t, defaultOptions())
	p, err := u.Authenticate(basic("admin", "password"))
	if err != nil {
		t.Fatalf("Authenticate: %v", err)
	}
	want := []Role{RoleAdmin, RoleMember, RoleMonitor, RoleRead, RoleWrite}
	if p.Username != "admin" || !slices.Equal(p.Roles, want) {
		t.Fatalf("principal = %+v, want admin with %v", p, want)
	}
	if !u.DevSecret() {
		t.Fatal("DevSecret() = false without a token secret")
	}
	if _, err := u.Authenticate(basic("admin", "wrong")); err == nil {
		t.Fatal("wrong password accepted")
	}
}

func TestTokenRoundTrip(t *testing.T) {
	u, _ := newTestUsers(t, Options{AdminUsername: "admin", AdminPassword: "password", TokenSecret: "s3cret", TokenTTL: time.Hour})
	if u.DevSecret() {
		t.Fatal("DevSecret() = true with a token secret")
	}
	tok, err := u.Login("admin", "password")
	if err != nil {
		t.Fatalf("Login: %v", err)
	}
	wantExp := time.Date(2026, 5, 21, 1, 0, 3, 0, time.UTC)
	if tok.TokenType != "Bearer" || !tok.ExpiresAt.Equal(wantExp) || tok.ExpiresInSeconds != 3600 {
		t.Fatalf("token = %+v, want Bearer expiring %s in 3600s", tok, wantExp)
	}
	if want := []string{"ADMIN", "MEMBER", "MONITOR", "READ", "WRITE"}; !slices.Equal(tok.Roles, want) {
		t.Fatalf("roles = %v, want %v", tok.Roles, want)
	}
	p, err := u.Authenticate("Bearer " + tok.AccessToken)
	if err != nil {
		t.Fatalf("Authenticate(token): %v", err)
	}
	if p.Username != "admin" || !slices.Equal(p.RoleNames(), tok.Roles) {
		t.Fatalf("principal = %+v", p)
	}
	refreshed := u.Refresh(p)
	if _, err := u.Authenticate("Bearer " + refreshed.AccessToken); err != nil {
		t.Fatalf("refreshed token rejected: %v", err)
	}
}

func TestTokenExpiry(t *testing.T) {
	u, c := newTestUsers(t, Options{AdminUsername: "admin", AdminPassword: "password", TokenTTL: time.Minute, TokenLeeway: -1})
	tok, err := u.Login("admin", "password")
	if err != nil {
		t.Fatalf("Login: %v", err)
	}
	for _, tc := range []struct {
		name string
		at   time.Time
		ok   bool
	}{
		{"just issued", t0, true},
		{"one second before exp", tok.ExpiresAt.Add(-time.Second), true},
		{"one nanosecond before exp", tok.ExpiresAt.Add(-1), true},
		{"at exp", tok.ExpiresAt, false},
		{"after exp", tok.ExpiresAt.Add(time.Hour), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c.Set(tc.at)
			_, err := u.Authenticate("Bearer " + tok.AccessToken)
			if tc.ok && err != nil {
				t.Fatalf("rejected: %v", err)
			}
			if !tc.ok {
				mustUnauthenticated(t, err)
			}
		})
	}
}

// flip replaces the character in the middle of s with a different base64url
// character (middle characters always carry payload bits).
func flip(s string) string {
	i := len(s) / 2
	repl := byte('A')
	if s[i] == 'A' {
		repl = 'B'
	}
	return s[:i] + string(repl) + s[i+1:]
}

func TestTokenTampering(t *testing.T) {
	u, _ := newTestUsers(t, defaultOptions())
	tok, err := u.Login("admin", "password")
	if err != nil {
		t.Fatalf("Login: %v", err)
	}
	parts := strings.Split(tok.AccessToken, ".")
	if len(parts) != 3 {
		t.Fatalf("token has %d parts", len(parts))
	}
	for i, name := range []string{"header", "payload", "signature"} {
		t.Run(name, func(t *testing.T) {
			tampered := slices.Clone(parts)
			tampered[i] = flip(tampered[i])
			_, err := u.Authenticate("Bearer " + strings.Join(tampered, "."))
			mustUnauthenticated(t, err)
		})
	}
	for name, raw := range map[string]string{
		"empty":           "",
		"garbage":         "not-a-token",
		"two parts":       parts[0] + "." + parts[1],
		"trailing dot":    tok.AccessToken + ".",
		"no signature":    parts[0] + "." + parts[1] + ".",
		"swapped payload": parts[1] + "." + parts[0] + "." + parts[2],
	} {
		t.Run(name, func(t *testing.T) {
			_, err := u.Authenticate("Bearer " + raw)
			mustUnauthenticated(t, err)
		})
	}
}

// sign builds a token with arbitrary claims and algorithm for negative tests.
func sign(t *testing.T, method jwt.SigningMethod, key any, claims jwt.Claims) string {
	t.Helper()
	s, err := jwt.NewWithClaims(method, claims).SignedString(key)
	if err != nil {
		t.Fatalf("sign: %v", err)
	}
	return s
}

func devSecret() []byte { return []byte("admin:password:redis-stream-coordinator-token") }

func claimsFor(sub string, roles ...string) tokenClaims {
	return tokenClaims{Roles: roles, RegisteredClaims: jwt.RegisteredClaims{
		Subject:   sub,
		IssuedAt:  jwt.NewNumericDate(t0),
		ExpiresAt: jwt.NewNumericDate(t0.Add(time.Hour)),
	}}
}

func TestTokenRejections(t *testing.T) {
	u, _ := newTestUsers(t, defaultOptions())
	other, _ := newTestUsers(t, Options{AdminUsername: "admin", AdminPassword: "password", TokenSecret: "other"})
	fromOther, err := other.Login("admin", "password")
	if err != nil {
		t.Fatalf("Login: %v", err)
	}
	noExp := claimsFor("admin", "READ")
	noExp.ExpiresAt = nil
	for name, raw := range map[string]string{
		"other secret":      fromOther.AccessToken,
		"alg none":          sign(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, claimsFor("admin", "ADMIN")),
		"alg HS512":         sign(t, jwt.SigningMethodHS512, devSecret(), claimsFor("admin", "ADMIN")),
		"no exp":            sign(t, jwt.SigningMethodHS256, devSecret(), noExp),
		"blank subject":     sign(t, jwt.SigningMethodHS256, devSecret(), claimsFor(" ", "ADMIN")),
		"no roles":          sign(t, jwt.SigningMethodHS256, devSecret(), claimsFor("admin")),
		"only unknown":      sign(t, jwt.SigningMethodHS256, devSecret(), claimsFor("admin", "ROOT", "admin")),
		"roles not strings": sign(t, jwt.SigningMethodHS256, devSecret(), jwt.MapClaims{"sub": "admin", "iat": t0.Unix(), "exp": t0.Add(time.Hour).Unix(), "roles": 7}),
		"string exp":        sign(t, jwt.SigningMethodHS256, devSecret(), jwt.MapClaims{"sub": "admin", "iat": t0.Unix(), "exp": fmt.Sprint(t0.Add(time.Hour).Unix()), "roles": []string{"ADMIN"}}),
		"string iat":        sign(t, jwt.SigningMethodHS256, devSecret(), jwt.MapClaims{"sub": "admin", "iat": fmt.Sprint(t0.Unix()), "exp": t0.Add(time.Hour).Unix(), "roles": []string{"ADMIN"}}),
		"no iat":            sign(t, jwt.SigningMethodHS256, devSecret(), jwt.MapClaims{"sub": "admin", "exp": t0.Add(time.Hour).Unix(), "roles": []string{"ADMIN"}}),
		"iat in the future": sign(t, jwt.SigningMethodHS256, devSecret(), jwt.MapClaims{"sub": "admin", "iat": t0.Add(time.Hour).Unix(), "exp": t0.Add(2 * time.Hour).Unix(), "roles": []string{"ADMIN"}}),
		"lives too long":    sign(t, jwt.SigningMethodHS256, devSecret(), jwt.MapClaims{"sub": "admin", "iat": t0.Unix(), "exp": t0.Add(DefaultTokenTTL + time.Second).Unix(), "roles": []string{"ADMIN"}}),
		"nbf in the future": sign(t, jwt.SigningMethodHS256, devSecret(), jwt.MapClaims{"sub": "admin", "iat": t0.Unix(), "nbf": t0.Add(time.Hour).Unix(), "exp": t0.Add(2 * time.Hour).Unix(), "roles": []string{"ADMIN"}}),
		"fractional ver":    sign(t, jwt.SigningMethodHS256, devSecret(), jwt.MapClaims{"sub": "admin", "iat": t0.Unix(), "exp": t0.Add(time.Hour).Unix(), "roles": []string{"ADMIN"}, "ver": 0.5}),
		"string ver":        sign(t, jwt.SigningMethodHS256, devSecret(), jwt.MapClaims{"sub": "admin", "iat": t0.Unix(), "exp": t0.Add(time.Hour).Unix(), "roles": []string{"ADMIN"}, "ver": "0"}),
		"unknown user":      sign(t, jwt.SigningMethodHS256, devSecret(), claimsFor("grafana", "READ")),
	} {
		t.Run(name, func(t *testing.T) {
			_, err := u.Authenticate("Bearer " + raw)
			mustUnauthenticated(t, err)
		})
	}
}

func TestTokenRolesByExactName(t *testing.T) {
	u, _ := newTestUsers(t, defaultOptions())
	raw := sign(t, jwt.SigningMethodHS256, devSecret(), claimsFor("admin", "WRITE", "read", "READ", "ROOT", "WRITE"))
	p, err := u.Authenticate("Bearer " + raw)
	if err != nil {
		t.Fatalf("Authenticate: %v", err)
	}
	if want := []Role{RoleRead, RoleWrite}; p.Username != "admin" || !slices.Equal(p.Roles, want) {
		t.Fatalf("principal = %+v, want grafana with %v", p, want)
	}
}

func TestAuthorizationHeaderParsing(t *testing.T) {
	u, _ := newTestUsers(t, Options{
		AdminUsername: "admin", AdminPassword: "password",
		Users: []User{{Username: "bob", Password: "pa:ss:word", Roles: []string{"write"}}},
	})
	tok, err := u.Login("bob", "pa:ss:word")
	if err != nil {
		t.Fatalf("Login: %v", err)
	}
	creds := base64.StdEncoding.EncodeToString([]byte("bob:pa:ss:word"))
	for _, tc := range []struct {
		header string
		ok     bool
	}{
		{"Basic " + creds, true},
		{"basic " + creds, true},
		{"BASIC " + creds, true},
		{"  BaSiC   " + creds + "  ", true},
		{"Bearer " + tok.AccessToken, true},
		{"bearer " + tok.AccessToken, true},
		{"BEARER " + tok.AccessToken, true},
		{" Bearer  " + tok.AccessToken + " ", true},
		{"", false},
		{"   ", false},
		{"Basic", false},
		{"Bearer", false},
		{"Bearer ", false},
		{"Basic " + base64.RawURLEncoding.EncodeToString([]byte("bob:pa:ss:word?")), false},
		{"Basic " + base64.StdEncoding.EncodeToString([]byte("bob")), false},
		{"Basic " + base64.StdEncoding.EncodeToString([]byte("bob:pa")), false},
		{"Basic !!!", false},
		{"Digest " + creds, false},
		{creds, false},
		// Bearer never falls back to a password check.
		{"Bearer " + creds, false},
		{"Basic " + tok.AccessToken, false},
	} {
		p, err := u.Authenticate(tc.header)
		if tc.ok {
			if err != nil || p.Username != "bob" || !slices.Equal(p.Roles, []Role{RoleWrite}) {
				t.Errorf("Authenticate(%q) = %+v, %v; want bob/WRITE", tc.header, p, err)
			}
			continue
		}
		if !errors.Is(err, ErrUnauthenticated) {
			t.Errorf("Authenticate(%q) err = %v, want ErrUnauthenticated", tc.header, err)
		}
	}
}

func TestBcryptUsers(t *testing.T) {
	hash, err := bcrypt.GenerateFromPassword([]byte("hunter2"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	var users []User
	for _, prefix := range []string{"$2a$", "$2b$", "$2y$"} {
		users = append(users, User{Username: "u" + prefix[2:3], Password: prefix + string(hash[4:]), Roles: []string{"READ"}})
	}
	u, _ := newTestUsers(t, Options{AdminUsername: "admin", AdminPassword: "password", Users: users})
	for _, cfg := range users {
		if _, err := u.Authenticate(basic(cfg.Username, "hunter2")); err != nil {
			t.Errorf("%s: right password rejected: %v", cfg.Username, err)
		}
		if _, err := u.Login(cfg.Username, cfg.Password); err == nil {
			t.Errorf("%s: the hash itself was accepted as password", cfg.Username)
		}
		if _, err := u.Login(cfg.Username, "hunter3"); err == nil {
			t.Errorf("%s: wrong password accepted", cfg.Username)
		}
	}
	if _, err := NewUsers(Options{Users: []User{{Username: "x", Password: "$2a$broken", Roles: []string{"READ"}}}}); err == nil {
		t.Fatal("malformed bcrypt hash accepted")
	} else if strings.Contains(err.Error(), "broken") {
		t.Fatalf("error leaks the password: %v", err)
	}
}

func TestConfiguredUsers(t *testing.T) {
	u, _ := newTestUsers(t, Options{
		AdminUsername: "admin", AdminPassword: "password",
		Users: []User{
			{Username: "admin", Password: "password", Roles: []string{"ADMIN"}},
			{Username: "writer", Password: "w", Roles: []string{" write ", "WRITE"}},
			{Username: "grafana", Password: "g", Roles: []string{"READ", "monitor"}},
			{Username: "  ", Password: "x", Roles: []string{"bogus"}},
			{Username: "nopass", Password: "", Roles: []string{"READ"}},
		},
	})
	wantIgnored := []IgnoredUser{
		{Username: "admin", Reason: "uses the admin-username/admin-password pair"},
		{Username: "nopass", Reason: "blank password"},
	}
	if !slices.Equal(u.Ignored(), wantIgnored) {
		t.Fatalf("Ignored() = %v, want %v", u.Ignored(), wantIgnored)
	}
	for _, tc := range []struct {
		user, password string
		roles          []Role
	}{
		{"admin", "password", nil},
		{"nopass", "", nil},
		{"writer", "w", []Role{RoleWrite}},
		{"grafana", "g", []Role{RoleMonitor, RoleRead}},
	} {
		p, err := u.Authenticate(basic(tc.user, tc.password))
		if tc.roles == nil {
			mustUnauthenticated(t, err)
			continue
		}
		if err != nil || !slices.Equal(p.Roles, tc.roles) {
			t.Errorf("%s: %+v, %v; want roles %v", tc.user, p, err, tc.roles)
		}
	}
}

func TestAdminNameWithOtherPasswordIsListed(t *testing.T) {
	u, _ := newTestUsers(t, Options{
		AdminUsername: "admin", AdminPassword: "password",
		Users: []User{{Username: "admin", Password: "different", Roles: []string{"WRITE"}}},
	})
	if _, err := u.Authenticate(basic("admin", "password")); err == nil {
		t.Fatal("admin pair accepted although users are configured")
	}
	p, err := u.Authenticate(basic("admin", "different"))
	if err != nil || !slices.Equal(p.Roles, []Role{RoleWrite}) {
		t.Fatalf("listed admin = %+v, %v", p, err)
	}
}

func TestNewUsersErrors(t *testing.T) {
	for name, opts := range map[string]Options{
		"unknown role":     {Users: []User{{Username: "a", Password: "p", Roles: []string{"ROOT"}}}},
		"no roles":         {Users: []User{{Username: "a", Password: "p"}}},
		"duplicate":        {Users: []User{{Username: "a", Password: "p", Roles: []string{"READ"}}, {Username: "a", Password: "q", Roles: []string{"READ"}}}},
		"blank admin":      {AdminUsername: "admin"},
		"blank admin name": {AdminPassword: "password"},
		"negative ttl":     {AdminUsername: "admin", AdminPassword: "password", TokenTTL: -time.Second},
		"sub-second ttl":   {AdminUsername: "admin", AdminPassword: "password", TokenTTL: time.Millisecond},
	} {
		if _, err := NewUsers(opts); err == nil {
			t.Errorf("%s: NewUsers succeeded", name)
		}
	}
}

// TestTokensFollowTheUserTable: a token is only as good as its user is
// now (issue 21, defect 2). The "restart" builds new Users with the same
// secret from a changed user list.
func TestTokensFollowTheUserTable(t *testing.T) {
	users := func(list ...User) *Users {
		u, _ := newTestUsers(t, Options{AdminUsername: "admin", AdminPassword: "x", TokenSecret: "s", Users: list})
		return u
	}
	victim := User{Username: "victim", Password: "pw-v", Roles: []string{"WRITE"}}
	writer := User{Username: "writer", Password: "pw-w", Roles: []string{"WRITE"}}
	before := users(victim, writer)
	victimTok, err := before.Login("victim", "pw-v")
	if err != nil {
		t.Fatal(err)
	}
	writerTok, err := before.Login("writer", "pw-w")
	if err != nil {
		t.Fatal(err)
	}
	demoted := writer
	demoted.Roles = []string{"READ"}
	after := users(demoted)
	if _, err := after.Authenticate("Bearer " + victimTok.AccessToken); !errors.Is(err, ErrUnauthenticated) {
		t.Errorf("removed user's token: %v", err)
	}
	p, err := after.Authenticate("Bearer " + writerTok.AccessToken)
	if err == nil && p.Allows(contract.OpAlter, contract.ScopeGroup, Resource{Stream: "p", Group: "g"}) {
		t.Errorf("demoted user's token still grants WRITE: %+v", p)
	}

	disabled := victim
	disabled.Disabled = true
	off := users(disabled)
	if _, err := off.Authenticate("Bearer " + victimTok.AccessToken); !errors.Is(err, ErrUnauthenticated) {
		t.Errorf("disabled user's token: %v", err)
	}
	if _, err := off.Login("victim", "pw-v"); !errors.Is(err, ErrUnauthenticated) {
		t.Errorf("disabled user logged in: %v", err)
	}

	rotated := victim
	rotated.TokenVersion = 1
	now := users(rotated, writer)
	if _, err := now.Authenticate("Bearer " + victimTok.AccessToken); !errors.Is(err, ErrUnauthenticated) {
		t.Errorf("token of an earlier version: %v", err)
	}
	if _, err := now.Authenticate("Bearer " + writerTok.AccessToken); err != nil {
		t.Errorf("another user's token was revoked too: %v", err)
	}
	fresh, err := now.Login("victim", "pw-v")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := now.Authenticate("Bearer " + fresh.AccessToken); err != nil {
		t.Errorf("token of the current version: %v", err)
	}
}

func TestTokenLeeway(t *testing.T) {
	u, c := newTestUsers(t, Options{AdminUsername: "admin", AdminPassword: "password", TokenTTL: time.Minute, TokenLeeway: 10 * time.Second})
	tok, err := u.Login("admin", "password")
	if err != nil {
		t.Fatal(err)
	}
	c.Set(tok.ExpiresAt.Add(9 * time.Second))
	if _, err := u.Authenticate("Bearer " + tok.AccessToken); err != nil {
		t.Errorf("within the leeway: %v", err)
	}
	c.Set(tok.ExpiresAt.Add(11 * time.Second))
	mustUnauthenticated(t, func() error { _, err := u.Authenticate("Bearer " + tok.AccessToken); return err }())
	if _, err := NewUsers(Options{AdminUsername: "a", AdminPassword: "b", TokenTTL: time.Hour, TokenMaxLifetime: time.Minute}); err == nil {
		t.Error("a max lifetime shorter than the TTL was accepted")
	}
}
