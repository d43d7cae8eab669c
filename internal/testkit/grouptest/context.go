package grouptest

import (
	"fmt"
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
)

// Context drives one group with a fake clock.
type Context struct {
	T        TB
	Now      contract.Instant
	Settings group.Settings
	Group    *group.Group
	// Records collects every record the handlers produced, in order.
	Records []group.Record
	seq     int
}

// TB is the subset of testing.TB the context needs.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
}

// Start is the fake clock's initial time: 2026-05-21T00:00:00Z.
var Start = contract.InstantOf(time.Date(2026, 5, 21, 0, 0, 0, 0, time.UTC))

// New creates a group with shardCount shards at Start, with the default settings.
func New(t TB, shardCount int) *Context {
	t.Helper()
	c := &Context{T: t, Now: Start, Settings: group.DefaultSettings(), Group: group.New()}
	res := c.Group.Create(c.Now, c.Settings, group.Key{StreamPrefix: "orders", ConsumerGroup: "orders-consumer"},
		contract.CreateRequest{InitialShardCount: &shardCount, RequestedBy: "test"})
	if res.Err != nil {
		t.Fatalf("create: %v", res.Err)
	}
	c.Records = append(c.Records, res.Records...)
	return c
}

// Advance moves the fake clock forward.
func (c *Context) Advance(d time.Duration) { c.Now = c.Now.Add(d) }

// Heartbeat sends a heartbeat and returns the response.
func (c *Context) Heartbeat(req contract.HeartbeatRequest) contract.HeartbeatResponse {
	c.T.Helper()
	if req.ProtocolVersion == 0 {
		req.ProtocolVersion = 1
	}
	if req.RequestID == "" {
		c.seq++
		req.RequestID = fmt.Sprintf("req-%d", c.seq)
	}
	if req.RuntimeConsumerCapacity == nil {
		req.RuntimeConsumerCapacity = &contract.Capacity{RuntimeMaxConcurrency: 1, AvailableConcurrency: 1}
	}
	if err := group.ValidateHeartbeat(&req, c.Settings); err != nil {
		c.T.Fatalf("invalid heartbeat: %v", err)
	}
	res := c.Group.Heartbeat(c.Now, c.Settings, &req)
	c.Records = append(c.Records, res.Records...)
	return res.Answer
}

// Member builds a heartbeat for member id at epoch, owning the given shards,
// at the group's current metadata version.
func (c *Context) Member(id string, epoch int64, owned ...int) contract.HeartbeatRequest {
	return contract.HeartbeatRequest{
		MemberID:        id,
		MemberEpoch:     epoch,
		MetadataVersion: c.Group.MetadataVersion,
		OwnedShards:     contract.NewShardSet(owned...),
	}
}

// JoinRequest is a complete first heartbeat of member id (epoch 0,
// metadata version 1, nothing owned, capacity 1), for tests that send
// heartbeats without a Context (the actors, the core).
func JoinRequest(id string) *contract.HeartbeatRequest {
	return &contract.HeartbeatRequest{
		ProtocolVersion:         1,
		RequestID:               "join-" + id,
		MemberID:                id,
		MetadataVersion:         1,
		RuntimeConsumerCapacity: &contract.Capacity{RuntimeMaxConcurrency: 1, AvailableConcurrency: 1},
	}
}

// NextRequest is the heartbeat member id sends after resp when it follows
// the answer at once: it echoes resp's epoch and metadata version and owns
// what resp assigned.
func NextRequest(id string, resp contract.HeartbeatResponse) *contract.HeartbeatRequest {
	req := JoinRequest(id)
	req.RequestID = fmt.Sprintf("hb-%s-%d", id, resp.MemberEpoch)
	req.MemberEpoch, req.MetadataVersion = resp.MemberEpoch, resp.MetadataVersion
	req.OwnedShards = resp.Assignment.AssignedShards
	return req
}

// Revoked returns terminal revoke reports for the shards.
func Revoked(shards ...int) []contract.RevokeReport {
	out := make([]contract.RevokeReport, 0, len(shards))
	for _, s := range shards {
		out = append(out, contract.RevokeReport{Shard: contract.Shard{ShardIndex: s}, State: contract.RevokeRevoked})
	}
	return out
}

// Draining returns active (non-terminal) revoke reports for the shards.
func Draining(shards ...int) []contract.RevokeReport {
	out := make([]contract.RevokeReport, 0, len(shards))
	for _, s := range shards {
		out = append(out, contract.RevokeReport{Shard: contract.Shard{ShardIndex: s}, State: contract.RevokeDraining, InFlight: 1})
	}
	return out
}

// Tick runs the group's maintenance at the current time.
func (c *Context) Tick() {
	c.Records = append(c.Records, c.Group.Tick(c.Now, c.Settings).Records...)
}

// Replay rebuilds a group from every record produced so far; it must equal
// the live group (recovery and live traffic share one path).
func (c *Context) Replay() *group.Group {
	g := group.New()
	for _, r := range c.Records {
		g.Apply(r)
	}
	return g
}
