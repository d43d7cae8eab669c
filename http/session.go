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
// Bearer to refresh a token, which needs its user to be live; a refreshed
// token keeps the session's start, security.Principal.AuthTime). It
// answers 200 with the token, 401 when the credentials fail, 429 while
// guesses from the user name and client address are throttled and the
// credential is not one known to be right (see throttle.go), 400 for a
// malformed body. A missing, blank or null body is allowed. The audit
// event (action LOGIN) names the user only once authenticated, and never
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
	g := a.guard
	header := r.Header.Get("Authorization")
	if strings.TrimSpace(req.Username) != "" {
		header = security.BasicAuthorization(req.Username, req.Password)
	}
	p, ok := g.authenticate(w, r, header, func() (security.Principal, error) { return g.Users.Authenticate(header) })
	if !ok {
		return
	}
	tok := g.Users.Refresh(p)
	if ev != nil {
		ev.SetPrincipal(p.Username, tok.Roles)
	}
	writeJSON(w, http.StatusOK, tok)
}

// session serves #12: the authenticated caller (the route needs
// contract.OpAuthenticated, so there always is one), its roles, sorted,
// and its grants.
func (a *API) session(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	p := principal(r.Context())
	writeJSON(w, http.StatusOK, contract.Session{Authenticated: true, Username: p.Username, Roles: p.RoleNames(), Grants: p.GrantViews()})
}
