package group

// HeartbeatStatus is the outcome of a heartbeat (docs/protocol.md §4.1).
type HeartbeatStatus string

const (
	StatusOK                  HeartbeatStatus = "OK"
	StatusRetry               HeartbeatStatus = "RETRY"
	StatusSyncMetadata        HeartbeatStatus = "SYNC_METADATA"
	StatusRevokePending       HeartbeatStatus = "REVOKE_PENDING"
	StatusUnknownMemberID     HeartbeatStatus = "UNKNOWN_MEMBER_ID"
	StatusFencedMemberEpoch   HeartbeatStatus = "FENCED_MEMBER_EPOCH"
	StatusUnsupportedProtocol HeartbeatStatus = "UNSUPPORTED_PROTOCOL"
	StatusInvalidRequest      HeartbeatStatus = "INVALID_REQUEST"
)

// RevokingShardState is the progress a member reports for a shard it releases.
type RevokingShardState string

const (
	RevokeRevoking RevokingShardState = "REVOKING"
	RevokeDraining RevokingShardState = "DRAINING"
	RevokeRevoked  RevokingShardState = "REVOKED"
)

// RevokeReport is one entry of a heartbeat's revokingShards list.
type RevokeReport struct {
	Shard    Shard              `json:"shard"`
	State    RevokingShardState `json:"state"`
	InFlight int64              `json:"inFlight"`
	AckedAt  Instant            `json:"ackedAt"`
}

// Terminal reports whether the member has finished releasing the shard.
func (r RevokeReport) Terminal() bool { return r.State == RevokeRevoked && r.InFlight == 0 }

// Capacity is the member's runtime consumer capacity.
type Capacity struct {
	RuntimeMaxConcurrency int `json:"runtimeMaxConcurrency"`
	AvailableConcurrency  int `json:"availableConcurrency"`
}

// HeartbeatRequest is the body of POST …/members/{M}/heartbeat (docs/protocol.md §4.1).
type HeartbeatRequest struct {
	ProtocolVersion         int             `json:"protocolVersion"`
	RequestID               string          `json:"requestId"`
	MemberID                string          `json:"memberId"`
	MemberName              *string         `json:"memberName"`
	MemberEpoch             int64           `json:"memberEpoch"`
	MetadataVersion         int64           `json:"metadataVersion"`
	RuntimeConsumerCapacity *Capacity       `json:"runtimeConsumerCapacity"`
	OwnedShards             ShardSet        `json:"ownedShards"`
	RevokingShards          []RevokeReport  `json:"revokingShards"`
	ShardProgress           []ShardProgress `json:"shardProgress"`
	// PathMemberID is the {M} of the request URL, set by the HTTP layer. When
	// non-empty it must equal MemberID (docs/protocol.md §4.2 step 2).
	PathMemberID string `json:"-"`
}

// AssignmentPayload is the assignment part of a heartbeat response.
type AssignmentPayload struct {
	AssignedShards  ShardSet `json:"assignedShards"`
	PendingShards   ShardSet `json:"pendingShards"`
	MetadataVersion int64    `json:"metadataVersion"`
}

// HeartbeatResponse is the answer to a heartbeat (docs/protocol.md §4.1). It is always sent
// with HTTP 200.
type HeartbeatResponse struct {
	ResponseTo          string          `json:"responseTo"`
	Status              HeartbeatStatus `json:"status"`
	MemberID            string          `json:"memberId"`
	MemberEpoch         int64           `json:"memberEpoch"`
	HeartbeatIntervalMs int64           `json:"heartbeatIntervalMs"`
	RebalanceTimeoutMs  int64           `json:"rebalanceTimeoutMs"`
	// MemberLeaseTtlMs is the coordinator's member lease TTL, from which a
	// member measures its local lease (an addition to docs/protocol.md §4.1 that older
	// clients ignore).
	MemberLeaseTtlMs int64             `json:"memberLeaseTtlMs"`
	GroupEpoch       int64             `json:"groupEpoch"`
	AssignmentEpoch  int64             `json:"assignmentEpoch"`
	MetadataVersion  int64             `json:"metadataVersion"`
	Assignment       AssignmentPayload `json:"assignment"`
}

// CreateRequest is the body of the create endpoints (docs/protocol.md §2.2).
type CreateRequest struct {
	InitialShardCount *int    `json:"initialShardCount"`
	RequestedBy       string  `json:"requestedBy"`
	Reason            *string `json:"reason"`
}

// DeleteRequest is the body of DELETE …/groups/{G} (docs/protocol.md §2.3).
type DeleteRequest struct {
	RequestedBy string `json:"requestedBy"`
	Reason      string `json:"reason"`
	Force       bool   `json:"force"`
}

// ScaleRequest is the body of the scale endpoints (docs/protocol.md §2.5).
type ScaleRequest struct {
	TargetShardCount *int    `json:"targetShardCount"`
	RequestedBy      string  `json:"requestedBy"`
	Reason           *string `json:"reason"`
	DeprecatedAfter  *string `json:"deprecatedAfter"`
}

// RollbackRequest is the body of the rollback endpoint (docs/protocol.md §2.5).
type RollbackRequest struct {
	RequestedBy string `json:"requestedBy"`
	Reason      string `json:"reason"`
}

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
}

// RoutingView is the producer-routing answer of docs/protocol.md §2.4: the
// stream key and Redis Cluster slot of every shard 0..ShardCount-1.
type RoutingView struct {
	StreamPrefix     string         `json:"streamPrefix"`
	ConsumerGroup    string         `json:"consumerGroup"`
	MetadataVersion  int64          `json:"metadataVersion"`
	ShardCount       int            `json:"shardCount"`
	StreamKeyPattern string         `json:"streamKeyPattern"`
	Shards           []RoutingShard `json:"shards"`
}

// RoutingShard is one entry of RoutingView.Shards.
type RoutingShard struct {
	ShardIndex int    `json:"shardIndex"`
	StreamKey  string `json:"streamKey"`
	RedisSlot  int    `json:"redisSlot"`
}

// ErrorBody is the body of every error answer (docs/protocol.md §0).
type ErrorBody struct {
	// Status is the HTTP status's name (BAD_REQUEST, NOT_FOUND, …).
	Status    string `json:"status"`
	ErrorCode Code   `json:"errorCode"`
	Message   string `json:"message"`
}

// AssignmentsView is the /assignments projection of docs/protocol.md §2.6.
type AssignmentsView struct {
	TargetAssignment    map[string]ShardSet `json:"targetAssignment"`
	CurrentAssignments  map[string]ShardSet `json:"currentAssignments"`
	RevokeProgress      map[string]ShardSet `json:"revokeProgress"`
	InvariantViolations []string            `json:"invariantViolations"`
	// Violations are the same violations, typed (not on the wire).
	Violations []Violation `json:"-"`
}
