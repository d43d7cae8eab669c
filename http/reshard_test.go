package httpapi

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
)

const sampleMigrationJSON = `{"reshardingId":"reshard-1","fromShardCount":4,"toShardCount":8,"state":"ACTIVE",
 "createdAt":"2026-05-21T00:00:00.000Z","updatedAt":"2026-05-21T00:00:01.000Z"}`

func TestScaleAnswersAccepted(t *testing.T) {
	f := &fakeCoord{}
	api := newTestAPI(f)
	wantJSON(t, do(api, "POST", groupPath+"/scale", `{"targetShardCount":8,"requestedBy":"ops"}`), http.StatusAccepted, sampleMigrationJSON)
	wantJSON(t, do(api, "POST", "/coord/v1/streams/orders/scale", `{"targetShardCount":0,"requestedBy":"ops","reason":"drain"}`),
		http.StatusAccepted, `{"streamPrefix":"orders","targetShardCount":0,"affectedConsumerGroups":["a"],"migrations":[`+sampleMigrationJSON+`]}`)
	wantJSON(t, do(api, "GET", groupPath+"/migrations/reshard-7", ""), http.StatusOK,
		`{"reshardingId":"reshard-7","fromShardCount":4,"toShardCount":8,"state":"ACTIVE",
		  "createdAt":"2026-05-21T00:00:00.000Z","updatedAt":"2026-05-21T00:00:01.000Z"}`)
	wantJSON(t, do(api, "POST", groupPath+"/migrations/reshard-7/rollback", `{"requestedBy":"ops","reason":"undo"}`), http.StatusAccepted,
		`{"reshardingId":"reshard-7","fromShardCount":4,"toShardCount":8,"state":"ROLLED_BACK",
		  "createdAt":"2026-05-21T00:00:00.000Z","updatedAt":"2026-05-21T00:00:01.000Z"}`)
	wantJSON(t, do(api, "GET", "/coord/v1/monitoring/streams/orders/groups/orders-consumer/migrations", ""), http.StatusOK,
		`{"migrations":[`+sampleMigrationJSON+`],"activeReshardingId":"reshard-1"}`)
}

func TestScaleValidation(t *testing.T) {
	tests := []struct {
		name, path, body, message string
	}{
		{"negative target", groupPath + "/scale", `{"targetShardCount":-1,"requestedBy":"ops"}`, "targetShardCount must be zero or positive"},
		{"negative target, stream", "/coord/v1/streams/orders/scale", `{"targetShardCount":-1,"requestedBy":"ops"}`, "targetShardCount must be zero or positive"},
		{"above max", groupPath + "/scale", `{"targetShardCount":4097,"requestedBy":"ops"}`, "targetShardCount: must be less than or equal to 4096"},
		{"missing target and requester", "/coord/v1/streams/orders/scale", `{}`, "requestedBy: must not be blank; targetShardCount: must not be null"},
		{"rollback without reason", groupPath + "/migrations/reshard-1/rollback", `{"requestedBy":"ops"}`, "reason: must not be blank"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeCoord{}
			wantError(t, do(newTestAPI(f), "POST", tc.path, tc.body), 400, "BAD_REQUEST", "INVALID_REQUEST", tc.message)
			if f.Calls != 0 {
				t.Errorf("coordinator called %d times for an invalid request", f.Calls)
			}
		})
	}
}

func TestReshardingErrorMapping(t *testing.T) {
	tests := []struct {
		err            error
		status         int
		code, messages string
	}{
		{group.Errorf(contract.CodeRollbackNotAllowed, "Migration x is DEPRECATED"), 422, "ROLLBACK_NOT_ALLOWED", "Migration x is DEPRECATED"},
		{group.Errorf(contract.CodeActiveMigrationExists, "busy"), 409, "ACTIVE_MIGRATION_EXISTS", "busy"},
		{group.Errorf(contract.CodeStreamNotFound, "none"), 404, "STREAM_NOT_FOUND", "none"},
		{group.Errorf(contract.CodeMigrationNotFound, "gone"), 404, "MIGRATION_NOT_FOUND", "gone"},
		{fmt.Errorf("provision: %w: key busy", contract.ErrProvisioning), 503, "REDIS_STREAM_PROVISIONING_FAILED", "Redis stream provisioning failed"},
	}
	for _, tc := range tests {
		t.Run(tc.code, func(t *testing.T) {
			rec := do(newTestAPI(&fakeCoord{Err: tc.err}), "POST", groupPath+"/scale", `{"targetShardCount":8,"requestedBy":"ops"}`)
			wantError(t, rec, tc.status, contract.StatusName(tc.status), tc.code, tc.messages)
		})
	}
}

func TestDataPlaneReads(t *testing.T) {
	mon := "/coord/v1/monitoring/streams/orders/groups/orders-consumer"
	api := newTestAPI(&fakeCoord{View: sampleView()})
	tests := []struct {
		path          string
		status        int
		code, message string
	}{
		{mon + "/offsets", 503, "REDIS_NOT_CONFIGURED", msgRedisNotConfigured},
		{mon + "/shards/0/messages", 503, "REDIS_NOT_CONFIGURED", msgRedisNotConfigured},
		{mon + "/shards/4/messages", 400, "INVALID_REQUEST", "shardIndex must be between 0 and 3"},
		{mon + "/shards/-1/messages", 400, "INVALID_REQUEST", "shardIndex must be between 0 and 3"},
		{mon + "/shards/x/messages", 400, "INVALID_REQUEST", "shardIndex: must be an integer"},
		{mon + "/shards/0/messages?direction=UP", 400, "INVALID_REQUEST", "direction: must be FORWARD or BACKWARD"},
		{mon + "/shards/0/messages?limit=many", 400, "INVALID_REQUEST", "limit: must be an integer"},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			wantError(t, do(api, "GET", tc.path, ""), tc.status, contract.StatusName(tc.status), tc.code, tc.message)
		})
	}
}
