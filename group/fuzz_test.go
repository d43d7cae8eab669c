package group_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
)

// FuzzValidateHeartbeat decodes arbitrary JSON as a heartbeat to a STABLE
// two-member group (A{0,1} B{2,3} at epoch 3): what ValidateHeartbeat
// refuses is an INVALID_REQUEST error, and what it accepts the state
// machine answers without a panic, leaving every invariant of
// grouptest.CheckGroup intact (records replay to the same group). make test
// runs it for a few seconds (-fuzztime); go test runs its seeds.
func FuzzValidateHeartbeat(f *testing.F) {
	for _, seed := range []string{
		`{"protocolVersion":1,"requestId":"r","memberId":"A","memberEpoch":3,"metadataVersion":3,"runtimeConsumerCapacity":{"runtimeMaxConcurrency":1,"availableConcurrency":1},"ownedShards":[{"shardIndex":0},{"shardIndex":1}]}`,
		`{"protocolVersion":1,"requestId":"r","memberId":"B","memberEpoch":3,"metadataVersion":3,"runtimeConsumerCapacity":{"runtimeMaxConcurrency":1,"availableConcurrency":1},"ownedShards":[{"shardIndex":0},{"shardIndex":3}]}`,
		`{"protocolVersion":1,"requestId":"r","memberId":"C","memberEpoch":0,"runtimeConsumerCapacity":{"runtimeMaxConcurrency":4,"availableConcurrency":0}}`,
		`{"protocolVersion":1,"requestId":"r","memberId":"A","memberEpoch":-1,"runtimeConsumerCapacity":{"runtimeMaxConcurrency":1,"availableConcurrency":1}}`,
		`{"protocolVersion":1,"requestId":"r","memberId":"A","memberEpoch":3,"metadataVersion":9,"runtimeConsumerCapacity":{"runtimeMaxConcurrency":1,"availableConcurrency":1},"revokingShards":[{"shard":{"shardIndex":1},"state":"REVOKED","inFlight":0}]}`,
		`{"protocolVersion":1,"requestId":"r","memberId":"B","memberEpoch":3,"metadataVersion":3,"runtimeConsumerCapacity":{"runtimeMaxConcurrency":1,"availableConcurrency":1},"shardProgress":[{"shard":{"shardIndex":2},"lastAckedId":"1-1","pendingCount":3}]}`,
		`{"protocolVersion":1,"requestId":"r","memberId":"A","memberEpoch":3,"ownedShards":[{"shardIndex":-1},{"shardIndex":4611686018427387904}],"runtimeConsumerCapacity":{"runtimeMaxConcurrency":1,"availableConcurrency":1}}`,
		`{"protocolVersion":1,"requestId":"r","memberId":"A","memberEpoch":-2,"runtimeConsumerCapacity":{"runtimeMaxConcurrency":1,"availableConcurrency":1}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var req contract.HeartbeatRequest
		if json.Unmarshal(body, &req) != nil {
			return
		}
		c := stableAB(t)
		if err := group.ValidateHeartbeat(&req, c.Settings); err != nil {
			var e *group.Error
			if !errors.As(err, &e) || e.Code != contract.CodeInvalidRequest {
				t.Fatalf("ValidateHeartbeat(%s) = %v, want an INVALID_REQUEST error", body, err)
			}
			return
		}
		res := c.Group.Heartbeat(c.Now, c.Settings, &req)
		c.Records = append(c.Records, res.Records...)
		c.Check()
	})
}
