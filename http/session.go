package httpapi

import (
	"net/http"
	"strings"

	"github.com/julienschmidt/httprouter"

	"github.com/redis-stream-coordinator/coordinator/audit"
	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/security"
)

// login serves #1: with a non-blank body username it checks the body's
// password, otherwise it authenticates the Authorization header (Basic, or
// Bearer to refresh a token, which needs its user to be live). It answers
// 200 with the token, 401 (with the Basic challenge) when the credentials
// fail, 429 while the user name or the client address is throttled (see
// Security), 400 for a malformed body. A missing, blank or null body is
// allowed. The audit event (action LOGIN) names the user tried and never
// fingerprints the body, which holds a password.
func (a *API) login(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	ev := audit.FromContext(r.Context())
	var req contract.LoginRequest
	err := a.readBody(w, r.WithContext(audit.WithEvent(r.Context(), nil)), func(body []byte) error {
		if absent(body) {
			return nil
		}
		return unmarshalBody(body, &req)
	})
	if err != nil {
		a.fail(w, r, err)
		return
	}
	g, users := a.guard, a.guard.Users
	header := r.Header.Get("Authorization")
	username := security.BasicUsername(header)
	if strings.TrimSpace(req.Username) != "" {
		username = req.Username
	}
	if ev != nil && username != "" {
		ev.RequestSummary["username"] = username
	}
	throttle := g.throttle(r, username)
	if throttle.refused(w) {
		return
	}
	var tok contract.Login
	if strings.TrimSpace(req.Username) != "" {
		tok, err = users.Login(req.Username, req.Password)
	} else {
		var p security.Principal
		if p, err = users.Authenticate(header); err == nil {
			tok, username = users.Refresh(p), p.Username
		}
	}
	if err != nil {
		throttle.failed()
		unauthorized(w)
		return
	}
	if ev != nil {
		ev.SetPrincipal(username, tok.Roles)
	}
	writeJSON(w, http.StatusOK, tok)
}

// sessionResponse is the body of #12 (docs/protocol.md §2.6).
type sessionResponse struct {
	Authenticated bool     `json:"authenticated"`
	Username      string   `json:"username"`
	Roles         []string `json:"roles"`
}

// session serves #12: the authenticated caller (the route needs READ, so
// there always is one) and its roles, sorted.
func (a *API) session(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	p := principal(r.Context())
	writeJSON(w, http.StatusOK, sessionResponse{Authenticated: true, Username: p.Username, Roles: p.RoleNames()})
}
