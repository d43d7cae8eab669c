package group

import (
	"math"
	"testing"

	"github.com/redis-stream-coordinator/coordinator/contract"
)

// TestHeartbeatNumberBounds checks both sides of every numeric bound of a
// heartbeat (docs/protocol.md §4.1, "Bounds"; issue 42 item 9: a
// runtimeMaxConcurrency of 2^62 and an updatedAt of 1e300 were accepted):
// the value at a bound passes, the one just beyond it is one
// INVALID_REQUEST violation naming the field.
func TestHeartbeatNumberBounds(t *testing.T) {
	s := DefaultSettings()
	valid := func() *contract.HeartbeatRequest {
		return &contract.HeartbeatRequest{ProtocolVersion: 1, RequestID: "r", MemberID: "m", MemberEpoch: 3, MetadataVersion: 3,
			RuntimeConsumerCapacity: &contract.Capacity{RuntimeMaxConcurrency: 1, AvailableConcurrency: 1},
			RevokingShards:          []contract.RevokeReport{{Shard: contract.Shard{ShardIndex: 1}, State: contract.RevokeRevoked}},
			ShardProgress:           []contract.ShardProgress{{Shard: contract.Shard{ShardIndex: 0}}}}
	}
	capacity := func(f func(c *contract.Capacity)) func(*contract.HeartbeatRequest) {
		return func(r *contract.HeartbeatRequest) { f(r.RuntimeConsumerCapacity) }
	}
	revoke := func(f func(*contract.RevokeReport)) func(*contract.HeartbeatRequest) {
		return func(r *contract.HeartbeatRequest) { f(&r.RevokingShards[0]) }
	}
	progress := func(f func(*contract.ShardProgress)) func(*contract.HeartbeatRequest) {
		return func(r *contract.HeartbeatRequest) { f(&r.ShardProgress[0]) }
	}
	// 1e300 as an epoch number decodes to whatever the platform makes of
	// an out-of-range float conversion; decode it as the server does.
	var huge contract.Instant
	if err := huge.UnmarshalJSON([]byte("1e300")); err != nil {
		t.Fatal(err)
	}
	const (
		minMsg     = "must be greater than or equal to "
		maxMsg     = "must be less than or equal to "
		instantMsg = "must be null or between 2000-01-01T00:00:00.000Z and 2199-12-31T23:59:59.999Z"
	)
	for _, tc := range []struct {
		name   string
		mod    func(*contract.HeartbeatRequest)
		refuse string // "" when the value is at a bound and passes; else "field: message"
	}{
		{"max concurrency 1", capacity(func(c *contract.Capacity) { c.RuntimeMaxConcurrency = 1 }), ""},
		{"max concurrency 0", capacity(func(c *contract.Capacity) { c.RuntimeMaxConcurrency = 0 }), "runtimeConsumerCapacity.runtimeMaxConcurrency: " + minMsg + "1"},
		{"max concurrency 65536", capacity(func(c *contract.Capacity) { c.RuntimeMaxConcurrency = MaxConcurrency }), ""},
		{"max concurrency 65537", capacity(func(c *contract.Capacity) { c.RuntimeMaxConcurrency = MaxConcurrency + 1 }), "runtimeConsumerCapacity.runtimeMaxConcurrency: " + maxMsg + "65536"},
		{"max concurrency 2^62", capacity(func(c *contract.Capacity) { c.RuntimeMaxConcurrency = 1 << 62 }), "runtimeConsumerCapacity.runtimeMaxConcurrency: " + maxMsg + "65536"},
		{"available 0", capacity(func(c *contract.Capacity) { c.AvailableConcurrency = 0 }), ""},
		{"available -1", capacity(func(c *contract.Capacity) { c.AvailableConcurrency = -1 }), "runtimeConsumerCapacity.availableConcurrency: " + minMsg + "0"},
		{"available 65536", capacity(func(c *contract.Capacity) { c.AvailableConcurrency = MaxConcurrency }), ""}, // above the max is tolerated
		{"available 65537", capacity(func(c *contract.Capacity) { c.AvailableConcurrency = MaxConcurrency + 1 }), "runtimeConsumerCapacity.availableConcurrency: " + maxMsg + "65536"},
		{"epoch -2 (a status, step 8)", func(r *contract.HeartbeatRequest) { r.MemberEpoch = -2 }, ""},
		{"epoch 2^53-1", func(r *contract.HeartbeatRequest) { r.MemberEpoch = 1<<53 - 1 }, ""},
		{"epoch 2^53", func(r *contract.HeartbeatRequest) { r.MemberEpoch = 1 << 53 }, "memberEpoch: " + maxMsg + "9007199254740991"},
		{"epoch max int64", func(r *contract.HeartbeatRequest) { r.MemberEpoch = math.MaxInt64 }, "memberEpoch: " + maxMsg + "9007199254740991"},
		{"version 0", func(r *contract.HeartbeatRequest) { r.MetadataVersion = 0 }, ""},
		{"version -1", func(r *contract.HeartbeatRequest) { r.MetadataVersion = -1 }, "metadataVersion: " + minMsg + "0"},
		{"version 2^53-1", func(r *contract.HeartbeatRequest) { r.MetadataVersion = 1<<53 - 1 }, ""},
		{"version 2^53", func(r *contract.HeartbeatRequest) { r.MetadataVersion = 1 << 53 }, "metadataVersion: " + maxMsg + "9007199254740991"},
		{"inFlight 0", revoke(func(r *contract.RevokeReport) { r.InFlight = 0 }), ""},
		{"inFlight -1", revoke(func(r *contract.RevokeReport) { r.InFlight = -1 }), "revokingShards[0].inFlight: " + minMsg + "0"},
		{"inFlight 10^12", revoke(func(r *contract.RevokeReport) { r.InFlight = MaxReportedCount }), ""},
		{"inFlight 10^12+1", revoke(func(r *contract.RevokeReport) { r.InFlight = MaxReportedCount + 1 }), "revokingShards[0].inFlight: " + maxMsg + "1000000000000"},
		{"ackedAt null", revoke(func(r *contract.RevokeReport) { r.AckedAt = 0 }), ""},
		{"ackedAt 2000", revoke(func(r *contract.RevokeReport) { r.AckedAt = MinReportedInstant }), ""},
		{"ackedAt 1999", revoke(func(r *contract.RevokeReport) { r.AckedAt = MinReportedInstant - 1 }), "revokingShards[0].ackedAt: " + instantMsg},
		{"ackedAt 2199", revoke(func(r *contract.RevokeReport) { r.AckedAt = MaxReportedInstant }), ""},
		{"ackedAt 2200", revoke(func(r *contract.RevokeReport) { r.AckedAt = MaxReportedInstant + 1 }), "revokingShards[0].ackedAt: " + instantMsg},
		{"pendingCount 0", progress(func(p *contract.ShardProgress) { p.PendingCount = 0 }), ""},
		{"pendingCount -1", progress(func(p *contract.ShardProgress) { p.PendingCount = -1 }), "shardProgress[0].pendingCount: " + minMsg + "0"},
		{"pendingCount 10^12", progress(func(p *contract.ShardProgress) { p.PendingCount = MaxReportedCount }), ""},
		{"pendingCount 10^12+1", progress(func(p *contract.ShardProgress) { p.PendingCount = MaxReportedCount + 1 }), "shardProgress[0].pendingCount: " + maxMsg + "1000000000000"},
		{"updatedAt null", progress(func(p *contract.ShardProgress) { p.UpdatedAt = 0 }), ""},
		{"updatedAt 2000", progress(func(p *contract.ShardProgress) { p.UpdatedAt = MinReportedInstant }), ""},
		{"updatedAt 1999", progress(func(p *contract.ShardProgress) { p.UpdatedAt = MinReportedInstant - 1 }), "shardProgress[0].updatedAt: " + instantMsg},
		{"updatedAt negative", progress(func(p *contract.ShardProgress) { p.UpdatedAt = -1 }), "shardProgress[0].updatedAt: " + instantMsg},
		{"updatedAt 2199", progress(func(p *contract.ShardProgress) { p.UpdatedAt = MaxReportedInstant }), ""},
		{"updatedAt 2200", progress(func(p *contract.ShardProgress) { p.UpdatedAt = MaxReportedInstant + 1 }), "shardProgress[0].updatedAt: " + instantMsg},
		{"updatedAt 1e300", progress(func(p *contract.ShardProgress) { p.UpdatedAt = huge }), "shardProgress[0].updatedAt: " + instantMsg},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := valid()
			tc.mod(req)
			err := ValidateHeartbeat(req, s)
			switch {
			case tc.refuse == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.refuse == "":
			case err == nil:
				t.Fatalf("accepted, want %q", tc.refuse)
			default:
				e, ok := err.(*Error)
				if !ok || e.Code != contract.CodeInvalidRequest || e.Message != tc.refuse {
					t.Fatalf("%#v, want INVALID_REQUEST %q", err, tc.refuse)
				}
			}
		})
	}
}

// The constants are the values docs/protocol.md's table states.
func TestHeartbeatBoundConstants(t *testing.T) {
	if MinReportedInstant.String() != "2000-01-01T00:00:00.000Z" || MaxReportedInstant.String() != "2199-12-31T23:59:59.999Z" {
		t.Errorf("instant bounds %s..%s", MinReportedInstant, MaxReportedInstant)
	}
	if MaxReportedEpoch != 9007199254740991 || MaxReportedEpoch+1 != 1<<53 {
		t.Errorf("MaxReportedEpoch %d", MaxReportedEpoch)
	}
}
