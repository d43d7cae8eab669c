package contract

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
	StatusInvalidRequest      HeartbeatStatus = HeartbeatStatus(CodeInvalidRequest)
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

// ShardProgress is a member's report of how far it read one shard.
type ShardProgress struct {
	Shard           Shard   `json:"shard"`
	StreamKey       *string `json:"streamKey"`
	LastDeliveredID *string `json:"lastDeliveredId"`
	LastAckedID     *string `json:"lastAckedId"`
	PendingCount    int64   `json:"pendingCount"`
	UpdatedAt       Instant `json:"updatedAt"`
}

// HeartbeatRequest is the body of POST HeartbeatTemplate (docs/protocol.md §4.1).
// Every number in it has the bounds of docs/protocol.md §4.1 ("Bounds"),
// checked by group.ValidateHeartbeat: e.g. runtimeMaxConcurrency 1..65536,
// pendingCount and inFlight 0..10^12, times null or within the years
// 2000..2199.
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
	// PathMemberID is the {memberId} of the request URL, set by the HTTP
	// layer. When non-empty it must equal MemberID (docs/protocol.md §4.2
	// step 2).
	PathMemberID string `json:"-"`
}

// AssignmentPayload is the assignment part of a heartbeat response.
type AssignmentPayload struct {
	AssignedShards  ShardSet `json:"assignedShards"`
	PendingShards   ShardSet `json:"pendingShards"`
	MetadataVersion int64    `json:"metadataVersion"`
	// FencingTokens are the assigned shards' fencing tokens (ShardFence;
	// an addition to docs/protocol.md §4.1 that older clients ignore).
	FencingTokens ShardFences `json:"fencingTokens"`
}

// HeartbeatResponse is the answer to a heartbeat (docs/protocol.md §4.1).
// It is always sent with HTTP 200.
type HeartbeatResponse struct {
	ResponseTo          string          `json:"responseTo"`
	Status              HeartbeatStatus `json:"status"`
	MemberID            string          `json:"memberId"`
	MemberEpoch         int64           `json:"memberEpoch"`
	HeartbeatIntervalMs int64           `json:"heartbeatIntervalMs"`
	RebalanceTimeoutMs  int64           `json:"rebalanceTimeoutMs"`
	// MemberLeaseTtlMs is the coordinator's member lease TTL, from which a
	// member measures its local lease (an addition to docs/protocol.md
	// §4.1 that older clients ignore).
	MemberLeaseTtlMs int64             `json:"memberLeaseTtlMs"`
	GroupEpoch       int64             `json:"groupEpoch"`
	AssignmentEpoch  int64             `json:"assignmentEpoch"`
	MetadataVersion  int64             `json:"metadataVersion"`
	Assignment       AssignmentPayload `json:"assignment"`
}
