package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/persistence"
	"github.com/redis-stream-coordinator/coordinator/security"
)

// scopedPrincipal is one caller of the scoped-grant matrix: its
// credential's grants in configuration form, and the rule that says,
// independently of security, which operations on which resources it holds.
type scopedPrincipal struct {
	name   string
	roles  []string
	grants []security.Grant
	allows func(op contract.Operation, stream, grp, member string) bool
}

// The matrix's resources: team X owns the stream prefixes "team-x-…",
// team Y "team-y-…"; the group A of team-x-orders is member A's, B is
// member B's.
const (
	streamX, streamY = "team-x-orders", "team-y-orders"
	groupA, groupB   = "ga", "gb"
)

var teamX = security.Pattern{Value: "team-x-", Prefixed: true}

func scopedPrincipals() []scopedPrincipal {
	ops := func(o ...contract.Operation) []contract.Operation { return o }
	inX := func(stream string) bool { return strings.HasPrefix(stream, "team-x-") }
	member := func(grp, prefix string) func(contract.Operation, string, string, string) bool {
		return func(op contract.Operation, stream, g, m string) bool {
			return op == contract.OpHeartbeat && stream == streamX && g == grp && strings.HasPrefix(m, prefix)
		}
	}
	onX := func(want contract.Operation) func(contract.Operation, string, string, string) bool {
		return func(op contract.Operation, stream, _, _ string) bool { return op == want && inX(stream) }
	}
	return []scopedPrincipal{
		{name: "member-a", grants: []security.Grant{{Streams: security.Pattern{Value: streamX}, Groups: security.Pattern{Value: groupA},
			Operations: ops(contract.OpHeartbeat), MemberIDPrefix: "a-"}}, allows: member(groupA, "a-")},
		{name: "member-b", grants: []security.Grant{{Streams: security.Pattern{Value: streamX}, Groups: security.Pattern{Value: groupB},
			Operations: ops(contract.OpHeartbeat), MemberIDPrefix: "b-"}}, allows: member(groupB, "b-")},
		{name: "describer", grants: []security.Grant{{Streams: teamX, Groups: security.Any, Operations: ops(contract.OpDescribe)}},
			allows: onX(contract.OpDescribe)},
		{name: "message-reader", grants: []security.Grant{{Streams: teamX, Groups: security.Any, Operations: ops(contract.OpReadMessages)}},
			allows: onX(contract.OpReadMessages)},
		{name: "alterer", grants: []security.Grant{{Streams: teamX, Groups: security.Any, Operations: ops(contract.OpAlter)}},
			allows: onX(contract.OpAlter)},
		{name: "admin", roles: []string{"ADMIN"}, allows: func(contract.Operation, string, string, string) bool { return true }},
	}
}

// scopedResource is where a matrix request is sent.
type scopedResource struct{ stream, grp, member string }

var scopedResources = []scopedResource{
	{streamX, groupA, "a-1"}, // member A's group and id; team X's prefix
	{streamX, groupB, "b-1"}, // member B's
	{streamX, groupA, "b-1"}, // member B's id in member A's group
	{streamY, groupA, "a-1"}, // another team's prefix
}

func newScopedEnv(t *testing.T, coord *fakeCoord) (*secureEnv, map[string]string) {
	t.Helper()
	var cfg []security.User
	for _, p := range scopedPrincipals() {
		cfg = append(cfg, security.User{Username: p.name, Password: p.name + "-pw", Roles: p.roles, Grants: p.grants})
	}
	users, err := security.NewUsers(security.Options{Users: cfg, TokenSecret: tokenSecret, Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	e := newSecureEnv(t, coord, func(e *secureEnv, s *Security) {
		e.users, s.Users, s.AuthenticateMemberAPI = users, users, true
	})
	tokens := map[string]string{"anonymous": ""}
	for _, p := range scopedPrincipals() {
		tok, err := users.Login(p.name, p.name+"-pw")
		if err != nil {
			t.Fatal(err)
		}
		tokens[p.name] = "Bearer " + tok.AccessToken
	}
	return e, tokens
}

// scopedPath fills a route's parameters with res; routes that name no
// group select res's group with the streamPrefix and consumerGroup query
// parameters (the Grafana rows' way), which the others ignore.
func scopedPath(template string, res scopedResource) string {
	vals := map[string]string{"streamPrefix": res.stream, "consumerGroup": res.grp, "memberId": res.member}
	path := templateParam.ReplaceAllStringFunc(template, func(p string) string {
		if v, ok := vals[strings.Trim(p, "{}")]; ok {
			return url.PathEscape(v)
		}
		return "1"
	})
	if !strings.Contains(template, "{streamPrefix}") {
		path += "?" + url.Values{"streamPrefix": {res.stream}, "consumerGroup": {res.grp}}.Encode()
	}
	return path
}

// TestScopedGrantMatrix is the least-privilege matrix (issue 42): every
// route × {anonymous, member of group A, member of group B, describe-only,
// read-messages, alter on prefix X, admin} × resources in and out of
// their scope. Outside a grant the answer is exactly 401 (anonymous) or
// 403 FORBIDDEN and the coordinator is never asked; inside it the answer
// is exactly the admin's (same status and error code).
func TestScopedGrantMatrix(t *testing.T) {
	e, tokens := newScopedEnv(t, &fakeCoord{View: sampleView()})
	principals := append([]scopedPrincipal{{name: "anonymous"}}, scopedPrincipals()...)
	tried, inside := 0, 0
	for _, rt := range e.routes {
		op, check := requiredOp(rt, true)
		for _, res := range scopedResources {
			path := scopedPath(rt.Template, res)
			body := `{"requestedBy":"matrix"}`
			ref := e.send(rt.Method, path, tokens["admin"], body)
			for _, p := range principals {
				tried++
				calls := e.coord.Calls
				rec := e.send(rt.Method, path, tokens[p.name], body)
				allowed := !check || (p.name != "anonymous" && (op == "" || grantsOp(p, op, rt.Template, res)))
				where := p.name + " " + rt.Method + " " + path
				switch {
				case allowed:
					inside++
					if rec.Code != ref.Code || errorCode(rec.Body.Bytes()) != errorCode(ref.Body.Bytes()) {
						t.Errorf("%s: %d %s, want the admin's %d %s", where, rec.Code, rec.Body, ref.Code, ref.Body)
					}
				case p.name == "anonymous":
					checkDecision(t, rec, http.StatusUnauthorized)
				default:
					if rec.Code != http.StatusForbidden || errorCode(rec.Body.Bytes()) != string(contract.CodeForbidden) {
						t.Errorf("%s: %d %s, want 403 FORBIDDEN", where, rec.Code, rec.Body)
					}
				}
				if !allowed && e.coord.Calls != calls {
					t.Errorf("%s: refused, but the coordinator was asked", where)
				}
			}
		}
	}
	t.Logf("%d requests, %d inside a grant", tried, inside)
}

// grantsOp applies the principal's rule to a route's resource: a route
// naming a group acts on res; a stream-level route on every group of
// res.stream (covered only by the prefix grants, whose group pattern is
// "*"); a route naming nothing needs the operation on the group its query
// selects.
func grantsOp(p scopedPrincipal, op contract.Operation, template string, res scopedResource) bool {
	if strings.Contains(template, "{streamPrefix}") && !strings.Contains(template, "{consumerGroup}") {
		return p.allows(op, res.stream, "*", "") && !strings.HasPrefix(p.name, "member-")
	}
	return p.allows(op, res.stream, res.grp, res.member)
}

func errorCode(body []byte) string {
	var e struct {
		ErrorCode string `json:"errorCode"`
	}
	_ = json.Unmarshal(body, &e)
	return e.ErrorCode
}

// TestListsShowOnlyGrantedGroups: the routes that list groups show a
// scoped caller only the groups it holds the route's operation on.
func TestListsShowOnlyGrantedGroups(t *testing.T) {
	views := []contract.GroupView{
		{StreamPrefix: streamX, ConsumerGroup: groupA}, {StreamPrefix: streamX, ConsumerGroup: groupB},
		{StreamPrefix: streamY, ConsumerGroup: groupA},
	}
	e, tokens := newScopedEnv(t, &fakeCoord{View: sampleView(), Views: views})
	for who, want := range map[string]int{"admin": 3, "describer": 2} {
		rec := e.send("GET", contract.BasePath+contract.MonitoringGroups, tokens[who], "")
		var body contract.GroupList
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || rec.Code != http.StatusOK {
			t.Fatalf("%s: %d %s", who, rec.Code, rec.Body)
		}
		if len(body.Groups) != want {
			t.Errorf("%s sees %d groups, want %d: %+v", who, len(body.Groups), want, body.Groups)
		}
		for _, g := range body.Groups {
			if who == "describer" && g.StreamPrefix != streamX {
				t.Errorf("describer sees %s/%s", g.StreamPrefix, g.ConsumerGroup)
			}
		}
	}
	for _, who := range []string{"member-a", "message-reader", "alterer"} {
		if rec := e.send("GET", contract.BasePath+contract.MonitoringGroups, tokens[who], ""); rec.Code != http.StatusForbidden {
			t.Errorf("%s lists groups: %d %s, want 403", who, rec.Code, rec.Body)
		}
	}
	// Grafana's options list what the message reader may read.
	rec := e.send("GET", contract.BasePath+contract.GrafanaStreamOptions+"?streamPrefix=&consumerGroup=", tokens["describer"], "")
	if rec.Code != http.StatusOK || strings.Contains(rec.Body.String(), streamY) {
		t.Errorf("describer's stream options: %d %s", rec.Code, rec.Body)
	}
}

// TestSameOriginOnStateChanges: state-changing routes refuse cross-site
// browser requests and bodies not declared JSON, before reading them.
func TestSameOriginOnStateChanges(t *testing.T) {
	e, tokens := newScopedEnv(t, &fakeCoord{View: sampleView()})
	create := contract.BasePath + "/streams/team-x-orders/groups/new"
	for _, c := range []struct {
		name    string
		headers []string
		want    int
	}{
		{"text/plain form", []string{"Content-Type", "text/plain"}, http.StatusUnsupportedMediaType},
		{"urlencoded form", []string{"Content-Type", "application/x-www-form-urlencoded"}, http.StatusUnsupportedMediaType},
		{"multipart form", []string{"Content-Type", "multipart/form-data; boundary=x"}, http.StatusUnsupportedMediaType},
		{"no content type", []string{"Content-Type", ""}, http.StatusCreated},
		{"no content type, foreign origin", []string{"Content-Type", "", "Origin", "https://evil.example"}, http.StatusForbidden},
		{"cross-site fetch", []string{"Sec-Fetch-Site", "cross-site"}, http.StatusForbidden},
		{"same-site fetch", []string{"Sec-Fetch-Site", "same-site"}, http.StatusForbidden},
		{"foreign origin", []string{"Origin", "https://evil.example"}, http.StatusForbidden},
		{"null origin", []string{"Origin", "null"}, http.StatusForbidden},
		{"same origin", []string{"Origin", "http://example.com", "Sec-Fetch-Site", "same-origin"}, http.StatusCreated},
		{"json with charset", []string{"Content-Type", "application/json; charset=utf-8"}, http.StatusCreated},
	} {
		calls := e.coord.Calls
		rec := e.send("POST", create, tokens["admin"], `{"requestedBy":"x"}`, c.headers...)
		if rec.Code != c.want {
			t.Errorf("%s: %d %s, want %d", c.name, rec.Code, rec.Body, c.want)
		}
		if c.want >= 400 && e.coord.Calls != calls {
			t.Errorf("%s: refused, but the coordinator was asked", c.name)
		}
	}
}

// TestSessionShowsGrants: the session route shows a scoped caller its
// grants in the configuration's terms.
func TestSessionShowsGrants(t *testing.T) {
	e, tokens := newScopedEnv(t, &fakeCoord{})
	wantJSON(t, e.send("GET", contract.BasePath+contract.MonitoringSession, tokens["member-a"], ""), http.StatusOK,
		`{"authenticated":true,"username":"member-a","roles":[],"grants":[{"stream":"team-x-orders","streamPattern":"literal",
		"group":"ga","groupPattern":"literal","operations":["HEARTBEAT"],"memberIdPrefix":"a-"}]}`)
}

// viewCluster is a Cluster that only answers the cluster view.
type viewCluster struct {
	Cluster
	view contract.ClusterView
}

func (c viewCluster) Self() persistence.Peer {
	return persistence.Peer{ID: "c1", URL: "http://127.0.0.1:1"}
}
func (c viewCluster) View(context.Context) (contract.ClusterView, error) {
	v := c.view
	v.Groups, v.Handovers = slices.Clone(v.Groups), slices.Clone(v.Handovers)
	return v, nil
}

// TestClusterViewShowsOnlyGrantedGroups: GET /cluster lists the groups and
// handovers of the groups the caller may describe.
func TestClusterViewShowsOnlyGrantedGroups(t *testing.T) {
	var view contract.ClusterView
	for _, p := range []string{streamX, streamY} {
		view.Groups = append(view.Groups, contract.ClusterGroup{StreamPrefix: p, ConsumerGroup: groupA, Owner: "c1"})
		view.Handovers = append(view.Handovers, contract.Handover{StreamPrefix: p, ConsumerGroup: groupA, From: "c1", To: "c2"})
	}
	users, err := security.NewUsers(security.Options{TokenSecret: tokenSecret, Now: func() time.Time { return t0 }, Users: []security.User{
		{Username: "describer", Password: "pw", Grants: []security.Grant{{Streams: teamX, Groups: security.Any, Operations: []contract.Operation{contract.OpDescribe}}}},
		{Username: "admin", Password: "pw", Roles: []string{"ADMIN"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	api := newTestAPI(&fakeCoord{}, func(o *Options) {
		o.Cluster, o.Security = viewCluster{view: view}, &Security{Users: users, Now: func() time.Time { return t0 }}
	})
	for who, want := range map[string]int{"admin": 2, "describer": 1} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("GET", contract.BasePath+contract.ClusterTemplate, nil)
		req.Header.Set("Authorization", basic(who, "pw"))
		api.ServeHTTP(rec, req)
		var got contract.ClusterView
		if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || rec.Code != http.StatusOK {
			t.Fatalf("%s: %d %s", who, rec.Code, rec.Body)
		}
		if len(got.Groups) != want || len(got.Handovers) != want {
			t.Errorf("%s sees %d groups and %d handovers, want %d", who, len(got.Groups), len(got.Handovers), want)
		}
		if who == "describer" && strings.Contains(rec.Body.String(), streamY) {
			t.Errorf("describer sees %s: %s", streamY, rec.Body)
		}
	}
}
