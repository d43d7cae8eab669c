package httpapi

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
)

// hostileNames are path parameter values that look like the words and
// separators of other routes (issue 21, defect 1). The i-th parameter of a
// route gets hostileNames[(j+i*step) % n] for every j and step 0 and 1, so
// every name fills every parameter and neighbours pair up (streamPrefix
// "members", consumerGroup "heartbeat"); the encoded ones are sent as they
// are (the router sees the decoded path).
var hostileNames = []string{
	"members", "heartbeat", "auth", "login", "monitoring", "..", ".", "%2F", "a%2Fmembers%2Fm%2Fheartbeat", "%2e%2e",
}

// matrixMethods are the methods sent to every route besides its own: the
// unrouted rule only tells reads from mutations.
var matrixMethods = []string{"GET", "POST", "PATCH", "DELETE"}

// hostilePaths fills template's parameters with hostileNames (see there).
func hostilePaths(template string) []string {
	var paths []string
	for step := range 2 {
		for j := range hostileNames {
			i := 0
			paths = append(paths, templateParam.ReplaceAllStringFunc(template, func(string) string {
				name := hostileNames[(j+i*step)%len(hostileNames)]
				i++
				return name
			}))
		}
	}
	return paths
}

// TestAccessByRouteNotPath sends every route the router serves, with every
// method, every hostile name in every parameter and every credential kind,
// with and without authenticate-member-api, to a coordinator for which no
// group exists. The expected decision follows from the route the request
// matched alone (requiredOp; unrouted requests under the base path need
// any valid credential), and a refused request never reaches the
// coordinator, so it cannot tell whether a group exists.
func TestAccessByRouteNotPath(t *testing.T) {
	notFound := group.Errorf(contract.CodeGroupNotFound, "Consumer group not found")
	tried := 0
	for _, memberAuth := range []bool{false, true} {
		e := newSecureEnv(t, &fakeCoord{Err: notFound}, func(_ *secureEnv, s *Security) { s.AuthenticateMemberAPI = memberAuth })
		routes := map[string]Route{}
		for _, rt := range e.routes {
			routes[rt.Method+" "+rt.Template] = rt
		}
		var creds []credential // every kind but Basic, whose bcrypt check is slow
		for _, c := range e.credentials(t) {
			if !strings.HasSuffix(c.name, " Basic") {
				creds = append(creds, c)
			}
		}
		for _, rt := range e.routes {
			for _, path := range hostilePaths(rt.Template) {
				decoded, err := url.PathUnescape(path)
				if err != nil {
					t.Fatal(err)
				}
				methods := matrixMethods
				if !slices.Contains(methods, rt.Method) {
					methods = append(slices.Clip(methods), rt.Method)
				}
				for _, method := range methods {
					for _, c := range creds {
						tried++
						calls := e.coord.Calls
						rec := e.send(method, path, c.header, `{"requestedBy":"matrix"}`, "Content-Type", "application/json")
						matched, routed := routes[rec.Header().Get(matchedRouteHeader)]
						if routed && method == rt.Method && !strings.Contains(decoded, "/../") && decoded == path && matched != rt {
							t.Errorf("%s %s matched %s %s", method, path, matched.Method, matched.Template)
						}
						required, check := contract.OpOpen, false
						if routed {
							required, check = requiredOp(matched, memberAuth)
						} else if strings.HasPrefix(decoded, contract.BasePath+"/") {
							check = true // any valid credential, then 404/405
						}
						want := decision(required, check, c)
						if got := outcome(rec.Code); got != outcome(want) {
							t.Errorf("memberAuth=%v %s %s (%s, route %q): %d %s, want %d", memberAuth, method, path, c.name,
								rec.Header().Get(matchedRouteHeader), rec.Code, rec.Body, want)
						}
						if want != http.StatusOK && e.coord.Calls != calls {
							t.Errorf("memberAuth=%v %s %s (%s): refused, but the coordinator was asked", memberAuth, method, path, c.name)
						}
					}
				}
			}
		}
	}
	t.Logf("%d requests", tried)
}

// outcome folds a status into 401, 403 or "anything else".
func outcome(code int) string {
	switch code {
	case http.StatusUnauthorized, http.StatusForbidden:
		return fmt.Sprint(code)
	}
	return "passed"
}
