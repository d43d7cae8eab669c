package httpapi

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"os/exec"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-stream-coordinator/coordinator/audit"
	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/testredis"
	"github.com/redis-stream-coordinator/coordinator/ratelimit"
)

// Audit tests (docs/protocol.md §9.1, the seed's "Audit Logging"): every outcome
// of an Admin API mutation yields exactly one complete event in the log,
// memory and Redis sinks, and no secret reaches them.

// panickingCoord panics when asked to create a group.
type panickingCoord struct{ fakeCoord }

func (*panickingCoord) CreateGroup(context.Context, group.Key, contract.CreateRequest, bool) (contract.GroupView, error) {
	panic("audit test panic")
}

// auditSinks are the sinks every audit test records to.
type auditSinks struct {
	mem    *audit.MemorySink
	redis  *audit.RedisSink
	client redis.UniversalClient
	prefix string
}

func newAuditSinks(t *testing.T) *auditSinks {
	t.Helper()
	client := testredis.Shared(t)
	prefix := testredis.Prefix(t, client)
	return &auditSinks{mem: audit.NewMemorySink(100, 1000), redis: audit.NewRedisSink(client, prefix, 100), client: client, prefix: prefix}
}

// install makes the environment record to the log sink (its own logger),
// the memory sink and the Redis sink, with the memory sink as History.
func (s *auditSinks) install(e *secureEnv, sec *Security) {
	sec.Audit = audit.Tee(audit.NewLogSink(e.logger()), s.mem, s.redis)
	sec.History = s.mem
}

// auditLines returns the audit records of a JSON log without the log's
// own keys (time, level, msg, logger).
func auditLines(t *testing.T, logs []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(logs))
	for sc.Scan() {
		var rec map[string]any
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("log line %q: %v", sc.Text(), err)
		}
		if rec["logger"] != audit.LoggerName {
			continue
		}
		if rec["msg"] != "audit" || rec["level"] != "INFO" {
			t.Errorf("audit line %v: want msg audit at INFO", rec)
		}
		for _, k := range []string{"time", "level", "msg", "logger"} {
			delete(rec, k)
		}
		out = append(out, rec)
	}
	return out
}

// asMap is v's JSON as a generic map.
func asMap(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func opt(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

const (
	createBody  = `{"initialShardCount":3,"requestedBy":"alice","reason":"ticket-42"}`
	invalidBody = `{"initialShardCount":0,"requestedBy":"alice","reason":"ticket-42"}`
	deleteBody  = `{"requestedBy":"alice","reason":"ticket-42","force":true}`
	groupRoute  = contract.BasePath + "/streams/{streamPrefix}/groups/{consumerGroup}"
	// querySecret is a token passed in the query string; it must be redacted.
	querySecret = "qs-secret-8f2e1d"
)

func TestAuditEveryOutcome(t *testing.T) {
	sinks := newAuditSinks(t)
	var logs bytes.Buffer // every environment's log
	var secrets []string  // every password and token used
	for _, u := range testUsers {
		secrets = append(secrets, u.password)
	}
	secrets = append(secrets, querySecret)

	type auditCase struct {
		name      string
		method    string
		stream    string
		group     string // "" for the stream-level create
		auth      string // a user name, "bearer:" + user name, or "" for none
		body      string
		coord     Runtime
		refuseAll bool // a limiter with no permits
		status    int
		outcome   contract.AuditOutcome
		errorCode string
		principal string
		roles     []string
		bodyRead  bool
		action    contract.Action
		summary   map[string]string
	}
	createSummary := map[string]string{"initialShardCount": "3"}
	tests := []auditCase{
		{name: "success", method: "POST", stream: "orders", group: "audit-ok", auth: "bearer:writer", body: createBody,
			status: http.StatusCreated, outcome: contract.AuditSuccess, principal: "writer", roles: []string{"WRITE"},
			bodyRead: true, action: contract.ActionCreateGroup, summary: createSummary},
		{name: "stream-level success", method: "POST", stream: "audit-stream", auth: "root", body: createBody,
			status: http.StatusCreated, outcome: contract.AuditSuccess, principal: "root", roles: []string{"ADMIN"},
			bodyRead: true, action: contract.ActionCreateStream, summary: createSummary},
		{name: "400", method: "POST", stream: "orders", group: "audit-400", auth: "writer", body: invalidBody,
			status: http.StatusBadRequest, outcome: contract.AuditFailed, errorCode: "INVALID_REQUEST", principal: "writer",
			roles: []string{"WRITE"}, bodyRead: true, action: contract.ActionCreateGroup, summary: map[string]string{"initialShardCount": "0"}},
		{name: "401", method: "POST", stream: "orders", group: "audit-401", body: createBody,
			status: http.StatusUnauthorized, outcome: contract.AuditUnauthorized, errorCode: "UNAUTHORIZED", action: contract.ActionCreateGroup},
		{name: "403", method: "POST", stream: "orders", group: "audit-403", auth: "bearer:reader", body: createBody,
			status: http.StatusForbidden, outcome: contract.AuditForbidden, errorCode: "FORBIDDEN", principal: "reader",
			roles: []string{"READ"}, action: contract.ActionCreateGroup},
		{name: "404", method: "DELETE", stream: "orders", group: "audit-404", auth: "bearer:writer", body: deleteBody,
			coord:  &fakeCoord{Err: group.Errorf(contract.CodeGroupNotFound, "Group not found")},
			status: http.StatusNotFound, outcome: contract.AuditFailed, errorCode: "GROUP_NOT_FOUND", principal: "writer",
			roles: []string{"WRITE"}, bodyRead: true, action: contract.ActionDeleteGroup, summary: map[string]string{"force": "true"}},
		{name: "409", method: "POST", stream: "orders", group: "audit-409", auth: "root", body: createBody,
			coord:  &fakeCoord{Err: group.Errorf(contract.CodeGroupAlreadyExists, "Group already exists")},
			status: http.StatusConflict, outcome: contract.AuditFailed, errorCode: "GROUP_ALREADY_EXISTS", principal: "root",
			roles: []string{"ADMIN"}, bodyRead: true, action: contract.ActionCreateGroup, summary: createSummary},
		{name: "429", method: "POST", stream: "orders", group: "audit-429", auth: "writer", body: createBody, refuseAll: true,
			status: http.StatusTooManyRequests, outcome: contract.AuditFailed, errorCode: "RATE_LIMIT_EXCEEDED", principal: "writer",
			roles: []string{"WRITE"}, action: contract.ActionCreateGroup},
		{name: "panic", method: "POST", stream: "orders", group: "audit-panic", auth: "writer", body: createBody, coord: &panickingCoord{},
			status: http.StatusInternalServerError, outcome: contract.AuditError, errorCode: "INTERNAL_ERROR", principal: "writer",
			roles: []string{"WRITE"}, bodyRead: true, action: contract.ActionCreateGroup, summary: createSummary},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			coord := tc.coord
			if coord == nil {
				coord = &fakeCoord{View: sampleView()}
			}
			e := newSecureEnv(t, coord, func(e *secureEnv, s *Security) {
				sinks.install(e, s)
				if tc.refuseAll {
					s.Limiter, _ = ratelimit.New(0, time.Minute)
				}
			})
			e.clock.SetStep(7 * time.Millisecond)
			auth := ""
			switch name, isBearer := strings.CutPrefix(tc.auth, "bearer:"); {
			case isBearer:
				auth = e.bearerOf(t, name)
				secrets = append(secrets, strings.TrimPrefix(auth, "Bearer "))
			case tc.auth != "":
				auth = basicOf(tc.auth)
			}
			path, route := contract.BasePath+"/streams/"+tc.stream, contract.BasePath+"/streams/{streamPrefix}"
			if tc.group != "" {
				path, route = path+"/groups/"+tc.group, groupRoute
			}
			start := e.clock.Peek()
			rec := e.send(tc.method, path+"?dryRun=false&access_token="+querySecret, auth, tc.body,
				"X-Request-Id", "req-"+tc.name, "X-Forwarded-For", "203.0.113.7, 10.0.0.1", "User-Agent", "audit-test/1.0")
			logs.Write(e.logs.Bytes())
			if rec.Code != tc.status {
				t.Fatalf("status %d %s, want %d", rec.Code, rec.Body, tc.status)
			}

			fromMemory, err := sinks.mem.Recent(context.Background(), tc.stream, tc.group, 10)
			if err != nil || len(fromMemory) != 1 {
				t.Fatalf("memory sink: %d events (%v), want 1", len(fromMemory), err)
			}
			got := fromMemory[0]
			sum := sha256.Sum256([]byte(tc.body))
			want := audit.Event{
				Timestamp: start, CoordinatorID: "coord-test-1", Action: tc.action, Outcome: tc.outcome, Status: tc.status,
				Principal: opt(tc.principal), Method: tc.method, Path: path, StreamPrefix: tc.stream,
				ConsumerGroup: opt(tc.group), Route: route, QueryString: opt("dryRun=false&access_token=***"),
				RequestID: opt("req-" + tc.name), ClientAddress: "203.0.113.7", UserAgent: opt("audit-test/1.0"),
				Roles: []string{}, DurationMs: got.DurationMs, RequestSummary: map[string]string{}, ErrorCode: opt(tc.errorCode),
			}
			if tc.roles != nil {
				want.Roles = tc.roles
			}
			if tc.bodyRead {
				want.RequestBodySHA256 = opt(hex.EncodeToString(sum[:]))
				want.RequestedBy, want.Reason, want.RequestSummary = opt("alice"), opt("ticket-42"), tc.summary
			}
			if got.DurationMs <= 0 {
				t.Errorf("durationMs = %d, want > 0 (the clock steps 7ms per reading)", got.DurationMs)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("event:\n got %s\nwant %s", asJSON(t, got), asJSON(t, want))
			}

			fromRedis, err := sinks.redis.Recent(context.Background(), tc.stream, tc.group, 10)
			if err != nil || len(fromRedis) != 1 || !reflect.DeepEqual(asMap(t, fromRedis[0]), asMap(t, got)) {
				t.Errorf("redis sink: %v %v, want exactly %s", fromRedis, err, asJSON(t, got))
			}
			lines := auditLines(t, e.logs.Bytes())
			if len(lines) != 1 || !reflect.DeepEqual(lines[0], asMap(t, got)) {
				t.Errorf("log sink: %v, want exactly %s", lines, asJSON(t, got))
			}
		})
	}

	t.Run("redis list key", func(t *testing.T) {
		raw, err := sinks.client.LRange(context.Background(), sinks.prefix+":{orders:audit-ok}:admin:audit", 0, -1).Result()
		if err != nil || len(raw) != 1 || !strings.Contains(raw[0], `"action":"CREATE_GROUP"`) {
			t.Errorf("LRANGE: %v %v", raw, err)
		}
		raw, err = sinks.client.LRange(context.Background(), sinks.prefix+":{audit-stream}:admin:audit", 0, -1).Result()
		if err != nil || len(raw) != 1 || !strings.Contains(raw[0], `"action":"CREATE_STREAM"`) {
			t.Errorf("LRANGE stream-level: %v %v", raw, err)
		}
	})

	t.Run("no secrets", func(t *testing.T) {
		stored := logs.String()
		keys, err := sinks.client.Keys(context.Background(), sinks.prefix+"*").Result()
		if err != nil || len(keys) != len(tests) {
			t.Fatalf("redis keys %v (%v), want one list per case", keys, err)
		}
		for _, k := range keys {
			vals, err := sinks.client.LRange(context.Background(), k, 0, -1).Result()
			if err != nil {
				t.Fatal(err)
			}
			stored += strings.Join(vals, "\n")
		}
		for _, tc := range tests {
			events, _ := sinks.mem.Recent(context.Background(), tc.stream, tc.group, 10)
			stored += asJSON(t, events)
		}
		for _, s := range append(secrets, "Bearer ", "Basic ") {
			if strings.Contains(stored, s) {
				t.Errorf("secret %q found in the audit trail or logs", s)
			}
		}
	})
}

func asJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestAuditFingerprintIsOfTheExactBytes sends a body with odd spacing and
// checks the fingerprint against crypto/sha256 and, once, sha256sum.
func TestAuditFingerprintIsOfTheExactBytes(t *testing.T) {
	mem := audit.NewMemorySink(10, 1000)
	e := newSecureEnv(t, &fakeCoord{View: sampleView()}, func(_ *secureEnv, s *Security) { s.Audit = mem })
	body := " {\"requestedBy\" : \"alice\",\n\t\"initialShardCount\": 2 }\r\n"
	if rec := e.send("POST", contract.BasePath+"/streams/orders/groups/fp", basicOf("writer"), body); rec.Code != http.StatusCreated {
		t.Fatalf("create: %d %s", rec.Code, rec.Body)
	}
	events, _ := mem.Recent(context.Background(), "orders", "fp", 10)
	if len(events) != 1 || events[0].RequestBodySHA256 == nil {
		t.Fatalf("events %+v", events)
	}
	sum := sha256.Sum256([]byte(body))
	if got := *events[0].RequestBodySHA256; got != hex.EncodeToString(sum[:]) {
		t.Errorf("fingerprint %s, want sha256 of the bytes sent %x", got, sum)
	}
	bin, err := exec.LookPath("sha256sum")
	if err != nil {
		t.Logf("sha256sum not available: %v", err)
		return
	}
	cmd := exec.Command(bin)
	cmd.Stdin = strings.NewReader(body)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	if hexSum, _, _ := strings.Cut(string(out), " "); hexSum != *events[0].RequestBodySHA256 {
		t.Errorf("sha256sum says %s, event says %s", hexSum, *events[0].RequestBodySHA256)
	}
}

// TestAuditOnlyMutations: reads, heartbeats, login and unrouted requests
// are not audited.
func TestAuditOnlyMutations(t *testing.T) {
	mem := audit.NewMemorySink(10, 1000)
	e := newSecureEnv(t, &fakeCoord{View: sampleView()}, func(_ *secureEnv, s *Security) { s.Audit = mem })
	grp := contract.BasePath + "/streams/orders/groups/workers"
	e.send("GET", grp, basicOf("reader"), "")
	e.send("POST", grp+"/members/m1/heartbeat", "", `{}`)
	e.send("POST", contract.BasePath+"/auth/login", "", `{"username":"writer","password":"x"}`)
	e.send("PATCH", grp+"/consumer-concurrency", basicOf("writer"), `{}`)
	e.send("POST", contract.BasePath+"/streams/orders/groups/workers/nope", basicOf("writer"), `{}`)
	for _, g := range []string{"workers", ""} {
		if events, _ := mem.Recent(context.Background(), "orders", g, 10); len(events) != 0 {
			t.Errorf("group %q: %d events, want none", g, len(events))
		}
	}
}

// TestRecentMutations: GET /monitoring/streams/{P}/groups/{G} shows the
// group's and its stream's latest events, newest first, at most
// RecentMutationsLimit, from the memory and from the Redis history.
func TestRecentMutations(t *testing.T) {
	sinks := newAuditSinks(t)
	for name, history := range map[string]audit.History{"memory": sinks.mem, "redis": sinks.redis} {
		t.Run(name, func(t *testing.T) {
			stream := "recent-" + name
			e := newSecureEnv(t, &fakeCoord{View: sampleView()}, func(e *secureEnv, s *Security) {
				sinks.install(e, s)
				s.History = history
			})
			e.clock.SetStep(time.Millisecond)
			monitor := func(g string) []audit.Event {
				t.Helper()
				rec := e.send("GET", contract.BasePath+"/monitoring/streams/"+stream+"/groups/"+g, basicOf("monitor"), "")
				var body struct {
					RecentMutations []audit.Event `json:"recentMutations"`
				}
				if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &body) != nil || body.RecentMutations == nil {
					t.Fatalf("monitoring: %d %s", rec.Code, rec.Body)
				}
				return body.RecentMutations
			}
			if got := monitor("workers"); len(got) != 0 {
				t.Fatalf("before any mutation: %v", got)
			}
			e.send("POST", contract.BasePath+"/streams/"+stream, basicOf("writer"), createBody)
			e.send("POST", contract.BasePath+"/streams/"+stream+"/groups/quiet", basicOf("writer"), createBody)
			if got := monitor("quiet"); len(got) != 2 || got[0].Action != contract.ActionCreateGroup || got[1].Action != contract.ActionCreateStream {
				t.Errorf("quiet group: %s, want its CREATE_GROUP then the stream's CREATE_STREAM", asJSON(t, got))
			}
			for i := range RecentMutationsLimit + 5 {
				auth := basicOf("writer")
				if i%2 == 1 {
					auth = basicOf("reader")
				}
				e.send("POST", contract.BasePath+"/streams/"+stream+"/groups/workers", auth, createBody)
			}
			got := monitor("workers")
			if len(got) != RecentMutationsLimit {
				t.Fatalf("%d recent mutations, want %d", len(got), RecentMutationsLimit)
			}
			for i, ev := range got {
				if deref(ev.ConsumerGroup) != "workers" || (i > 0 && !ev.Timestamp.Before(got[i-1].Timestamp)) {
					t.Fatalf("not the group's events newest first: %s", asJSON(t, got))
				}
			}
			// The last request (i = 24, by writer) comes first.
			if got[0].Outcome != contract.AuditSuccess || got[1].Outcome != contract.AuditForbidden {
				t.Errorf("newest outcomes %s, %s", got[0].Outcome, got[1].Outcome)
			}
		})
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
