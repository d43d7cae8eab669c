package client

import "github.com/redis-stream-coordinator/coordinator/group"

// Status is a heartbeat answer's status (docs/protocol.md §4.1).
type Status = group.HeartbeatStatus

// Heartbeat statuses.
const (
	StatusOK                  = group.StatusOK
	StatusRetry               = group.StatusRetry
	StatusSyncMetadata        = group.StatusSyncMetadata
	StatusRevokePending       = group.StatusRevokePending
	StatusUnknownMemberID     = group.StatusUnknownMemberID
	StatusFencedMemberEpoch   = group.StatusFencedMemberEpoch
	StatusUnsupportedProtocol = group.StatusUnsupportedProtocol
	StatusInvalidRequest      = group.StatusInvalidRequest
)

// ErrorCode is the errorCode of an error answer (docs/protocol.md §0).
type ErrorCode = group.Code

// Error codes of the coordinator's answers (APIError.ErrorCode).
const (
	CodeInvalidRequest            = group.CodeInvalidRequest
	CodeGroupNotFound             = group.CodeGroupNotFound
	CodeStreamNotFound            = group.CodeStreamNotFound
	CodeMigrationNotFound         = group.CodeMigrationNotFound
	CodeGroupAlreadyExists        = group.CodeGroupAlreadyExists
	CodeStreamPrefixAlreadyExists = group.CodeStreamPrefixAlreadyExists
	CodeGroupHasActiveMembers     = group.CodeGroupHasActiveMembers
	CodeActiveMigrationExists     = group.CodeActiveMigrationExists
	CodeMetadataSyncInProgress    = group.CodeMetadataSyncInProgress
	CodeRollbackNotAllowed        = group.CodeRollbackNotAllowed
)

// Routing is the producer routing metadata of a group (docs/protocol.md §2.4): the shard
// keys producers write to.
type Routing struct {
	StreamPrefix     string         `json:"streamPrefix"`
	ConsumerGroup    string         `json:"consumerGroup"`
	MetadataVersion  int64          `json:"metadataVersion"`
	ShardCount       int            `json:"shardCount"`
	StreamKeyPattern string         `json:"streamKeyPattern"`
	Shards           []RoutingShard `json:"shards"`
}

// RoutingShard is one shard of a Routing.
type RoutingShard struct {
	ShardIndex int    `json:"shardIndex"`
	StreamKey  string `json:"streamKey"`
	RedisSlot  int    `json:"redisSlot"`
}

// GroupInfo is the coordinator's view of a consumer group (docs/protocol.md §2.2
// GroupResponse), as answered by CreateGroup and Group.
type GroupInfo struct {
	StreamPrefix             string         `json:"streamPrefix"`
	ConsumerGroup            string         `json:"consumerGroup"`
	State                    string         `json:"state"`
	GroupEpoch               int64          `json:"groupEpoch"`
	AssignmentEpoch          int64          `json:"assignmentEpoch"`
	MetadataVersion          int64          `json:"metadataVersion"`
	ShardCount               int            `json:"shardCount"`
	TargetAssignmentSummary  map[string]int `json:"targetAssignmentSummary"`
	CurrentAssignmentSummary map[string]int `json:"currentAssignmentSummary"`
}
