package security

import (
	"cmp"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/redis-stream-coordinator/coordinator/contract"
)

// ErrUnauthenticated is returned (possibly wrapped with a reason that never
// contains a secret) when credentials are missing or invalid. The HTTP layer
// maps it to 401.
var ErrUnauthenticated = errors.New("unauthenticated")

// DefaultTokenTTL is the token lifetime used when Options.TokenTTL is zero.
const DefaultTokenTTL = 7 * 24 * time.Hour

// DefaultSessionMaxLifetime is the session lifetime used when
// Options.SessionMaxLifetime is zero.
const DefaultSessionMaxLifetime = 30 * 24 * time.Hour

// DefaultTokenLeeway is the clock skew allowed on exp and iat when
// Options.TokenLeeway is zero.
const DefaultTokenLeeway = 30 * time.Second

// User is one entry of coordinator.api.users.
type User struct {
	Username string
	// Password is plain text, or a bcrypt hash when it starts with $2a$,
	// $2b$ or $2y$.
	Password string
	// Roles are role names; case and surrounding blanks are ignored.
	Roles []string
	// Disabled users can neither log in nor use their tokens.
	Disabled bool
	// TokenVersion is carried by the user's tokens; a token is accepted
	// only while it equals the configured value, so raising it revokes
	// every token issued before.
	TokenVersion int64
	// Grants are scoped permissions besides the roles (docs/security.md).
	Grants []Grant
}

// Options mirrors coordinator.api's security settings.
type Options struct {
	AdminUsername string
	AdminPassword string
	// Users, when empty, selects the single default principal
	// AdminUsername/AdminPassword with every role.
	Users       []User
	TokenSecret string
	// TokenTTL is the token lifetime; zero means DefaultTokenTTL.
	TokenTTL time.Duration
	// TokenMaxLifetime is the longest exp − iat a token may have; zero
	// means TokenTTL. It must not be shorter than TokenTTL.
	TokenMaxLifetime time.Duration
	// TokenLeeway is the clock skew allowed on exp and iat; zero means
	// DefaultTokenLeeway, negative none.
	TokenLeeway time.Duration
	// SessionMaxLifetime bounds how long tokens refreshed from tokens stay
	// valid after the password was last checked; zero means
	// DefaultSessionMaxLifetime. It must not be shorter than TokenTTL.
	SessionMaxLifetime time.Duration
	// Now is the clock used to issue and verify tokens; nil means time.Now.
	Now func() time.Time
}

// IgnoredUser names a configured user that was left out, and why. It never
// carries the password.
type IgnoredUser struct {
	Username string
	Reason   string
}

// Users holds the configured principals and the token signer. It is safe for
// concurrent use.
type Users struct {
	accounts  map[string]account
	ignored   []IgnoredUser
	secret    []byte
	devSecret bool
	ttl       time.Duration
	// maxLifetime and leeway are Options.TokenMaxLifetime and TokenLeeway.
	maxLifetime time.Duration
	leeway      time.Duration
	// sessionMax is Options.SessionMaxLifetime.
	sessionMax time.Duration
	// unknownUser is checked for a user name that is no account, at the
	// cost of the most expensive configured credential.
	unknownUser credential
	// verified maps the name of a bcrypt user to the SHA-256 of the
	// password that last passed bcrypt ([sha256.Size]byte), for
	// AuthenticateKnown.
	verified sync.Map
	now      func() time.Time
}

type account struct {
	cred         credential
	roles        []Role
	grants       []Grant
	disabled     bool
	tokenVersion int64
}

// NewUsers validates opts and builds the principals of docs/protocol.md §1:
//
//   - no Users: one principal AdminUsername/AdminPassword with roles ADMIN,
//     MEMBER, MONITOR, READ, WRITE (both must be non-blank);
//   - otherwise only the listed users. Entries with a blank name are skipped
//     silently; entries with a blank password, or whose name and password are
//     the admin pair, are left out and reported by Ignored. Unknown role names,
//     users without roles, duplicate names and malformed bcrypt hashes are
//     errors (which name the user, never the password).
//
// The token secret is TokenSecret when it is not blank, otherwise the
// development secret derived from the admin credentials (see DevSecret).
func NewUsers(opts Options) (*Users, error) {
	u := &Users{accounts: map[string]account{}, ttl: opts.TokenTTL, now: opts.Now}
	if u.ttl == 0 {
		u.ttl = DefaultTokenTTL
	}
	if u.ttl < time.Second {
		return nil, fmt.Errorf("token TTL %s must be at least 1s", u.ttl)
	}
	u.maxLifetime = cmp.Or(opts.TokenMaxLifetime, u.ttl)
	if u.maxLifetime < u.ttl {
		return nil, fmt.Errorf("token max lifetime %s must not be shorter than the token TTL %s", u.maxLifetime, u.ttl)
	}
	u.leeway = max(0, cmp.Or(opts.TokenLeeway, DefaultTokenLeeway))
	u.sessionMax = cmp.Or(opts.SessionMaxLifetime, DefaultSessionMaxLifetime)
	if u.sessionMax < u.ttl {
		return nil, fmt.Errorf("session max lifetime %s must not be shorter than the token TTL %s", u.sessionMax, u.ttl)
	}
	if u.now == nil {
		u.now = time.Now
	}
	if strings.TrimSpace(opts.TokenSecret) != "" {
		u.secret = []byte(opts.TokenSecret)
	} else {
		u.secret = []byte(opts.AdminUsername + ":" + opts.AdminPassword + ":redis-stream-coordinator-token")
		u.devSecret = true
	}
	if len(opts.Users) == 0 {
		if err := u.addDefaultAdmin(opts); err != nil {
			return nil, err
		}
	}
	for _, cfg := range opts.Users {
		if err := u.addConfigured(cfg, opts); err != nil {
			return nil, err
		}
	}
	u.unknownUser = unknownUserLike(u.accounts)
	return u, nil
}

func (u *Users) addDefaultAdmin(opts Options) error {
	if strings.TrimSpace(opts.AdminUsername) == "" || opts.AdminPassword == "" {
		return errors.New("admin username and password must not be blank when no users are configured")
	}
	cred, err := newCredential(opts.AdminPassword)
	if err != nil {
		return fmt.Errorf("admin user %q: %w", opts.AdminUsername, err)
	}
	u.accounts[opts.AdminUsername] = account{cred: cred, roles: allRoles}
	return nil
}

func (u *Users) addConfigured(cfg User, opts Options) error {
	if strings.TrimSpace(cfg.Username) == "" {
		return nil
	}
	if _, dup := u.accounts[cfg.Username]; dup {
		return fmt.Errorf("user %q is configured twice", cfg.Username)
	}
	roles := make([]Role, 0, len(cfg.Roles))
	for _, name := range cfg.Roles {
		r, ok := parseConfiguredRole(name)
		if !ok {
			return fmt.Errorf("user %q: unknown role %q (want one of READ, WRITE, MEMBER, ADMIN, MONITOR)", cfg.Username, name)
		}
		roles = append(roles, r)
	}
	if len(roles) == 0 && len(cfg.Grants) == 0 {
		return fmt.Errorf("user %q has neither roles nor grants", cfg.Username)
	}
	for i, g := range cfg.Grants {
		if len(g.Operations) == 0 {
			return fmt.Errorf("user %q: grant %d names no operation", cfg.Username, i)
		}
	}
	if cfg.Password == "" {
		u.ignored = append(u.ignored, IgnoredUser{Username: cfg.Username, Reason: "blank password"})
		return nil
	}
	cred, err := newCredential(cfg.Password)
	if err != nil {
		return fmt.Errorf("user %q: %w", cfg.Username, err)
	}
	if cfg.Username == opts.AdminUsername && (cfg.Password == opts.AdminPassword || cred.matches(opts.AdminPassword)) {
		u.ignored = append(u.ignored, IgnoredUser{Username: cfg.Username, Reason: "uses the admin-username/admin-password pair"})
		return nil
	}
	u.accounts[cfg.Username] = account{cred: cred, roles: normalizeRoles(roles), grants: slices.Clone(cfg.Grants),
		disabled: cfg.Disabled, tokenVersion: cfg.TokenVersion}
	return nil
}

// Ignored lists the configured users that were left out (see NewUsers), for
// the caller to log as warnings.
func (u *Users) Ignored() []IgnoredUser { return u.ignored }

// DevSecret reports whether tokens are signed with the secret derived from
// the admin credentials because no token secret is configured. Callers log a
// warning that this is for local development only.
func (u *Users) DevSecret() bool { return u.devSecret }

// Authenticate resolves an Authorization header value:
//
//   - "Bearer <token>" (scheme case-insensitive, blanks trimmed): the token
//     alone decides, there is no fallback to a password check;
//   - "Basic <base64(user:password)>" (scheme case-insensitive, standard
//     Base64, split at the first colon): a configured user check.
//
// Anything else, including an empty header, fails with ErrUnauthenticated.
func (u *Users) Authenticate(authorization string) (Principal, error) {
	scheme, rest, _ := strings.Cut(strings.TrimSpace(authorization), " ")
	rest = strings.TrimSpace(rest)
	switch {
	case scheme == "":
		return Principal{}, fmt.Errorf("%w: no credentials", ErrUnauthenticated)
	case strings.EqualFold(scheme, "Bearer"):
		return u.verifyToken(rest)
	case strings.EqualFold(scheme, "Basic"):
		name, password, ok := parseBasic(rest)
		if !ok {
			return Principal{}, fmt.Errorf("%w: malformed Basic credentials", ErrUnauthenticated)
		}
		return u.checkPassword(name, password)
	}
	return Principal{}, fmt.Errorf("%w: unsupported authorization scheme", ErrUnauthenticated)
}

// BasicUsername returns the user name of Basic credentials in an
// Authorization header value, "" for any other value. It checks nothing.
func BasicUsername(authorization string) string {
	scheme, rest, _ := strings.Cut(strings.TrimSpace(authorization), " ")
	if !strings.EqualFold(scheme, "Basic") {
		return ""
	}
	name, _, _ := parseBasic(strings.TrimSpace(rest))
	return name
}

// parseBasic decodes the credentials of a Basic header (standard Base64,
// split at the first colon).
func parseBasic(credentials string) (name, password string, ok bool) {
	raw, err := base64.StdEncoding.DecodeString(credentials)
	if err != nil {
		return "", "", false
	}
	return strings.Cut(string(raw), ":")
}

// Login checks a username and password and issues a token carrying the
// user's configured roles.
func (u *Users) Login(username, password string) (contract.Login, error) {
	p, err := u.checkPassword(username, password)
	if err != nil {
		return contract.Login{}, err
	}
	return u.Refresh(p), nil
}

// checkPassword verifies a user's password in constant time (relative to the
// stored credential); an unknown or disabled user costs as much as the most
// expensive configured credential, so timing does not tell which users
// exist.
func (u *Users) checkPassword(username, password string) (Principal, error) {
	acc, ok := u.accounts[username]
	if !ok || acc.disabled {
		u.unknownUser.matches(password)
		return Principal{}, fmt.Errorf("%w: invalid username or password", ErrUnauthenticated)
	}
	if !acc.cred.matches(password) {
		return Principal{}, fmt.Errorf("%w: invalid username or password", ErrUnauthenticated)
	}
	if acc.cred.bcryptHash != nil {
		u.verified.Store(username, sha256.Sum256([]byte(password)))
	}
	return acc.principal(username, acc.roles, u.now()), nil
}

// principal is the account's principal holding roles, authenticated by
// password at authTime.
func (acc account) principal(username string, roles []Role, authTime time.Time) Principal {
	return Principal{Username: username, Roles: slices.Clone(roles), Grants: acc.grants, AuthTime: authTime}
}

// credential is a stored password: a bcrypt hash, or the SHA-256 of a plain
// password (hashing first makes the comparison independent of the length).
type credential struct {
	bcryptHash []byte
	plain      [sha256.Size]byte
}

// unknownUserLike returns the credential compared against when a user
// name is unknown: a bcrypt hash of the highest cost among the accounts'
// when any has one (so an unknown name costs what the slowest known one
// does), else a plain-text credential.
func unknownUserLike(accounts map[string]account) credential {
	cost := 0
	for _, acc := range accounts {
		if c, err := bcrypt.Cost(acc.cred.bcryptHash); err == nil && c > cost {
			cost = c
		}
	}
	if cost == 0 {
		return credential{plain: sha256.Sum256([]byte("redis-stream-coordinator:no-such-user"))}
	}
	hash, err := bcrypt.GenerateFromPassword([]byte("redis-stream-coordinator:no-such-user"), cost)
	if err != nil {
		// Only a cost outside bcrypt's range fails, and cost came from a
		// hash bcrypt accepted.
		panic(fmt.Sprintf("security: hashing the unknown-user credential: %v", err))
	}
	return credential{bcryptHash: hash}
}

func newCredential(password string) (credential, error) {
	for _, prefix := range []string{"$2a$", "$2b$", "$2y$"} {
		if strings.HasPrefix(password, prefix) {
			if _, err := bcrypt.Cost([]byte(password)); err != nil {
				return credential{}, errors.New("password looks like a bcrypt hash but is malformed")
			}
			return credential{bcryptHash: []byte(password)}, nil
		}
	}
	return credential{plain: sha256.Sum256([]byte(password))}, nil
}

func (c credential) matches(password string) bool {
	if c.bcryptHash != nil {
		return bcrypt.CompareHashAndPassword(c.bcryptHash, []byte(password)) == nil
	}
	sum := sha256.Sum256([]byte(password))
	return subtle.ConstantTimeCompare(sum[:], c.plain[:]) == 1
}

// BasicAuthorization returns the Authorization header value of Basic
// credentials username:password.
func BasicAuthorization(username, password string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(username+":"+password))
}

// AuthenticateKnown is Authenticate for a caller whose guesses are
// throttled: it accepts only credentials that are cheap to check (a
// Bearer token, a plain-text password, or a bcrypt user's password that
// already passed bcrypt once since start), so that a throttled caller with
// the right credential still gets in while wrong guesses cost no bcrypt
// check. ok is false for anything else, right or wrong.
func (u *Users) AuthenticateKnown(authorization string) (p Principal, ok bool) {
	scheme, rest, _ := strings.Cut(strings.TrimSpace(authorization), " ")
	rest = strings.TrimSpace(rest)
	switch {
	case strings.EqualFold(scheme, "Bearer"):
		p, err := u.verifyToken(rest)
		return p, err == nil
	case strings.EqualFold(scheme, "Basic"):
		name, password, ok := parseBasic(rest)
		acc, known := u.accounts[name]
		if !ok || !known || acc.disabled {
			return Principal{}, false
		}
		sum := sha256.Sum256([]byte(password))
		want := acc.cred.plain
		if acc.cred.bcryptHash != nil {
			v, seen := u.verified.Load(name)
			if !seen {
				return Principal{}, false
			}
			want = v.([sha256.Size]byte)
		}
		if subtle.ConstantTimeCompare(sum[:], want[:]) != 1 {
			return Principal{}, false
		}
		return acc.principal(name, acc.roles, u.now()), true
	}
	return Principal{}, false
}
