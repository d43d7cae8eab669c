package security

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/redis-stream-coordinator/coordinator/contract"
)

// tokenClaims are the JWT claims issued: sub, iat, exp, the sorted role
// names, the user's token version (ver, omitted when 0) and when the user
// last proved its password (auth_time, as OpenID Connect names it).
type tokenClaims struct {
	Roles    []string `json:"roles"`
	Version  int64    `json:"ver,omitempty"`
	AuthTime int64    `json:"auth_time,omitempty"`
	jwt.RegisteredClaims
}

// Refresh issues a new token for an authenticated principal (login with an
// Authorization header instead of a body). The token carries p's roles,
// its user's current token version and p's AuthTime (now when zero); it
// expires TokenTTL from now, but never later than SessionMaxLifetime after
// AuthTime: refreshing a token cannot extend a session for ever.
func (u *Users) Refresh(p Principal) contract.Login {
	now := u.now()
	authTime := p.AuthTime
	if authTime.IsZero() {
		authTime = now
	}
	exp := now.Add(u.ttl)
	if end := authTime.Add(u.sessionMax); end.Before(exp) {
		exp = end
	}
	exp = exp.Truncate(time.Second).UTC()
	roles := p.RoleNames()
	claims := tokenClaims{
		Roles:    roles,
		Version:  u.accounts[p.Username].tokenVersion,
		AuthTime: authTime.Unix(),
		RegisteredClaims: jwt.RegisteredClaims{
			Subject:   p.Username,
			IssuedAt:  jwt.NewNumericDate(now),
			ExpiresAt: jwt.NewNumericDate(exp),
		},
	}
	signed, err := jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(u.secret)
	if err != nil {
		// HS256 with a []byte key and marshalable claims cannot fail.
		panic(fmt.Sprintf("security: signing token: %v", err))
	}
	return contract.Login{
		AccessToken:      signed,
		TokenType:        "Bearer",
		ExpiresAt:        exp,
		ExpiresInSeconds: int64(exp.Sub(now.Truncate(time.Second)) / time.Second),
		Roles:            roles,
	}
}

// errInvalidToken is the reason attached to ErrUnauthenticated for every
// rejected token; the detail stays internal so callers cannot leak it.
var errInvalidToken = fmt.Errorf("%w: invalid or expired token", ErrUnauthenticated)

// verifyToken checks an HS256 token and returns the principal it stands
// for now. It rejects, all with errInvalidToken:
//
//   - any other algorithm (none included) or a signature not made with our
//     secret;
//   - exp or iat missing or not JSON numbers, exp passed or iat in the
//     future (both with Options.TokenLeeway), a lifetime exp − iat longer
//     than Options.TokenMaxLifetime, an nbf in the future;
//   - a blank subject, a subject that is no configured user (any more), a
//     disabled user, or a ver claim (absent = 0) other than the user's
//     configured token version: raising it revokes every earlier token;
//   - a session older than Options.SessionMaxLifetime: auth_time (iat
//     when absent) that long ago;
//   - no permission left: the principal's roles are those the token
//     carries (known by exact name) that the user still has; its grants
//     are the user's configured ones.
func (u *Users) verifyToken(raw string) (Principal, error) {
	if raw == "" {
		return Principal{}, errInvalidToken
	}
	// MapClaims keep exp and iat as decoded: a string there is an invalid
	// type, not a date.
	claims := jwt.MapClaims{}
	_, err := jwt.ParseWithClaims(raw, claims,
		func(*jwt.Token) (any, error) { return u.secret, nil },
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithLeeway(u.leeway),
		jwt.WithTimeFunc(u.now),
	)
	if err != nil {
		return Principal{}, errInvalidToken
	}
	iat, _ := claims.GetIssuedAt()
	exp, _ := claims.GetExpirationTime()
	if iat == nil || exp.Sub(iat.Time) > u.maxLifetime {
		return Principal{}, errInvalidToken
	}
	sub, _ := claims.GetSubject()
	acc, ok := u.accounts[sub]
	if strings.TrimSpace(sub) == "" || !ok || acc.disabled || claimVersion(claims) != acc.tokenVersion {
		return Principal{}, errInvalidToken
	}
	names, _ := claims["roles"].([]any)
	roles := make([]Role, 0, len(names))
	for _, name := range names {
		s, _ := name.(string)
		if r, ok := ParseRole(s); ok && slices.Contains(acc.roles, r) {
			roles = append(roles, r)
		}
	}
	if len(roles) == 0 && len(acc.grants) == 0 {
		return Principal{}, errInvalidToken
	}
	authTime := iat.Time // a token without auth_time started its session when issued
	if at, ok := claims["auth_time"].(float64); ok && at > 0 && at == float64(int64(at)) && at < float64(iat.Unix()) {
		authTime = time.Unix(int64(at), 0)
	}
	if u.now().After(authTime.Add(u.sessionMax).Add(u.leeway)) {
		return Principal{}, errInvalidToken
	}
	return acc.principal(sub, normalizeRoles(roles), authTime), nil
}

// claimVersion is the ver claim: 0 when absent, -1 (matching no user) when
// it is not a whole number.
func claimVersion(claims jwt.MapClaims) int64 {
	v, present := claims["ver"]
	if !present {
		return 0
	}
	f, ok := v.(float64)
	if !ok || f != float64(int64(f)) {
		return -1
	}
	return int64(f)
}
