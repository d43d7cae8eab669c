package httpapi

import (
	"net/http"
	"strings"

	"github.com/julienschmidt/httprouter"

	"github.com/redis-stream-coordinator/coordinator/security"
)

// loginRequest is the optional body of POST /auth/login (§2.1).
type loginRequest struct {
	Username string `json:"username"`
	Password string `json:"password"`
}

// login serves #1: with a non-blank body username it checks the body's
// password, otherwise it authenticates the Authorization header (Basic, or
// Bearer to refresh a token). It answers 200 with the token, 401 (with the
// Basic challenge) when the credentials fail, 400 for a malformed body.
// A missing, blank or null body is allowed.
func (a *API) login(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	var req loginRequest
	err := a.readBody(w, r, func(body []byte) error {
		if absent(body) {
			return nil
		}
		return unmarshalBody(body, &req)
	})
	if err != nil {
		a.fail(w, r, err)
		return
	}
	users := a.guard.Users
	var tok security.Token
	if strings.TrimSpace(req.Username) != "" {
		tok, err = users.Login(req.Username, req.Password)
	} else {
		var p security.Principal
		if p, err = users.Authenticate(r.Header.Get("Authorization")); err == nil {
			tok = users.Refresh(p)
		}
	}
	if err != nil {
		unauthorized(w)
		return
	}
	writeJSON(w, http.StatusOK, tok)
}

// sessionResponse is the body of #12 (§2.6).
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
