package client

import "time"

// Status is a heartbeat answer's status (PROTOCOL.md §4.1).
type Status string

// Heartbeat statuses.
const (
	StatusOK                  Status = "OK"
	StatusRetry               Status = "RETRY"
	StatusSyncMetadata        Status = "SYNC_METADATA"
	StatusRevokePending       Status = "REVOKE_PENDING"
	StatusUnknownMemberID     Status = "UNKNOWN_MEMBER_ID"
	StatusFencedMemberEpoch   Status = "FENCED_MEMBER_EPOCH"
	StatusUnsupportedProtocol Status = "UNSUPPORTED_PROTOCOL"
	StatusInvalidRequest      Status = "INVALID_REQUEST"
)

// Revoke report states.
const (
	revokeDraining = "DRAINING"
	revokeRevoked  = "REVOKED"
)

// shardRef is a shard on the wire: {"shardIndex": n}.
type shardRef struct {
	ShardIndex int `json:"shardIndex"`
}

type capacity struct {
	RuntimeMaxConcurrency int `json:"runtimeMaxConcurrency"`
	AvailableConcurrency  int `json:"availableConcurrency"`
}

type revokeReport struct {
	Shard    shardRef   `json:"shard"`
	State    string     `json:"state"`
	InFlight int        `json:"inFlight"`
	AckedAt  *time.Time `json:"ackedAt,omitempty"`
}

type progressReport struct {
	Shard           shardRef  `json:"shard"`
	StreamKey       string    `json:"streamKey"`
	LastDeliveredID *string   `json:"lastDeliveredId"`
	LastAckedID     *string   `json:"lastAckedId"`
	PendingCount    int64     `json:"pendingCount"`
	UpdatedAt       time.Time `json:"updatedAt"`
}

// heartbeatRequest is the body of POST …/members/{M}/heartbeat (§4.1).
type heartbeatRequest struct {
	ProtocolVersion         int              `json:"protocolVersion"`
	RequestID               string           `json:"requestId"`
	MemberID                string           `json:"memberId"`
	MemberName              string           `json:"memberName,omitempty"`
	MemberEpoch             int64            `json:"memberEpoch"`
	MetadataVersion         int64            `json:"metadataVersion"`
	RuntimeConsumerCapacity capacity         `json:"runtimeConsumerCapacity"`
	OwnedShards             []shardRef       `json:"ownedShards"`
	RevokingShards          []revokeReport   `json:"revokingShards"`
	ShardProgress           []progressReport `json:"shardProgress"`
}

// heartbeatResponse is the answer to a heartbeat (§4.1).
type heartbeatResponse struct {
	ResponseTo          string `json:"responseTo"`
	Status              Status `json:"status"`
	MemberID            string `json:"memberId"`
	MemberEpoch         int64  `json:"memberEpoch"`
	HeartbeatIntervalMs int64  `json:"heartbeatIntervalMs"`
	RebalanceTimeoutMs  int64  `json:"rebalanceTimeoutMs"`
	GroupEpoch          int64  `json:"groupEpoch"`
	AssignmentEpoch     int64  `json:"assignmentEpoch"`
	MetadataVersion     int64  `json:"metadataVersion"`
	Assignment          struct {
		AssignedShards  []shardRef `json:"assignedShards"`
		PendingShards   []shardRef `json:"pendingShards"`
		MetadataVersion int64      `json:"metadataVersion"`
	} `json:"assignment"`
}

// Routing is the producer routing metadata of a group (§2.4): the shard
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

// GroupInfo is the coordinator's view of a consumer group (§2.2
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

func shardRefs(shards []int) []shardRef {
	out := make([]shardRef, len(shards))
	for i, s := range shards {
		out[i] = shardRef{ShardIndex: s}
	}
	return out
}
