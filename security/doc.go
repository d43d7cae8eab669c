// Package security authenticates and authorises Admin API callers
// (docs/protocol.md §1 and the seed's "ACL" section).
//
// It has three parts, none of which touches net/http:
//
//   - Roles and grants: Role, Principal and Principal.Has implement the grant
//     table (ADMIN → everything; WRITE → WRITE+READ; READ → READ;
//     MONITOR → READ; MEMBER → MEMBER).
//   - Users: the configured principals, password checks (constant time,
//     bcrypt hashes recognised by their $2a$/$2b$/$2y$ prefix), and signed
//     HS256 JWT Bearer tokens (claims sub, iat, exp, roles). Users.Authenticate
//     turns an Authorization header value into a Principal.
//   - Policy: the route → required-role table of docs/protocol.md §1 ("first match").
//
// The HTTP layer answers 401 (with WWW-Authenticate: Basic
// realm="redis-stream-coordinator") when Authenticate fails and 403 when the
// principal lacks the required role. Passwords and tokens are never logged
// and never appear in errors returned by this package.
package security
