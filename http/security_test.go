package httpapi

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/julienschmidt/httprouter"
	"golang.org/x/crypto/bcrypt"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/fakeclock"
	"github.com/redis-stream-coordinator/coordinator/security"
)

// Access control tests (docs/protocol.md §1, §2.1, §2.6 #12) over the real router
// with a fake coordinator: handlers succeed or fail deterministically, and
// only the auth decision is asserted.

// t0 is the tests' wall clock: tokens are issued and verified at t0.
var t0 = time.Date(2026, 5, 21, 12, 0, 0, 0, time.UTC)

const tokenSecret = "test-token-secret-3c1d9a"

// testUser is a configured user with its plain password.
type testUser struct {
	name, password string
	role           security.Role
}

// testUsers have one role each. writer's password is configured as a
// bcrypt hash.
var testUsers = []testUser{
	{"reader", "reader-pw-1c9e77", security.RoleRead},
	{"writer", "writer-pw-5b2d31", security.RoleWrite},
	{"member", "member-pw-88aa04", security.RoleMember},
	{"root", "root-pw-4e1f62", security.RoleAdmin},
	{"monitor", "monitor-pw-0d7c5b", security.RoleMonitor},
}

func userNamed(name string) testUser {
	for _, u := range testUsers {
		if u.name == name {
			return u
		}
	}
	panic("no test user " + name)
}

// roleOps is docs/security.md's upgrade table (each global role's
// operations on every resource), written out independently of security.
var roleOps = map[security.Role][]contract.Operation{
	security.RoleAdmin:   {contract.OpHeartbeat, contract.OpDescribe, contract.OpReadMessages, contract.OpAlter, contract.OpCreate, contract.OpDelete},
	security.RoleWrite:   {contract.OpDescribe, contract.OpReadMessages, contract.OpAlter, contract.OpCreate, contract.OpDelete},
	security.RoleRead:    {contract.OpDescribe, contract.OpReadMessages},
	security.RoleMonitor: {contract.OpDescribe, contract.OpReadMessages},
	security.RoleMember:  {contract.OpHeartbeat},
}

var bcryptOnce = sync.OnceValues(func() ([]byte, error) {
	return bcrypt.GenerateFromPassword([]byte(userNamed("writer").password), bcrypt.MinCost)
})

// newUsers builds the users of testUsers, issuing and verifying tokens at
// now with secret.
func newUsers(t *testing.T, secret string, now time.Time) *security.Users {
	t.Helper()
	hash, err := bcryptOnce()
	if err != nil {
		t.Fatal(err)
	}
	var cfg []security.User
	for _, u := range testUsers {
		pw := u.password
		if u.name == "writer" {
			pw = string(hash)
		}
		cfg = append(cfg, security.User{Username: u.name, Password: pw, Roles: []string{string(u.role)}})
	}
	users, err := security.NewUsers(security.Options{
		AdminUsername: "admin", AdminPassword: "admin-pw-unused", Users: cfg,
		TokenSecret: secret, Now: func() time.Time { return now },
	})
	if err != nil {
		t.Fatal(err)
	}
	return users
}

// matchedRouteHeader names the route a test request matched (see newSecureEnv).
const matchedRouteHeader = "X-Test-Route"

// secureEnv is an API with Security over a fake coordinator.
type secureEnv struct {
	api    *API
	coord  *fakeCoord
	users  *security.Users
	clock  *fakeclock.Clock // a test may make every reading step forward (SetStep)
	logs   *bytes.Buffer    // the API's JSON log (and the log audit sink, when used)
	routes []Route          // every route the router serves, as its middlewares saw them
}

// newSecureEnv builds the API; mod adjusts the Security (Users and Now are
// preset) and may use the environment's logger and clock.
func newSecureEnv(t *testing.T, coord Runtime, mod func(*secureEnv, *Security)) *secureEnv {
	t.Helper()
	e := &secureEnv{users: newUsers(t, tokenSecret, t0), clock: fakeclock.New(t0), logs: &bytes.Buffer{}}
	if f, ok := coord.(*fakeCoord); ok {
		e.coord = f
	}
	sec := &Security{Users: e.users, Now: e.clock.Now}
	if mod != nil {
		mod(e, sec)
	}
	// record notes every route and names the matched one in the answer's
	// matchedRouteHeader (it runs before authentication).
	record := func(rt Route, h httprouter.Handle) httprouter.Handle {
		e.routes = append(e.routes, rt)
		return func(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
			w.Header().Set(matchedRouteHeader, rt.Method+" "+rt.Template)
			h(w, r, ps)
		}
	}
	e.api = newTestAPI(coord, func(o *Options) {
		o.CoordinatorID, o.Logger, o.Middleware, o.Security = "coord-test-1", e.logger(), []Middleware{record}, sec
	})
	return e
}

func (e *secureEnv) logger() *slog.Logger { return slog.New(slog.NewJSONHandler(e.logs, nil)) }

// send serves one request; auth is the Authorization header ("" for none)
// and headers are further name, value pairs.
func (e *secureEnv) send(method, path, auth, body string, headers ...string) *httptest.ResponseRecorder {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, path, rd)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return e.serve(req)
}

// request builds a body-less request for serve.
func (e *secureEnv) request(method, path, auth string) *http.Request {
	req := httptest.NewRequest(method, path, nil)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	return req
}

func (e *secureEnv) serve(req *http.Request) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	e.api.ServeHTTP(rec, req)
	return rec
}

func basic(name, password string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(name+":"+password))
}

// bearer logs u in through users and returns its Authorization header.
func bearer(t *testing.T, users *security.Users, u testUser) string {
	t.Helper()
	tok, err := users.Login(u.name, u.password)
	if err != nil {
		t.Fatal(err)
	}
	return "Bearer " + tok.AccessToken
}

// basicOf and bearerOf are the Basic and Bearer headers of a test user.
func basicOf(name string) string { return basic(name, userNamed(name).password) }

func (e *secureEnv) bearerOf(t *testing.T, name string) string {
	return bearer(t, e.users, userNamed(name))
}

// credential is one way of calling; role is "" for invalid credentials.
type credential struct {
	name   string
	header string
	role   security.Role
}

// credentials are every credential kind of the access matrix.
func (e *secureEnv) credentials(t *testing.T) []credential {
	t.Helper()
	reader := userNamed("reader")
	// tampered: reader's token with its roles claim raised to ADMIN,
	// signature unchanged.
	parts := strings.Split(strings.TrimPrefix(bearer(t, e.users, reader), "Bearer "), ".")
	var claims map[string]any
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err == nil {
		err = json.Unmarshal(payload, &claims)
	}
	if err != nil {
		t.Fatal(err)
	}
	claims["roles"] = []string{"ADMIN"}
	payload, _ = json.Marshal(claims)
	parts[1] = base64.RawURLEncoding.EncodeToString(payload)

	creds := []credential{
		{"none", "", ""},
		{"bad password", basic("root", "not-the-password"), ""},
		{"tampered token", "Bearer " + strings.Join(parts, "."), ""},
		{"expired token", bearer(t, newUsers(t, tokenSecret, t0.Add(-8*24*time.Hour)), userNamed("root")), ""},
		{"other secret", bearer(t, newUsers(t, "another-secret", t0), userNamed("root")), ""},
	}
	for _, u := range testUsers {
		creds = append(creds,
			credential{string(u.role) + " Basic", basic(u.name, u.password), u.role},
			credential{string(u.role) + " Bearer", bearer(t, e.users, u), u.role})
	}
	return creds
}

// samples are the path parameter values used for every route; parameters
// not listed get "1" (only the auth decision is asserted, so any value
// will do).
var samples = map[string]string{"streamPrefix": "orders", "consumerGroup": "workers", "memberId": "m1"}

var templateParam = regexp.MustCompile(`\{([^}]+)\}`)

func samplePath(template string) string {
	return templateParam.ReplaceAllStringFunc(template, func(p string) string {
		if v, ok := samples[strings.Trim(p, "{}")]; ok {
			return v
		}
		return "1"
	})
}

// requiredOp is contract.Routes' operation column in rule form, written
// independently of it: login and the session need any valid credential
// (login refreshes it when the body names no user), the OpenAPI document
// none, heartbeats HEARTBEAT only with authenticate-member-api, message
// and dead-letter reads READ_MESSAGES, other GETs DESCRIBE, creates
// CREATE, deletes DELETE and every other mutation ALTER. check is false
// when credentials are not looked at.
func requiredOp(rt Route, memberAuth bool) (op contract.Operation, check bool) {
	base := contract.BasePath
	switch {
	case rt.Template == base+"/auth/login", rt.Template == base+"/monitoring/session":
		return "", true
	case rt.Template == base+contract.OpenAPITemplate:
		return "", false
	case strings.HasSuffix(rt.Template, "/heartbeat"):
		return contract.OpHeartbeat, memberAuth
	case strings.HasSuffix(rt.Template, "/messages"), strings.HasSuffix(rt.Template, "/dead-letters"):
		return contract.OpReadMessages, true
	case rt.Method == http.MethodGet:
		return contract.OpDescribe, true
	case rt.Method == http.MethodDelete:
		return contract.OpDelete, true
	case rt.Template == base+"/streams/{streamPrefix}", rt.Template == base+"/streams/{streamPrefix}/groups/{consumerGroup}":
		return contract.OpCreate, true
	}
	return contract.OpAlter, true
}

// decision is the outcome a credential must get on a route needing op.
func decision(op contract.Operation, check bool, c credential) int {
	switch {
	case !check:
		return http.StatusOK
	case c.role == "":
		return http.StatusUnauthorized
	case op != "" && !slices.Contains(roleOps[c.role], op):
		return http.StatusForbidden
	}
	return http.StatusOK
}

// checkDecision asserts the auth decision of a response: exactly 401 (with
// the JSON body and no Basic challenge, api.basic-challenge being off),
// exactly 403, or neither when want is 200.
func checkDecision(t *testing.T, rec *httptest.ResponseRecorder, want int) {
	t.Helper()
	switch want {
	case http.StatusUnauthorized:
		wantJSON(t, rec, http.StatusUnauthorized, `{"status":"UNAUTHORIZED","errorCode":"UNAUTHORIZED",
			"message":"Authentication required: valid Basic credentials or Bearer token"}`)
		if got := rec.Header().Get("WWW-Authenticate"); got != "" {
			t.Errorf("WWW-Authenticate = %q, want none", got)
		}
	case http.StatusForbidden:
		if rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), `"errorCode":"FORBIDDEN"`) {
			t.Fatalf("got %d %s, want 403 FORBIDDEN", rec.Code, rec.Body)
		}
	default:
		if rec.Code == http.StatusUnauthorized || rec.Code == http.StatusForbidden {
			t.Fatalf("got %d %s, want neither 401 nor 403", rec.Code, rec.Body)
		}
	}
}

// TestAccessMatrix sends every route the router serves with every kind of
// credentials, with and without authenticate-member-api.
func TestAccessMatrix(t *testing.T) {
	for _, memberAuth := range []bool{false, true} {
		mode := "open member API"
		if memberAuth {
			mode = "authenticate-member-api"
		}
		e := newSecureEnv(t, &fakeCoord{View: sampleView()}, func(_ *secureEnv, s *Security) { s.AuthenticateMemberAPI = memberAuth })
		if len(e.routes) < 15 {
			t.Fatalf("only %d routes recorded", len(e.routes))
		}
		creds := e.credentials(t)
		for _, rt := range e.routes {
			path := samplePath(rt.Template)
			required, check := requiredOp(rt, memberAuth)
			for _, c := range creds {
				t.Run(strings.Join([]string{mode, rt.Method, rt.Template, c.name}, " "), func(t *testing.T) {
					rec := e.send(rt.Method, path, c.header, `{"requestedBy":"matrix"}`, "Content-Type", "application/json")
					checkDecision(t, rec, decision(required, check, c))
				})
			}
		}
	}
}

// TestUnroutedRequestsAreCheckedFirst: under the base path the policy runs
// before routing (401 before 404/405; any valid credential then gets the
// 404/405, whatever names the path holds); outside it nothing is checked.
func TestUnroutedRequestsAreCheckedFirst(t *testing.T) {
	e := newSecureEnv(t, &fakeCoord{}, nil)
	grp := contract.BasePath + "/streams/orders/groups/workers"
	tests := []struct {
		method, path, auth string
		want               int
	}{
		{"GET", contract.BasePath + "/nope", "", http.StatusUnauthorized},
		{"GET", contract.BasePath + "/nope", basic("member", "wrong"), http.StatusUnauthorized},
		{"GET", contract.BasePath + "/nope", basicOf("member"), http.StatusNotFound},
		{"GET", contract.BasePath + "/nope", basicOf("reader"), http.StatusNotFound},
		{"PATCH", grp + "/consumer-concurrency", "", http.StatusUnauthorized},
		{"PATCH", grp + "/consumer-concurrency", basicOf("reader"), http.StatusNotFound},
		{"PATCH", grp + "/consumer-concurrency", basicOf("writer"), http.StatusNotFound},
		{"PUT", grp, basicOf("member"), http.StatusMethodNotAllowed},
		{"PUT", grp, basicOf("writer"), http.StatusMethodNotAllowed},
		{"OPTIONS", grp, "", http.StatusUnauthorized},
		{"OPTIONS", grp, basicOf("reader"), http.StatusMethodNotAllowed},
		{"GET", contract.BasePath + "/monitoring/nope", basicOf("writer"), http.StatusNotFound},
		{"GET", "/coord/v10/monitoring/groups", "", http.StatusNotFound},
		{"GET", "/healthz", "", http.StatusOK},
		{"GET", "/actuator/health", "", http.StatusOK},
		{"GET", "/actuator/info", "", http.StatusOK},
	}
	for _, tc := range tests {
		rec := e.send(tc.method, tc.path, tc.auth, "")
		if rec.Code != tc.want {
			t.Errorf("%s %s (%q): %d %s, want %d", tc.method, tc.path, tc.auth, rec.Code, rec.Body, tc.want)
		}
		if tc.want == http.StatusUnauthorized {
			checkDecision(t, rec, http.StatusUnauthorized)
		}
	}
}

func TestForbiddenBody(t *testing.T) {
	e := newSecureEnv(t, &fakeCoord{}, nil)
	rec := e.send("POST", contract.BasePath+"/streams/orders", basicOf("reader"), `{"requestedBy":"x"}`)
	wantJSON(t, rec, http.StatusForbidden, `{"status":"FORBIDDEN","errorCode":"FORBIDDEN","message":"Operation CREATE on every group of stream prefix orders is not granted"}`)
	if e.coord.Calls != 0 {
		t.Errorf("the coordinator was called %d times", e.coord.Calls)
	}
}

// tokenBody is the login response of docs/protocol.md §2.1.
type tokenBody struct {
	AccessToken      string   `json:"accessToken"`
	TokenType        string   `json:"tokenType"`
	ExpiresAt        string   `json:"expiresAt"`
	ExpiresInSeconds int64    `json:"expiresInSeconds"`
	Roles            []string `json:"roles"`
}

func TestLogin(t *testing.T) {
	e := newSecureEnv(t, &fakeCoord{}, nil)
	login := contract.BasePath + "/auth/login"
	reader := userNamed("reader")
	wantToken := func(t *testing.T, rec *httptest.ResponseRecorder, roles string) string {
		t.Helper()
		var tok tokenBody
		if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &tok) != nil {
			t.Fatalf("login: %d %s", rec.Code, rec.Body)
		}
		if tok.TokenType != "Bearer" || tok.ExpiresAt != "2026-05-28T12:00:00Z" || tok.ExpiresInSeconds != 604800 ||
			strings.Join(tok.Roles, ",") != roles || tok.AccessToken == "" {
			t.Errorf("token = %+v", tok)
		}
		return "Bearer " + tok.AccessToken
	}
	t.Run("password in body", func(t *testing.T) {
		rec := e.send("POST", login, "", `{"username":"reader","password":"`+reader.password+`"}`)
		tok := wantToken(t, rec, "READ")
		if rec := e.send("GET", contract.BasePath+"/monitoring/groups", tok, ""); rec.Code != http.StatusOK {
			t.Errorf("read with the token: %d %s", rec.Code, rec.Body)
		}
	})
	t.Run("body user wins over header", func(t *testing.T) {
		wantToken(t, e.send("POST", login, basicOf("root"), `{"username":"reader","password":"`+reader.password+`"}`), "READ")
	})
	t.Run("bcrypt password", func(t *testing.T) {
		wantToken(t, e.send("POST", login, "", `{"username":"writer","password":"`+userNamed("writer").password+`"}`), "WRITE")
	})
	t.Run("basic header without body", func(t *testing.T) {
		wantToken(t, e.send("POST", login, basicOf("member"), ""), "MEMBER")
	})
	t.Run("bearer refresh with blank username", func(t *testing.T) {
		wantToken(t, e.send("POST", login, e.bearerOf(t, "root"), `{"username":"  "}`), "ADMIN")
	})
	t.Run("null body", func(t *testing.T) {
		wantToken(t, e.send("POST", login, basicOf("monitor"), "null"), "MONITOR")
	})
	for name, tc := range map[string]struct{ auth, body string }{
		"wrong password":         {"", `{"username":"reader","password":"nope"}`},
		"unknown user":           {"", `{"username":"nobody","password":"x"}`},
		"body user, no password": {basicOf("root"), `{"username":"reader"}`},
		"nothing":                {"", ""},
		"bad header":             {basic("reader", "nope"), `{}`},
	} {
		t.Run(name, func(t *testing.T) { checkDecision(t, e.send("POST", login, tc.auth, tc.body), http.StatusUnauthorized) })
	}
	t.Run("malformed body", func(t *testing.T) {
		if rec := e.send("POST", login, basicOf("root"), `{"username":`); rec.Code != http.StatusBadRequest {
			t.Errorf("got %d %s", rec.Code, rec.Body)
		}
	})
}

func TestSession(t *testing.T) {
	e := newSecureEnv(t, &fakeCoord{}, nil)
	session := contract.BasePath + "/monitoring/session"
	wantJSON(t, e.send("GET", session, basicOf("reader"), ""), http.StatusOK, `{"authenticated":true,"username":"reader","roles":["READ"]}`)
	wantJSON(t, e.send("GET", session, e.bearerOf(t, "monitor"), ""), http.StatusOK, `{"authenticated":true,"username":"monitor","roles":["MONITOR"]}`)

	admin, err := security.NewUsers(security.Options{AdminUsername: "admin", AdminPassword: "pw", TokenSecret: tokenSecret})
	if err != nil {
		t.Fatal(err)
	}
	api := newTestAPI(&fakeCoord{}, func(o *Options) { o.Security = &Security{Users: admin} })
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("GET", session, nil)
	req.SetBasicAuth("admin", "pw")
	api.ServeHTTP(rec, req)
	wantJSON(t, rec, http.StatusOK, `{"authenticated":true,"username":"admin","roles":["ADMIN","MEMBER","MONITOR","READ","WRITE"]}`)
}

func TestOpenAPIHasNoSecurityRoutes(t *testing.T) {
	api := newTestAPI(&fakeCoord{})
	for _, path := range []string{"/auth/login", "/monitoring/session"} {
		if rec := do(api, "GET", contract.BasePath+path, ""); rec.Code != http.StatusNotFound {
			t.Errorf("%s: %d", path, rec.Code)
		}
	}
}

func TestSecurityRequiresUsers(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("no panic")
		}
	}()
	New(Options{Runtime: &fakeCoord{}, Security: &Security{}})
}
