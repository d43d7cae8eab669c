package security

import (
	"fmt"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Token is an issued Bearer token, shaped as the login response of §2.1.
type Token struct {
	AccessToken string `json:"accessToken"`
	// TokenType is always "Bearer".
	TokenType string `json:"tokenType"`
	// ExpiresAt is the token's exp claim (whole seconds, UTC).
	ExpiresAt        time.Time `json:"expiresAt"`
	ExpiresInSeconds int64     `json:"expiresInSeconds"`
	// Roles are the role names carried by the token, sorted.
	Roles []string `json:"roles"`
}

// tokenClaims are the JWT claims: sub, iat, exp and the sorted role names.
type tokenClaims struct {
	Roles []string `json:"roles"`
	jwt.RegisteredClaims
}

// Refresh issues a new token for an authenticated principal (login with an
// Authorization header instead of a body). The token carries p's roles and
// expires TokenTTL from now.
func (u *Users) Refresh(p Principal) Token {
	now := u.now()
	exp := now.Add(u.ttl).Truncate(time.Second).UTC()
	roles := p.RoleNames()
	claims := tokenClaims{
		Roles: roles,
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
	return Token{
		AccessToken:      signed,
		TokenType:        "Bearer",
		ExpiresAt:        exp,
		ExpiresInSeconds: int64(u.ttl / time.Second),
		Roles:            roles,
	}
}

// errInvalidToken is the reason attached to ErrUnauthenticated for every
// rejected token; the detail stays internal so callers cannot leak it.
var errInvalidToken = fmt.Errorf("%w: invalid or expired token", ErrUnauthenticated)

// verifyToken checks an HS256 token: signature with our secret (any other
// algorithm, including none, is rejected), a present exp later than now, a
// non-blank subject, and at least one role known by exact name (unknown role
// names are dropped).
func (u *Users) verifyToken(raw string) (Principal, error) {
	if raw == "" {
		return Principal{}, errInvalidToken
	}
	var claims tokenClaims
	_, err := jwt.ParseWithClaims(raw, &claims,
		func(*jwt.Token) (any, error) { return u.secret, nil },
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
		jwt.WithExpirationRequired(),
		jwt.WithTimeFunc(u.now),
	)
	if err != nil {
		return Principal{}, errInvalidToken
	}
	if strings.TrimSpace(claims.Subject) == "" {
		return Principal{}, errInvalidToken
	}
	roles := make([]Role, 0, len(claims.Roles))
	for _, name := range claims.Roles {
		if r, ok := ParseRole(name); ok {
			roles = append(roles, r)
		}
	}
	if len(roles) == 0 {
		return Principal{}, errInvalidToken
	}
	return Principal{Username: claims.Subject, Roles: normalizeRoles(roles)}, nil
}
