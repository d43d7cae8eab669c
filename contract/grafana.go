package contract

// The rows of the Grafana routes (docs/protocol.md §2.7, GrafanaPrefix):
// each route answers a JSON array of one row type.

// GrafanaGroupRow is one row of GET GrafanaGroups.
type GrafanaGroupRow struct {
	StreamPrefix    string     `json:"streamPrefix"`
	ConsumerGroup   string     `json:"consumerGroup"`
	State           GroupState `json:"state"`
	GroupEpoch      int64      `json:"groupEpoch"`
	AssignmentEpoch int64      `json:"assignmentEpoch"`
	MetadataVersion int64      `json:"metadataVersion"`
	ShardCount      int        `json:"shardCount"`
	// ActiveMembers counts ACTIVE and STARTING members, TotalMembers every
	// member record.
	ActiveMembers int `json:"activeMembers"`
	TotalMembers  int `json:"totalMembers"`
	// CurrentShards sums the live members' current assignments,
	// TargetShards the target assignment, RevokingShards the revoking sets
	// of the members that still hold theirs.
	CurrentShards      int    `json:"currentShards"`
	TargetShards       int    `json:"targetShards"`
	AssignedShardRatio string `json:"assignedShardRatio"`
	RevokingShards     int    `json:"revokingShards"`
	// The Offsets totals and the summed known rates.
	TotalStreamLength     int64    `json:"totalStreamLength"`
	TotalPendingCount     int64    `json:"totalPendingCount"`
	TotalLag              *int64   `json:"totalLag"`
	ProducedPerSecond     *float64 `json:"producedPerSecond"`
	ConsumedPerSecond     *float64 `json:"consumedPerSecond"`
	TotalMemoryUsageBytes int64    `json:"totalMemoryUsageBytes"`
	MemoryUsageKnown      bool     `json:"memoryUsageKnown"`
}

// GrafanaOption is one value of a Grafana template variable: the rows of
// GET GrafanaStreamOptions, GrafanaGroupOptions and GrafanaShardOptions.
type GrafanaOption struct {
	Text  string `json:"__text"`
	Value string `json:"__value"`
}

// GrafanaMemberRow is one row of GET GrafanaMembers.
type GrafanaMemberRow struct {
	StreamPrefix          string      `json:"streamPrefix"`
	ConsumerGroup         string      `json:"consumerGroup"`
	MemberID              string      `json:"memberId"`
	MemberName            string      `json:"memberName"`
	State                 MemberState `json:"state"`
	MemberEpoch           int64       `json:"memberEpoch"`
	MetadataVersion       int64       `json:"metadataVersion"`
	CurrentShardCount     int         `json:"currentShardCount"`
	RevokingShardCount    int         `json:"revokingShardCount"`
	RuntimeMaxConcurrency int         `json:"runtimeMaxConcurrency"`
	ActiveConsumerWorkers int         `json:"activeConsumerWorkers"`
	LastHeartbeatAt       Instant     `json:"lastHeartbeatAt"`
	MemberLeaseExpiresAt  Instant     `json:"memberLeaseExpiresAt"`
}

// OwnerState classifies a shard by its owners.
type OwnerState string

const (
	// OwnerUnassigned: no target and no current owner.
	OwnerUnassigned OwnerState = "UNASSIGNED"
	// OwnerPendingAck: a target owner, no current one.
	OwnerPendingAck OwnerState = "PENDING_ACK"
	// OwnerCurrent: the current owners are the target owners.
	OwnerCurrent OwnerState = "CURRENT"
	// OwnerTransitioning: anything else (the shard is moving).
	OwnerTransitioning OwnerState = "TRANSITIONING"
)

// GrafanaShardRow is one row of GET GrafanaShards: the scalars of a
// ShardOffset plus the group's view of the shard.
type GrafanaShardRow struct {
	StreamPrefix  string `json:"streamPrefix"`
	ConsumerGroup string `json:"consumerGroup"`
	ShardCount    int    `json:"shardCount"`
	ShardIndex    int    `json:"shardIndex"`
	ShardLabel    string `json:"shardLabel"`
	StreamPosition
	LagKnown          bool     `json:"lagKnown"`
	ProducedPerSecond *float64 `json:"producedPerSecond"`
	ConsumedPerSecond *float64 `json:"consumedPerSecond"`
	MemoryUsageKnown  bool     `json:"memoryUsageKnown"`
	// Comma-joined sorted member ids: the target and current owners, and
	// the live members whose current assignment holds the shard.
	TargetOwnerMemberIDs  string     `json:"targetOwnerMemberIds"`
	CurrentOwnerMemberIDs string     `json:"currentOwnerMemberIds"`
	OwnerMemberIDs        string     `json:"ownerMemberIds"`
	OwnerState            OwnerState `json:"ownerState"`
}

// GrafanaAssignmentRow is one row of GET GrafanaAssignments: a readable
// shard's owners in each role, comma-joined and sorted.
type GrafanaAssignmentRow struct {
	StreamPrefix   string `json:"streamPrefix"`
	ConsumerGroup  string `json:"consumerGroup"`
	ShardIndex     int    `json:"shardIndex"`
	TargetOwners   string `json:"targetOwners"`
	CurrentOwners  string `json:"currentOwners"`
	RevokingOwners string `json:"revokingOwners"`
}

// GrafanaMessageRow is one row of GET GrafanaMessages: a stream entry and
// the page it is on.
type GrafanaMessageRow struct {
	StreamPrefix  string  `json:"streamPrefix"`
	ConsumerGroup string  `json:"consumerGroup"`
	ShardIndex    int     `json:"shardIndex"`
	ShardSelector string  `json:"shardSelector"`
	ShardLabel    string  `json:"shardLabel"`
	StreamKey     string  `json:"streamKey"`
	RecordID      string  `json:"recordId"`
	Payload       *string `json:"payload"`
	// FieldsJSON is the entry's fields as a JSON object string.
	FieldsJSON     string    `json:"fieldsJson"`
	PageDirection  Direction `json:"pageDirection"`
	PageLimit      int       `json:"pageLimit"`
	PageNextCursor *string   `json:"pageNextCursor"`
	// PageTotalMessages sums the lengths of the selected shards.
	PageTotalMessages int64   `json:"pageTotalMessages"`
	RecordTimestampMs int64   `json:"recordTimestampMs"`
	RecordTime        Instant `json:"recordTime"`
}
