package group

import "github.com/redis-stream-coordinator/coordinator/contract"

// GroupView is the GroupResponse of docs/protocol.md §2.2.
type GroupView struct {
	StreamPrefix             string         `json:"streamPrefix"`
	ConsumerGroup            string         `json:"consumerGroup"`
	State                    GroupState     `json:"state"`
	GroupEpoch               int64          `json:"groupEpoch"`
	AssignmentEpoch          int64          `json:"assignmentEpoch"`
	MetadataVersion          int64          `json:"metadataVersion"`
	ShardCount               int            `json:"shardCount"`
	ActiveMigration          *Migration     `json:"activeMigration"`
	TargetAssignmentSummary  map[string]int `json:"targetAssignmentSummary"`
	CurrentAssignmentSummary map[string]int `json:"currentAssignmentSummary"`
	// PausedShards and ActiveReset are additive (liveops.go): the shards
	// granted to nobody, and the live reset under way.
	PausedShards contract.ShardSet `json:"pausedShards,omitempty"`
	ActiveReset  *LiveReset        `json:"activeReset,omitempty"`
	// Assignor is the group's assignor, count or work (additive, work.go).
	Assignor string `json:"assignor,omitempty"`
	// Work is a work group's shard weights and member loads (additive,
	// work.go); nil for a count group.
	Work *WorkView `json:"work,omitempty"`
}

// AssignmentsView is the /assignments projection of docs/protocol.md §2.6.
type AssignmentsView struct {
	TargetAssignment    map[string]contract.ShardSet `json:"targetAssignment"`
	CurrentAssignments  map[string]contract.ShardSet `json:"currentAssignments"`
	RevokeProgress      map[string]contract.ShardSet `json:"revokeProgress"`
	InvariantViolations []string                     `json:"invariantViolations"`
	// PausedShards are the shards in no target because they are paused
	// (additive, liveops.go).
	PausedShards contract.ShardSet `json:"pausedShards,omitempty"`
	// WorkView adds the assignor, each shard's weight and each live
	// member's load (additive, work.go).
	WorkView
	// Violations are the same violations, typed (not on the wire).
	Violations []Violation `json:"-"`
}

// Routing is what producers need to route keys to shards (docs/protocol.md §2.4).
type Routing struct {
	StreamPrefix    string
	ConsumerGroup   string
	MetadataVersion int64
	ShardCount      int
}

// Migrations is a group's migration history (docs/protocol.md §2.6 /migrations).
type Migrations struct {
	// List holds every migration ordered by creation time.
	List []Migration
	// ActiveReshardingID names the active migration, nil when none is.
	ActiveReshardingID *string
}

// StreamScale is the outcome of a stream scale and the 202 body of
// POST /streams/{P}/scale (docs/protocol.md §2.5 #3), which the server
// encodes and the client decodes.
type StreamScale struct {
	StreamPrefix     string `json:"streamPrefix"`
	TargetShardCount int    `json:"targetShardCount"`
	// AffectedConsumerGroups lists the groups of the prefix, sorted; each
	// has the migration of the same index in Migrations.
	AffectedConsumerGroups []string    `json:"affectedConsumerGroups"`
	Migrations             []Migration `json:"migrations"`
}
