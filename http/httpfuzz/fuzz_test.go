package httpfuzz

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	httpapi "github.com/redis-stream-coordinator/coordinator/http"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/fakeruntime"
	"github.com/redis-stream-coordinator/coordinator/security"
)

// newAPI is the edge over rt, as a coordinator builds it, with options
// adjusted by mod.
func newAPI(rt httpapi.Runtime, mod ...func(*httpapi.Options)) *httpapi.API {
	o := httpapi.Options{Runtime: rt, CoordinatorID: "fuzz-coordinator", Logger: slog.New(slog.DiscardHandler)}
	for _, m := range mod {
		m(&o)
	}
	return httpapi.New(o)
}

// FuzzHeartbeat feeds arbitrary bodies to the heartbeat route: the decoder
// and the validator answer 400 or pass the request on, never 5xx, and
// what reaches the coordinator passed group.ValidateHeartbeat. make test
// runs it for a few seconds (-fuzztime); go test runs its seeds.
func FuzzHeartbeat(f *testing.F) {
	for _, seed := range []string{
		`{"protocolVersion":1,"requestId":"r","memberId":"m","memberEpoch":0,"runtimeConsumerCapacity":{"runtimeMaxConcurrency":1,"availableConcurrency":1}}`,
		`{"protocolVersion":1,"requestId":"r","memberId":"m","memberEpoch":2,"metadataVersion":2,"runtimeConsumerCapacity":{"runtimeMaxConcurrency":1,"availableConcurrency":1},"ownedShards":[{"shardIndex":-1},{"shardIndex":4611686018427387904}]}`,
		`{"protocolVersion":1,"requestId":"r","memberId":"m","revokingShards":[{"shard":{"shardIndex":2},"state":"REVOKED","inFlight":-1}],"shardProgress":[{"shard":{"shardIndex":0},"pendingCount":-5}]}`,
		`{"memberName":null,"ownedShards":null}`, `[]`, `null`, `{"protocolVersion":1e400}`, "{\"requestId\":\"\xff\"}",
	} {
		f.Add([]byte(seed))
	}
	coord := &fakeruntime.Runtime{}
	api := newAPI(coord)
	path := contract.BasePath + "/streams/orders/groups/workers/members/m/heartbeat"
	f.Fuzz(func(t *testing.T, body []byte) {
		coord.LastHeartbeat = nil
		rec := httptest.NewRecorder()
		api.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, path, strings.NewReader(string(body))))
		if rec.Code >= http.StatusInternalServerError {
			t.Fatalf("%d %s for %q", rec.Code, rec.Body, body)
		}
		if coord.LastHeartbeat != nil {
			if err := group.ValidateHeartbeat(coord.LastHeartbeat, group.DefaultSettings()); err != nil {
				t.Fatalf("an invalid heartbeat reached the coordinator: %v", err)
			}
		}
	})
}

// FuzzRequest sends an arbitrary method, path and body through the secured
// API with and without credentials: never 5xx, and without credentials
// nothing but the open routes (heartbeats with the member API open, login,
// the OpenAPI document, probes, console) reaches a handler that succeeds.
func FuzzRequest(f *testing.F) {
	for _, seed := range [][3]string{
		{"POST", "/coord/v1/streams/members/groups/heartbeat", `{"requestedBy":"x"}`},
		{"DELETE", "/coord/v1/streams/members/groups/heartbeat", `{"requestedBy":"x","reason":"y","force":true}`},
		{"GET", "/coord/v1/streams/p/groups/members/migrations/heartbeat", ""},
		{"GET", "/console/%ff", ""}, {"GET", "/console/a%80b.js", ""}, {"GET", "/console/%e2%82", ""},
		{"POST", "/coord/v1/auth/login", `{"username":"root","password":"x"}`},
		{"POST", "/coord/v1/streams/ka/groups/kb:kc", `{"requestedBy":"x"}`},
		{"GET", "/coord/v1/monitoring/grafana/shards?streamPrefix=%ff&consumerGroup=", ""},
	} {
		f.Add(seed[0], seed[1], seed[2])
	}
	users, err := security.NewUsers(security.Options{AdminUsername: "root", AdminPassword: "pw", TokenSecret: "s"})
	if err != nil {
		f.Fatal(err)
	}
	view := contract.GroupView{StreamPrefix: "orders", ConsumerGroup: "orders-consumer", State: contract.GroupStable, ShardCount: 4}
	api := newAPI(&fakeruntime.Runtime{View: view}, func(o *httpapi.Options) { o.Security = &httpapi.Security{Users: users} })
	f.Fuzz(func(t *testing.T, method, path, body string) {
		if !validMethod(method) || !strings.HasPrefix(path, "/") || strings.ContainsAny(path, " \t\r\n#?") || !utf8.ValidString(method) {
			return
		}
		req, err := http.NewRequest(method, "http://coordinator"+path, strings.NewReader(body))
		if err != nil {
			return
		}
		for _, auth := range []string{"", "Basic cm9vdDpwdw=="} {
			req.Header.Set("Authorization", auth)
			rec := httptest.NewRecorder()
			api.ServeHTTP(rec, req)
			if rec.Code >= http.StatusInternalServerError && rec.Code != http.StatusServiceUnavailable {
				t.Fatalf("%s %q (auth %q): %d %s", method, path, auth, rec.Code, rec.Body)
			}
			if auth == "" && rec.Code < 300 && strings.HasPrefix(req.URL.Path, contract.BasePath+"/") &&
				!strings.HasSuffix(req.URL.Path, "/heartbeat") && req.URL.Path != contract.BasePath+"/openapi.json" {
				t.Fatalf("%s %q without credentials: %d", method, path, rec.Code)
			}
		}
	})
}

func validMethod(m string) bool {
	switch m {
	case "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS":
		return true
	}
	return false
}
