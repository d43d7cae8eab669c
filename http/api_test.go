package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/julienschmidt/httprouter"

	"github.com/redis-stream-coordinator/coordinator/cluster"
	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/fakeruntime"
	"github.com/redis-stream-coordinator/coordinator/persistence"
)

// fakeCoord is the edge's fake runtime: canned answers, a record of the
// calls.
type fakeCoord = fakeruntime.Runtime

func sampleView() contract.GroupView {
	return contract.GroupView{
		StreamPrefix: "orders", ConsumerGroup: "orders-consumer", State: contract.GroupReconciling,
		GroupEpoch: 3, AssignmentEpoch: 3, MetadataVersion: 3, ShardCount: 4,
		TargetAssignmentSummary:  map[string]int{"member-a": 2, "member-b": 2},
		CurrentAssignmentSummary: map[string]int{"member-a": 4},
	}
}

const sampleViewJSON = `{"streamPrefix":"orders","consumerGroup":"orders-consumer","state":"RECONCILING","groupEpoch":3,
 "assignmentEpoch":3,"metadataVersion":3,"shardCount":4,"activeMigration":null,
 "targetAssignmentSummary":{"member-a":2,"member-b":2},"currentAssignmentSummary":{"member-a":4}}`

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// newTestAPI is the API over rt (a fake runtime such as fakeCoord): the
// one builder of the edge's unit tests (newSecureEnv and the others build
// on it), mod adjusting its options.
func newTestAPI(rt Runtime, mod ...func(*Options)) *API {
	o := Options{Runtime: rt, CoordinatorID: "test-coordinator", Logger: discardLogger()}
	for _, m := range mod {
		m(&o)
	}
	return New(o)
}

func do(h http.Handler, method, path, body string) *httptest.ResponseRecorder {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, path, rd))
	return rec
}

// wantJSON fails unless the response has the status and a body equal (as
// JSON) to want.
func wantJSON(t *testing.T, rec *httptest.ResponseRecorder, status int, want string) {
	t.Helper()
	if rec.Code != status {
		t.Fatalf("status = %d, want %d; body %s", rec.Code, status, rec.Body)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q", ct)
	}
	var got, exp any
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatalf("body is not JSON: %v: %s", err, rec.Body)
	}
	if err := json.Unmarshal([]byte(want), &exp); err != nil {
		t.Fatalf("bad want: %v", err)
	}
	if !reflect.DeepEqual(got, exp) {
		t.Errorf("body = %s\nwant   %s", rec.Body, want)
	}
}

// wantError fails unless the response is the docs/protocol.md §0 error body with these values.
func wantError(t *testing.T, rec *httptest.ResponseRecorder, status int, statusName, code, message string) {
	t.Helper()
	wantJSON(t, rec, status, fmt.Sprintf(`{"status":%q,"errorCode":%q,"message":%q}`, statusName, code, message))
}

// errorOf decodes a docs/protocol.md §0 error body, checking the status and code.
func errorOf(t *testing.T, rec *httptest.ResponseRecorder, status int, code string) contract.ErrorBody {
	t.Helper()
	var b contract.ErrorBody
	if err := json.Unmarshal(rec.Body.Bytes(), &b); err != nil {
		t.Fatalf("error body is not JSON: %v: %s", err, rec.Body)
	}
	if rec.Code != status || string(b.ErrorCode) != code || b.Status != contract.StatusName(status) {
		t.Fatalf("got %d %s, want %d %s with status %s", rec.Code, rec.Body, status, code, contract.StatusName(status))
	}
	return b
}

const groupPath = "/coord/v1/streams/orders/groups/orders-consumer"

func TestCreateStreamAnswersCreatedSummary(t *testing.T) {
	f := &fakeCoord{View: sampleView()}
	rec := do(newTestAPI(f), "POST", "/coord/v1/streams/orders", `{"requestedBy":"ops","unknown":{"x":1}}`)
	wantJSON(t, rec, http.StatusCreated, `{"streamPrefix":"orders","shardCount":4,"metadataVersion":3}`)
	if f.Key != (group.Key{StreamPrefix: "orders", ConsumerGroup: "orders"}) || !f.StreamLevel {
		t.Errorf("called with key %v streamLevel %v, want orders/orders stream-level", f.Key, f.StreamLevel)
	}
	if f.Created.InitialShardCount != nil || f.Created.RequestedBy != "ops" {
		t.Errorf("create request = %+v", f.Created)
	}
}

func TestCreateGroupAnswersGroupResponse(t *testing.T) {
	f := &fakeCoord{View: sampleView()}
	rec := do(newTestAPI(f), "POST", groupPath, `{"initialShardCount":4,"requestedBy":"ops","reason":"test"}`)
	wantJSON(t, rec, http.StatusCreated, sampleViewJSON)
	if f.StreamLevel || *f.Created.InitialShardCount != 4 || *f.Created.Reason != "test" {
		t.Errorf("create = %+v streamLevel %v", f.Created, f.StreamLevel)
	}
}

func TestCreateValidation(t *testing.T) {
	small := func(o *Options) { o.MaxBodyBytes = 64 }
	tests := []struct {
		name, path, body string
		status           int
		code, message    string
	}{
		{"zero shards and blank requester", groupPath, `{"initialShardCount":0,"requestedBy":"  "}`, 400, "INVALID_REQUEST",
			"initialShardCount: must be greater than or equal to 1; requestedBy: must not be blank"},
		{"above max shard count", groupPath, `{"initialShardCount":4097,"requestedBy":"ops"}`, 400, "INVALID_REQUEST",
			"initialShardCount: must be less than or equal to 4096"},
		{"missing requester", "/coord/v1/streams/orders", `{}`, 400, "INVALID_REQUEST", "requestedBy: must not be blank"},
		{"missing body", groupPath, ``, 400, "INVALID_REQUEST", "request body is required"},
		{"null body", groupPath, `null`, 400, "INVALID_REQUEST", "request body is required"},
		{"braces in prefix", "/coord/v1/streams/or%7Bd%7Ders/groups/g", `{"requestedBy":"ops"}`, 400, "INVALID_REQUEST",
			"streamPrefix must not contain Redis Cluster hash tag braces"},
		{"too large", groupPath, `{"requestedBy":"` + strings.Repeat("x", 100) + `"}`, 413, "PAYLOAD_TOO_LARGE",
			"Request body exceeds the size limit"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeCoord{View: sampleView()}
			rec := do(newTestAPI(f, small), "POST", tc.path, tc.body)
			wantError(t, rec, tc.status, contract.StatusName(tc.status), tc.code, tc.message)
			if f.Calls != 0 {
				t.Errorf("coordinator called %d times for an invalid request", f.Calls)
			}
		})
	}
}

func TestMalformedBodiesAre400(t *testing.T) {
	for _, body := range []string{`{"requestedBy":`, `{"initialShardCount":"x","requestedBy":"ops"}`, `[1]`, `{"requestedBy":"a"} {}`} {
		f := &fakeCoord{}
		b := errorOf(t, do(newTestAPI(f), "POST", groupPath, body), 400, "INVALID_REQUEST")
		if !strings.HasPrefix(b.Message, "malformed JSON request body") {
			t.Errorf("%s: message %q", body, b.Message)
		}
		if f.Calls != 0 {
			t.Errorf("%s: coordinator called", body)
		}
	}
}

func TestChunkedBodyOverLimitIs413(t *testing.T) {
	api := newTestAPI(&fakeCoord{}, func(o *Options) { o.MaxBodyBytes = 16 })
	req := httptest.NewRequest("POST", groupPath, io.MultiReader(strings.NewReader(`{"requestedBy":"`), strings.NewReader(strings.Repeat("y", 64)+`"}`)))
	req.ContentLength = -1
	rec := httptest.NewRecorder()
	api.ServeHTTP(rec, req)
	errorOf(t, rec, http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE")
}

func TestInvalidNamesNameTheField(t *testing.T) {
	tests := []struct{ method, path, body, field string }{
		{"GET", "/coord/v1/streams/a%20b/groups/g", "", "streamPrefix"},
		{"GET", "/coord/v1/streams/orders/groups/g%20h", "", "consumerGroup"},
		{"GET", "/coord/v1/streams/orders/groups/" + strings.Repeat("g", 201), "", "consumerGroup"},
		{"POST", groupPath + "/members/m%09x/heartbeat", validHeartbeat, "memberId"},
	}
	for _, tc := range tests {
		b := errorOf(t, do(newTestAPI(&fakeCoord{}), tc.method, tc.path, tc.body), 400, "INVALID_REQUEST")
		if !strings.Contains(b.Message, tc.field) {
			t.Errorf("%s: message %q does not name %s", tc.path, b.Message, tc.field)
		}
	}
}

func TestDeleteGroup(t *testing.T) {
	f := &fakeCoord{View: sampleView()}
	api := newTestAPI(f)
	wantError(t, do(api, "DELETE", groupPath, ""), 400, "BAD_REQUEST", "INVALID_REQUEST", "request body is required")
	wantError(t, do(api, "DELETE", groupPath, `{"force":true}`), 400, "BAD_REQUEST", "INVALID_REQUEST",
		"reason: must not be blank; requestedBy: must not be blank")
	if f.Calls != 0 {
		t.Fatalf("coordinator called for invalid deletes")
	}
	wantJSON(t, do(api, "DELETE", groupPath, `{"requestedBy":"ops","reason":"gone","force":true}`), 200, sampleViewJSON)
	if f.Deleted != (contract.DeleteRequest{RequestedBy: "ops", Reason: "gone", Force: true}) {
		t.Errorf("delete request = %+v", f.Deleted)
	}
	f.Err = group.Errorf(contract.CodeGroupHasActiveMembers, "Group has active members")
	wantError(t, do(api, "DELETE", groupPath, `{"requestedBy":"ops","reason":"gone"}`), 409, "CONFLICT",
		"GROUP_HAS_ACTIVE_MEMBERS", "Group has active members")
}

func TestErrorMapping(t *testing.T) {
	tests := []struct {
		err        error
		status     int
		statusName string
		code       string
	}{
		{group.Errorf(contract.CodeInvalidRequest, "bad"), 400, "BAD_REQUEST", "INVALID_REQUEST"},
		{group.Errorf(contract.CodeGroupNotFound, "x"), 404, "NOT_FOUND", "GROUP_NOT_FOUND"},
		{group.Errorf(contract.CodeStreamNotFound, "x"), 404, "NOT_FOUND", "STREAM_NOT_FOUND"},
		{group.Errorf(contract.CodeMigrationNotFound, "x"), 404, "NOT_FOUND", "MIGRATION_NOT_FOUND"},
		{group.Errorf(contract.CodeGroupAlreadyExists, "x"), 409, "CONFLICT", "GROUP_ALREADY_EXISTS"},
		{group.Errorf(contract.CodeStreamPrefixAlreadyExists, "x"), 409, "CONFLICT", "STREAM_PREFIX_ALREADY_EXISTS"},
		{group.Errorf(contract.CodeGroupHasActiveMembers, "x"), 409, "CONFLICT", "GROUP_HAS_ACTIVE_MEMBERS"},
		{group.Errorf(contract.CodeActiveMigrationExists, "x"), 409, "CONFLICT", "ACTIVE_MIGRATION_EXISTS"},
		{group.Errorf(contract.CodeMetadataSyncInProgress, "x"), 409, "CONFLICT", "METADATA_SYNC_IN_PROGRESS"},
		{group.Errorf(contract.CodeRollbackNotAllowed, "x"), 422, "UNPROCESSABLE_ENTITY", "ROLLBACK_NOT_ALLOWED"},
		{fmt.Errorf("wrapped: %w", group.Errorf(contract.CodeGroupNotFound, "x")), 404, "NOT_FOUND", "GROUP_NOT_FOUND"},
		{fmt.Errorf("heartbeat: %w", contract.ErrStateConflict), 409, "CONFLICT", "STATE_VERSION_CONFLICT"},
		{contract.ErrTerminating, 503, "SERVICE_UNAVAILABLE", "COORDINATOR_TERMINATING"},
		{fmt.Errorf("lock orders: %w", persistence.ErrLockTimeout), 503, "SERVICE_UNAVAILABLE", "COORDINATOR_STATE_MUTEX_UNAVAILABLE"},
		{fmt.Errorf("redis 10.0.0.1: %w", persistence.ErrUnavailable), 503, "SERVICE_UNAVAILABLE", "STORE_UNAVAILABLE"},
		{fmt.Errorf("decode: %w", persistence.ErrCorrupt), 500, "INTERNAL_SERVER_ERROR", "GROUP_METADATA_CORRUPT"},
		{fmt.Errorf("commit: %w", persistence.ErrNotOwner), 503, "SERVICE_UNAVAILABLE", "GROUP_OWNED_ELSEWHERE"},
		{cluster.ErrNotServing, 503, "SERVICE_UNAVAILABLE", "COORDINATOR_NOT_SERVING"},
		{&cluster.NotOwnerError{Owner: persistence.Peer{ID: "c2", URL: "http://c2:8080"}}, 503, "SERVICE_UNAVAILABLE", "GROUP_OWNED_ELSEWHERE"},
		{fmt.Errorf("ask: %w", context.DeadlineExceeded), 503, "SERVICE_UNAVAILABLE", "REQUEST_TIMEOUT"},
		{contract.ErrInternal, 500, "INTERNAL_SERVER_ERROR", "INTERNAL_ERROR"},
		{errors.New("secret detail"), 500, "INTERNAL_SERVER_ERROR", "INTERNAL_ERROR"},
	}
	for _, tc := range tests {
		t.Run(tc.code, func(t *testing.T) {
			rec := do(newTestAPI(&fakeCoord{Err: tc.err}), "GET", groupPath, "")
			b := errorOf(t, rec, tc.status, tc.code)
			if strings.Contains(b.Message, "10.0.0.1") || strings.Contains(b.Message, "secret") {
				t.Errorf("message leaks internals: %q", b.Message)
			}
		})
	}
}

// Ownership refusals are retryable: Retry-After 1, and X-Coordinator-Owner
// naming the owner when the refusal names one. An admin write the
// ownership fence refused (this coordinator was deposed: another took the
// group over) wrote nothing; it is one of them, not a 500.
func TestOwnershipRefusalsAreRetryable(t *testing.T) {
	key := group.Key{StreamPrefix: "orders", ConsumerGroup: "orders-consumer"}
	for _, tc := range []struct {
		err         error
		code, owner string
	}{
		{fmt.Errorf("create: %w", persistence.NotOwner("redis store", "create", key, persistence.Fence{Coordinator: "c1", Token: "t", Epoch: 3})), "GROUP_OWNED_ELSEWHERE", ""},
		{&cluster.NotOwnerError{Owner: persistence.Peer{ID: "c2", URL: "http://c2:8080"}}, "GROUP_OWNED_ELSEWHERE", "http://c2:8080"},
		{cluster.ErrNotServing, "COORDINATOR_NOT_SERVING", ""},
	} {
		rec := do(newTestAPI(&fakeCoord{Err: tc.err}), "POST", groupPath, `{"initialShardCount":2,"requestedBy":"ops"}`)
		errorOf(t, rec, http.StatusServiceUnavailable, tc.code)
		if rec.Header().Get("Retry-After") != "1" || rec.Header().Get(contract.OwnerHeader) != tc.owner {
			t.Errorf("%v: headers %v, want Retry-After 1 and owner %q", tc.err, rec.Header(), tc.owner)
		}
	}
}

func TestMissingGroupIs404OnEveryGroupRoute(t *testing.T) {
	f := &fakeCoord{Err: group.Errorf(contract.CodeGroupNotFound, "Group not found")}
	api := newTestAPI(f)
	for _, path := range []string{
		groupPath, groupPath + "/producer-routing",
		"/coord/v1/monitoring/streams/orders/groups/orders-consumer",
		"/coord/v1/monitoring/streams/orders/groups/orders-consumer/members",
		"/coord/v1/monitoring/streams/orders/groups/orders-consumer/assignments",
		"/coord/v1/monitoring/streams/orders/groups/orders-consumer/consumption",
	} {
		wantError(t, do(api, "GET", path, ""), 404, "NOT_FOUND", "GROUP_NOT_FOUND", "Group not found")
		if f.Key != (group.Key{StreamPrefix: "orders", ConsumerGroup: "orders-consumer"}) {
			t.Errorf("%s: key %v", path, f.Key)
		}
	}
}

func TestUnroutedRequestsAnswerJSON(t *testing.T) {
	api := newTestAPI(&fakeCoord{})
	errorOf(t, do(api, "PATCH", groupPath+"/consumer-concurrency", `{"x":1}`), 404, "NOT_FOUND")
	errorOf(t, do(api, "GET", "/coord/v1/nope", ""), 404, "NOT_FOUND")
	errorOf(t, do(api, "GET", groupPath+"/", ""), 404, "NOT_FOUND")
	rec := do(api, "PUT", groupPath, `{}`)
	errorOf(t, rec, 405, "METHOD_NOT_ALLOWED")
	if allow := rec.Header().Get("Allow"); !strings.Contains(allow, "DELETE") || !strings.Contains(allow, "GET") {
		t.Errorf("Allow = %q", allow)
	}
}

func TestProducerRoutingSlots(t *testing.T) {
	f := &fakeCoord{RoutingAnswer: group.Routing{StreamPrefix: "create-order", ConsumerGroup: "demo-workers", MetadataVersion: 2, ShardCount: 2}}
	api := newTestAPI(f)
	wantJSON(t, do(api, "GET", "/coord/v1/streams/create-order/groups/demo-workers/producer-routing", ""), 200,
		`{"streamPrefix":"create-order","consumerGroup":"demo-workers","metadataVersion":2,"shardCount":2,
		  "streamKeyPattern":"create-order:{shardIndex}",
		  "shards":[{"shardIndex":0,"streamKey":"create-order:0","redisSlot":9192},
		            {"shardIndex":1,"streamKey":"create-order:1","redisSlot":13257}]}`)
	f.RoutingAnswer.ShardCount = 0
	wantJSON(t, do(api, "GET", "/coord/v1/streams/create-order/groups/demo-workers/producer-routing", ""), 200,
		`{"streamPrefix":"create-order","consumerGroup":"demo-workers","metadataVersion":2,"shardCount":0,
		  "streamKeyPattern":"create-order:{shardIndex}","shards":[]}`)
}

func TestGetGroupAndMonitoringGroup(t *testing.T) {
	f := &fakeCoord{View: sampleView()}
	api := newTestAPI(f)
	wantJSON(t, do(api, "GET", groupPath, ""), 200, sampleViewJSON)
	mon := strings.TrimSuffix(sampleViewJSON, "}") + `,"recentMutations":[]}`
	wantJSON(t, do(api, "GET", "/coord/v1/monitoring/streams/orders/groups/orders-consumer", ""), 200, mon)
}

func TestListGroups(t *testing.T) {
	f := &fakeCoord{}
	api := newTestAPI(f)
	wantJSON(t, do(api, "GET", "/coord/v1/monitoring/groups", ""), 200, `{"groups":[]}`)
	f.Views = []contract.GroupView{sampleView()}
	wantJSON(t, do(api, "GET", "/coord/v1/monitoring/groups", ""), 200, `{"groups":[`+sampleViewJSON+`]}`)
	f.Err = fmt.Errorf("list: %w", persistence.ErrUnavailable)
	errorOf(t, do(api, "GET", "/coord/v1/monitoring/groups", ""), 503, "STORE_UNAVAILABLE")
}

func TestMembersKeepNulls(t *testing.T) {
	f := &fakeCoord{}
	api := newTestAPI(f)
	path := "/coord/v1/monitoring/streams/orders/groups/orders-consumer/members"
	wantJSON(t, do(api, "GET", path, ""), 200, `{"members":[]}`)
	f.MemberList = []group.Member{{
		MemberID: "member-a", MemberName: "orders-consumer", State: group.MemberActive, MemberEpoch: 3,
		MetadataVersion: 3, RuntimeMaxConcurrency: 1, CurrentAssignment: contract.NewShardSet(1, 0),
		LastHeartbeatAt: 1779321603123, MemberLeaseExpiresAt: 1779321613123, RebalanceTimeoutMs: 60000,
	}}
	rec := do(api, "GET", path, "")
	if rec.Code != 200 {
		t.Fatalf("status %d", rec.Code)
	}
	for _, want := range []string{`"rebalanceDeadlineAt":null`, `"currentAssignment":[{"shardIndex":0},{"shardIndex":1}]`,
		`"revoking":[]`, `"lastHeartbeatAt":"2026-05-21T00:00:03.123Z"`} {
		if !strings.Contains(rec.Body.String(), want) {
			t.Errorf("body lacks %s: %s", want, rec.Body)
		}
	}
}

func TestAssignments(t *testing.T) {
	f := &fakeCoord{AssignmentsAnswer: contract.AssignmentsView{
		TargetAssignment:    map[string]contract.ShardSet{"a": contract.NewShardSet(2, 0)},
		CurrentAssignments:  map[string]contract.ShardSet{"a": contract.NewShardSet(0)},
		RevokeProgress:      map[string]contract.ShardSet{},
		InvariantViolations: []string{},
	}}
	wantJSON(t, do(newTestAPI(f), "GET", "/coord/v1/monitoring/streams/orders/groups/orders-consumer/assignments", ""), 200,
		`{"targetAssignment":{"a":[{"shardIndex":0},{"shardIndex":2}]},"currentAssignments":{"a":[{"shardIndex":0}]},
		  "revokeProgress":{},"invariantViolations":[]}`)
}

func TestConsumptionRowsSorted(t *testing.T) {
	key := "orders:7"
	last := "5-0"
	f := &fakeCoord{MemberList: []group.Member{
		{MemberID: "b", MemberName: "nb", State: group.MemberActive, ShardProgress: []contract.ShardProgress{
			{Shard: contract.Shard{ShardIndex: 1}, PendingCount: 2},
			{Shard: contract.Shard{ShardIndex: 0}, StreamKey: &key, LastAckedID: &last, UpdatedAt: 1779321603123},
		}},
		{MemberID: "a", MemberName: "na", State: group.MemberExpired, ShardProgress: []contract.ShardProgress{
			{Shard: contract.Shard{ShardIndex: 2}},
		}},
	}}
	wantJSON(t, do(newTestAPI(f), "GET", "/coord/v1/monitoring/streams/orders/groups/g/consumption", ""), 200, `{"progress":[
	 {"streamPrefix":"orders","consumerGroup":"g","memberId":"a","memberName":"na","memberState":"EXPIRED","shard":{"shardIndex":2},
	  "streamKey":"orders:2","lastDeliveredId":null,"lastAckedId":null,"pendingCount":0,"updatedAt":null},
	 {"streamPrefix":"orders","consumerGroup":"g","memberId":"b","memberName":"nb","memberState":"ACTIVE","shard":{"shardIndex":0},
	  "streamKey":"orders:7","lastDeliveredId":null,"lastAckedId":"5-0","pendingCount":0,"updatedAt":"2026-05-21T00:00:03.123Z"},
	 {"streamPrefix":"orders","consumerGroup":"g","memberId":"b","memberName":"nb","memberState":"ACTIVE","shard":{"shardIndex":1},
	  "streamKey":"orders:1","lastDeliveredId":null,"lastAckedId":null,"pendingCount":2,"updatedAt":null}]}`)
	f.MemberList = nil
	wantJSON(t, do(newTestAPI(f), "GET", "/coord/v1/monitoring/streams/orders/groups/g/consumption", ""), 200, `{"progress":[]}`)
}

type fixedHealth contract.HealthReport

func (h fixedHealth) Check(context.Context) contract.HealthReport { return contract.HealthReport(h) }

// Readiness follows the store and the cluster membership: 200 only while
// the store is UP (whatever Redis is) and the coordinator is not
// NOT_SERVING; a store not probed yet (UNKNOWN) is not ready either, and
// answers status UNKNOWN. /actuator/health carries the docs/protocol.md
// §10.2 report with the same code.
func TestReadinessFollowsTheStore(t *testing.T) {
	store := func(typ, breaker, status string, unreachable ...string) contract.StoreHealth {
		return contract.StoreHealth{Type: typ, Breaker: breaker, Status: status, Unreachable: unreachable}
	}
	for _, tc := range []struct {
		report contract.HealthReport
		code   int
		status string // of /readyz
	}{
		{contract.HealthReport{Status: "UP", CoordinatorID: "c1", Redis: "UP", Loop: "UP", Store: store("redis", "closed", contract.StoreUp)}, 200, "UP"},
		{contract.HealthReport{Status: "UP", CoordinatorID: "c1", Redis: "UP", Loop: "UP", Store: store("redis", "closed", contract.StoreUp), Cluster: contract.ClusterServing}, 200, "UP"},
		{contract.HealthReport{Status: "DEGRADED", CoordinatorID: "c1", Redis: "DOWN", Loop: "UP", Store: store("memory", "closed", contract.StoreUp)}, 200, "DEGRADED"},
		{contract.HealthReport{Status: "UP", CoordinatorID: "c1", Redis: "UNKNOWN", Loop: "UP", Store: store("redis", "closed", contract.StoreUnknown)}, 503, "UNKNOWN"},
		{contract.HealthReport{Status: "DEGRADED", CoordinatorID: "c1", Redis: "DOWN", Loop: "UP", Store: store("redis", "open", contract.StoreDown)}, 503, "DEGRADED"},
		{contract.HealthReport{Status: "DEGRADED", CoordinatorID: "c1", Redis: "NOT_CONFIGURED", Loop: "UP", Store: store("jdbc", "closed", contract.StoreDown)}, 503, "DEGRADED"},
		{contract.HealthReport{Status: "DEGRADED", CoordinatorID: "c1", Redis: "DEGRADED", RedisUnreachable: []string{"10.0.0.2:6379"}, Loop: "UP",
			Store: store("redis", "closed", contract.StoreDegraded, "10.0.0.2:6379")}, 503, "DEGRADED"},
		{contract.HealthReport{Status: "DEGRADED", CoordinatorID: "c1", Redis: "NOT_CONFIGURED", Loop: "UP", Store: store("memory", "closed", contract.StoreUp), Cluster: contract.ClusterNotServing}, 503, "DEGRADED"},
	} {
		api := newTestAPI(&fakeCoord{}, func(o *Options) { o.Health = fixedHealth(tc.report) })
		body, err := json.Marshal(tc.report)
		if err != nil {
			t.Fatal(err)
		}
		wantJSON(t, do(api, "GET", "/readyz", ""), tc.code, `{"status":"`+tc.status+`"}`)
		ready := strings.Replace(string(body), `"status":"`+tc.report.Status+`"`, `"status":"`+tc.status+`"`, 1)
		wantJSON(t, do(api, "GET", "/actuator/health", ""), tc.code, ready)
		wantJSON(t, do(api, "GET", "/coord/v1/monitoring/health", ""), 200, string(body))
	}
}

func TestActuatorInfo(t *testing.T) {
	api := newTestAPI(&fakeCoord{}, func(o *Options) { o.Version = "v1.2.3" })
	wantJSON(t, do(api, "GET", "/actuator/info", ""), 200, `{"version":"v1.2.3","coordinatorId":"test-coordinator"}`)
}

func TestHealthAndCompatibility(t *testing.T) {
	api := newTestAPI(&fakeCoord{})
	wantJSON(t, do(api, "GET", "/coord/v1/monitoring/health", ""), 200,
		`{"status":"UP","coordinatorId":"test-coordinator","redis":"NOT_CONFIGURED","loop":"UP"}`)
	degraded := newTestAPI(&fakeCoord{}, func(o *Options) {
		o.Health = fixedHealth{Status: "DEGRADED", CoordinatorID: "c1", Redis: "DOWN", Loop: "UP"}
	})
	wantJSON(t, do(degraded, "GET", "/coord/v1/monitoring/health", ""), 200,
		`{"status":"DEGRADED","coordinatorId":"c1","redis":"DOWN","loop":"UP"}`)

	rec := do(api, "GET", "/coord/v1/monitoring/compatibility", "")
	const want = `{"currentCoordinationVersion":1,"supportedCoordinationVersions":{"min":1,"max":1},"coordinationVersions":[{"version":1,` +
		`"status":"ACTIVE","introducedIn":{"major":0,"minor":1,"patch":0,"qualifier":null,"version":"0.1.0"},"deprecatedIn":null,` +
		`"minimumSupportedUntil":{"major":1,"minor":0,"patch":0,"qualifier":null,"version":"1.0.0"},"removedIn":null,` +
		`"timingDefaults":{"heartbeatInterval":"PT3S","memberLeaseTtl":"PT15S","rebalanceTimeout":"PT1M"}}]}`
	if rec.Code != 200 || rec.Body.String() != want {
		t.Errorf("compatibility = %d %s", rec.Code, rec.Body)
	}
}

const validHeartbeat = `{"protocolVersion":1,"requestId":"r1","memberId":"m1","memberName":"orders-consumer",
 "memberEpoch":3,"metadataVersion":3,"runtimeConsumerCapacity":{"runtimeMaxConcurrency":1,"availableConcurrency":1},
 "ownedShards":[{"shardIndex":2},{"shardIndex":0,"extra":true}],
 "revokingShards":[{"shard":{"shardIndex":5},"state":"REVOKED","inFlight":0,"ackedAt":"2026-05-21T00:00:03.123Z"}],
 "shardProgress":[],"unknownField":"ignored"}`

const heartbeatPath = groupPath + "/members/m1/heartbeat"

func TestHeartbeatPassesDecodedRequest(t *testing.T) {
	f := &fakeCoord{HeartbeatAnswer: contract.HeartbeatResponse{
		ResponseTo: "r1", Status: contract.StatusOK, MemberID: "m1", MemberEpoch: 3, HeartbeatIntervalMs: 1000,
		RebalanceTimeoutMs: 60000, MemberLeaseTtlMs: 10000, GroupEpoch: 3, AssignmentEpoch: 3, MetadataVersion: 3,
		Assignment: contract.AssignmentPayload{AssignedShards: contract.NewShardSet(0, 2), MetadataVersion: 3,
			FencingTokens: contract.ShardFences{{ShardIndex: 0, FencingToken: 2}, {ShardIndex: 2, FencingToken: 3}}},
	}}
	rec := do(newTestAPI(f), "POST", heartbeatPath, validHeartbeat)
	wantJSON(t, rec, 200, `{"responseTo":"r1","status":"OK","memberId":"m1","memberEpoch":3,"heartbeatIntervalMs":1000,
	 "rebalanceTimeoutMs":60000,"memberLeaseTtlMs":10000,"groupEpoch":3,"assignmentEpoch":3,"metadataVersion":3,
	 "assignment":{"assignedShards":[{"shardIndex":0},{"shardIndex":2}],"pendingShards":[],"metadataVersion":3,
	 "fencingTokens":[{"shardIndex":0,"fencingToken":2},{"shardIndex":2,"fencingToken":3}]}}`)
	hb := f.LastHeartbeat
	if hb == nil || hb.PathMemberID != "m1" || hb.MemberEpoch != 3 || !hb.OwnedShards.Equal(contract.NewShardSet(0, 2)) ||
		len(hb.RevokingShards) != 1 || !hb.RevokingShards[0].Terminal() || *hb.MemberName != "orders-consumer" {
		t.Errorf("heartbeat request = %+v", hb)
	}
	if f.Key != (group.Key{StreamPrefix: "orders", ConsumerGroup: "orders-consumer"}) {
		t.Errorf("key = %v", f.Key)
	}
}

func TestHeartbeatValidationIs400(t *testing.T) {
	tests := []struct{ name, body, field string }{
		{"protocol zero", strings.Replace(validHeartbeat, `"protocolVersion":1`, `"protocolVersion":0`, 1), "protocolVersion"},
		{"blank request id", strings.Replace(validHeartbeat, `"requestId":"r1"`, `"requestId":" "`, 1), "requestId"},
		{"blank member id", strings.Replace(validHeartbeat, `"memberId":"m1"`, `"memberId":""`, 1), "memberId"},
		{"no capacity", strings.Replace(validHeartbeat, `"runtimeConsumerCapacity":{"runtimeMaxConcurrency":1,"availableConcurrency":1},`, ``, 1), "runtimeConsumerCapacity"},
		{"zero max concurrency", strings.Replace(validHeartbeat, `"runtimeMaxConcurrency":1`, `"runtimeMaxConcurrency":0`, 1), "runtimeMaxConcurrency"},
		{"negative available", strings.Replace(validHeartbeat, `"availableConcurrency":1`, `"availableConcurrency":-1`, 1), "availableConcurrency"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeCoord{}
			b := errorOf(t, do(newTestAPI(f), "POST", heartbeatPath, tc.body), 400, "INVALID_REQUEST")
			if !strings.Contains(b.Message, tc.field) {
				t.Errorf("message %q does not name %s", b.Message, tc.field)
			}
			if f.Calls != 0 {
				t.Errorf("coordinator called")
			}
		})
	}
	for _, body := range []string{"", `{"protocolVersion":1,`, `{"ownedShards":[{"shardIndex":null}]}`, `{"revokingShards":[{"ackedAt":"yesterday"}]}`} {
		errorOf(t, do(newTestAPI(&fakeCoord{}), "POST", heartbeatPath, body), 400, "INVALID_REQUEST")
	}
}

func TestHeartbeatRuntimeErrorsMap(t *testing.T) {
	f := &fakeCoord{Err: fmt.Errorf("commit: %w", contract.ErrStateConflict)}
	errorOf(t, do(newTestAPI(f), "POST", heartbeatPath, validHeartbeat), 409, "STATE_VERSION_CONFLICT")
}

func TestDrainRefusesMutationsOnly(t *testing.T) {
	f := &fakeCoord{View: sampleView()}
	api := newTestAPI(f)
	wantJSON(t, do(api, "GET", "/readyz", ""), 200, `{"status":"UP"}`)
	api.Drain()
	for _, tc := range []struct{ method, path, body string }{
		{"POST", "/coord/v1/streams/orders", `{"requestedBy":"ops"}`},
		{"POST", groupPath, `{"requestedBy":"ops"}`},
		{"DELETE", groupPath, `{"requestedBy":"ops","reason":"r"}`},
		{"POST", heartbeatPath, validHeartbeat},
	} {
		wantError(t, do(api, tc.method, tc.path, tc.body), 503, "SERVICE_UNAVAILABLE", "COORDINATOR_TERMINATING", "Coordinator is terminating")
	}
	if f.Calls != 0 {
		t.Fatalf("coordinator called %d times while draining", f.Calls)
	}
	wantJSON(t, do(api, "GET", groupPath, ""), 200, sampleViewJSON)
	wantJSON(t, do(api, "GET", "/readyz", ""), 503, `{"status":"OUT_OF_SERVICE"}`)
	wantJSON(t, do(api, "GET", "/actuator/health", ""), 503, `{"status":"OUT_OF_SERVICE","coordinatorId":"test-coordinator","redis":"NOT_CONFIGURED","loop":"UP"}`)
	wantJSON(t, do(api, "GET", "/healthz", ""), 200, `{"status":"UP"}`)
}

func TestPanicIsAnswered500(t *testing.T) {
	rec := do(newTestAPI(&fakeCoord{PanicOnRead: true}), "GET", groupPath, "")
	wantError(t, rec, 500, "INTERNAL_SERVER_ERROR", "INTERNAL_ERROR", msgInternal)
}

func TestMiddlewareSeesRoutes(t *testing.T) {
	seen := map[string]Route{}
	deny := func(rt Route, next httprouter.Handle) httprouter.Handle {
		seen[rt.Method+" "+rt.Template] = rt
		return func(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
			if r.Header.Get("Authorization") == "" {
				writeError(w, http.StatusUnauthorized, "UNAUTHORIZED", "no credentials")
				return
			}
			next(w, r, ps)
		}
	}
	var order []string
	tag := func(name string) Middleware {
		return func(_ Route, next httprouter.Handle) httprouter.Handle {
			return func(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
				order = append(order, name)
				next(w, r, ps)
			}
		}
	}
	f := &fakeCoord{View: sampleView()}
	api := newTestAPI(f, func(o *Options) {
		o.BasePath = "/api/v2/"
		o.Middleware = []Middleware{tag("outer"), deny, tag("inner")}
	})
	errorOf(t, do(api, "DELETE", "/api/v2/streams/orders/groups/g", `{"requestedBy":"ops","reason":"r"}`), 401, "UNAUTHORIZED")
	want := Route{Method: "DELETE", Template: "/api/v2/streams/{streamPrefix}/groups/{consumerGroup}", Mutation: true, Action: "DELETE_GROUP", Kind: RouteGroup,
		Operation: contract.OpDelete, Scope: contract.ScopeGroup}
	if got := seen["DELETE /api/v2/streams/{streamPrefix}/groups/{consumerGroup}"]; got != want {
		t.Errorf("route = %+v, want %+v", got, want)
	}
	if f.Calls != 0 || !reflect.DeepEqual(order, []string{"outer"}) {
		t.Errorf("calls %d order %v after denial", f.Calls, order)
	}

	order = nil
	req := httptest.NewRequest("POST", "/api/v2/streams/orders/groups/g/members/m1/heartbeat", strings.NewReader(validHeartbeat))
	req.Header.Set("Authorization", "Basic x")
	rec := httptest.NewRecorder()
	api.ServeHTTP(rec, req)
	if rec.Code != 200 || !reflect.DeepEqual(order, []string{"outer", "inner"}) {
		t.Errorf("heartbeat: %d %s, order %v", rec.Code, rec.Body, order)
	}
	hb := seen["POST /api/v2/streams/{streamPrefix}/groups/{consumerGroup}/members/{memberId}/heartbeat"]
	if !hb.Mutation || hb.Action != "" {
		t.Errorf("heartbeat route = %+v", hb)
	}
	if len(seen) != 41 {
		t.Errorf("middleware wrapped %d routes, want 41: %v", len(seen), seen)
	}
	for name, rt := range seen {
		if rt.Mutation != (rt.Method != "GET") || (rt.Action != "") != (rt.Mutation && rt != hb) {
			t.Errorf("%s: %+v", name, rt)
		}
	}
}

func TestMetricsMounted(t *testing.T) {
	metrics := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "redis_stream_coord_up 1\n") })
	api := newTestAPI(&fakeCoord{}, func(o *Options) { o.Metrics = metrics })
	for _, p := range []string{"/actuator/prometheus", "/metrics"} {
		rec := do(api, "GET", p, "")
		if rec.Code != 200 || !bytes.Contains(rec.Body.Bytes(), []byte("redis_stream_coord_up")) {
			t.Errorf("%s: %d %s", p, rec.Code, rec.Body)
		}
	}
	errorOf(t, do(newTestAPI(&fakeCoord{}), "GET", "/metrics", ""), 404, "NOT_FOUND")
}

// BenchmarkHeartbeat measures the HTTP layer's cost of one heartbeat
// (decode, validate, encode) over a coordinator that answers at once.
func BenchmarkHeartbeat(b *testing.B) {
	f := &fakeCoord{HeartbeatAnswer: contract.HeartbeatResponse{
		ResponseTo: "r1", Status: contract.StatusOK, MemberID: "m1", MemberEpoch: 3,
		Assignment: contract.AssignmentPayload{AssignedShards: contract.NewShardSet(0, 2), MetadataVersion: 3},
	}}
	api := newTestAPI(f)
	body := strings.NewReader(validHeartbeat)
	req := httptest.NewRequest("POST", heartbeatPath, body)
	rec := httptest.NewRecorder()
	b.ReportAllocs()
	for b.Loop() {
		body.Reset(validHeartbeat)
		rec.Body.Reset()
		api.ServeHTTP(rec, req)
	}
	if rec.Code != http.StatusOK {
		b.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
}

// A root base path means the default one, as the security policy and the
// audit read it: routes are never left outside authentication.
func TestRootBasePathIsTheDefault(t *testing.T) {
	f := &fakeCoord{View: sampleView()}
	api := newTestAPI(f, func(o *Options) { o.BasePath = "/" })
	wantJSON(t, do(api, "GET", groupPath, ""), 200, sampleViewJSON)
	errorOf(t, do(api, "GET", "/streams/orders/groups/orders-consumer", ""), 404, "NOT_FOUND")
}
