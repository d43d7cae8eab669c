package httpapi

import (
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/julienschmidt/httprouter"

	"github.com/redis-stream-coordinator/coordinator/contract"
)

// sameOrigin is the middleware that keeps browsers from being used against
// the API across sites (cross-site request forgery), installed on the
// routes that change state (Route.Mutation) when access control is on:
//
//   - a request whose Sec-Fetch-Site says a browser sent it from another
//     site (cross-site, same-site), or whose Origin is not the request's
//     own host (a "null" origin included), is answered 403 FORBIDDEN;
//   - a request that declares a Content-Type must declare
//     application/json (or another +json type), else 415
//     UNSUPPORTED_MEDIA_TYPE: an HTML form always declares text/plain,
//     multipart/form-data or application/x-www-form-urlencoded, and a
//     script on another site cannot send JSON without a CORS preflight,
//     which this API never grants. A request that declares none is taken
//     as JSON, as the clients written before this check send it; a browser
//     sends one only with an Origin header, which the first check reads.
//
// Both checks run after authentication (so a caller without a credential
// gets 401 first) and before the body is read.
// Clients that are not browsers send neither header and are unaffected
// except for the Content-Type they must declare.
func sameOrigin(rt Route, h httprouter.Handle) httprouter.Handle {
	if !rt.Mutation {
		return h
	}
	return func(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
		if site := r.Header.Get("Sec-Fetch-Site"); site == "cross-site" || site == "same-site" {
			writeError(w, http.StatusForbidden, codeForbidden, "Cross-site requests are refused")
			return
		}
		if origin := r.Header.Get("Origin"); origin != "" && !sameHost(origin, r.Host) {
			writeError(w, http.StatusForbidden, codeForbidden, "Cross-origin requests are refused")
			return
		}
		if ct := r.Header.Get("Content-Type"); ct != "" && !jsonMediaType(ct) {
			writeError(w, http.StatusUnsupportedMediaType, string(contract.CodeUnsupportedMediaType),
				"Content-Type must be application/json")
			return
		}
		h(w, r, ps)
	}
}

// sameHost reports whether origin (scheme://host[:port]) names host, the
// request's Host header.
func sameHost(origin, host string) bool {
	u, err := url.Parse(origin)
	return err == nil && u.Host != "" && strings.EqualFold(u.Host, host)
}

// jsonMediaType reports whether ct is application/json or a +json type,
// parameters (charset) allowed.
func jsonMediaType(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && (mt == "application/json" || (strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json")))
}
