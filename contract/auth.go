package contract

import "time"

// LoginRequest is the optional body of POST /auth/login (docs/protocol.md
// §2.1): a non-blank Username is checked with Password; without it the
// Authorization header is (Basic, or Bearer to refresh a token).
type LoginRequest struct {
	Username string `json:"username"`
	Password string `json:"password"`
}

// Login is the answer of POST /auth/login (docs/protocol.md §2.1): an
// issued Bearer token.
type Login struct {
	AccessToken string `json:"accessToken"`
	// TokenType is always "Bearer".
	TokenType string `json:"tokenType"`
	// ExpiresAt is the token's exp claim (whole seconds, UTC).
	ExpiresAt        time.Time `json:"expiresAt"`
	ExpiresInSeconds int64     `json:"expiresInSeconds"`
	// Roles are the role names carried by the token, sorted.
	Roles []string `json:"roles"`
}

// Session is the answer of GET /monitoring/session (docs/protocol.md
// §2.6 #12): who the caller is and what it holds.
type Session struct {
	Authenticated bool   `json:"authenticated"`
	Username      string `json:"username"`
	// Roles are the caller's global roles, sorted.
	Roles []string `json:"roles"`
	// Grants are the caller's scoped grants (docs/security.md), omitted
	// when it has none.
	Grants []GrantView `json:"grants,omitempty"`
}

// GrantView is one grant as GET /monitoring/session shows it, in the
// configuration's terms.
type GrantView struct {
	Stream         string      `json:"stream"`
	StreamPattern  string      `json:"streamPattern"`
	Group          string      `json:"group"`
	GroupPattern   string      `json:"groupPattern"`
	Operations     []Operation `json:"operations"`
	MemberIDPrefix string      `json:"memberIdPrefix,omitempty"`
}
