package contract

// The group answers of the admin and monitoring routes (docs/protocol.md
// §2.2, §2.5, §2.6): a group, its members, its assignments and work, its
// migrations, and the list envelopes. Package group projects its state
// into these (group/views.go); the values of the state enums below are
// the domain's own.

// GroupState is the coarse state of a group (docs/protocol.md §4.1).
type GroupState string

const (
	GroupEmpty       GroupState = "EMPTY"
	GroupAssigning   GroupState = "ASSIGNING"
	GroupReconciling GroupState = "RECONCILING"
	GroupStable      GroupState = "STABLE"
)

// MemberState is the lifecycle state of a member record (docs/protocol.md
// §4.1). STARTING is never observable.
type MemberState string

const (
	MemberStarting MemberState = "STARTING"
	MemberActive   MemberState = "ACTIVE"
	MemberLeaving  MemberState = "LEAVING"
	MemberExpired  MemberState = "EXPIRED"
	MemberFenced   MemberState = "FENCED"
)

// MigrationState is the state of a resharding migration (docs/protocol.md
// §6.1).
type MigrationState string

const (
	MigrationPreparing   MigrationState = "PREPARING"
	MigrationActive      MigrationState = "ACTIVE"
	MigrationDraining    MigrationState = "DRAINING"
	MigrationDeprecated  MigrationState = "DEPRECATED"
	MigrationRollingBack MigrationState = "ROLLING_BACK"
	MigrationRolledBack  MigrationState = "ROLLED_BACK"
)

// GroupView is the GroupResponse of docs/protocol.md §2.2: the answer of
// creating, reading and deleting a group, and each entry of GroupList.
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
	// PausedShards and ActiveReset are additive: the shards granted to
	// nobody (paused, or held by the live reset under way), and that reset.
	PausedShards ShardSet   `json:"pausedShards,omitempty"`
	ActiveReset  *LiveReset `json:"activeReset,omitempty"`
	// Assignor is the group's assignor, count or work (additive).
	Assignor string `json:"assignor,omitempty"`
	// Work is a work group's shard weights and member loads (additive);
	// nil for a count group.
	Work *WorkView `json:"work,omitempty"`
	// Status and DesiredMembers are the group's consumption status and
	// scaling signal (GET GroupStatus, GroupScaling) as the coordinator
	// that answers last evaluated them (additive): absent before its
	// first evaluation, without Redis, and for groups placed on another
	// coordinator in the lists.
	Status         ConsumptionStatus `json:"status,omitempty"`
	DesiredMembers *int              `json:"desiredMembers,omitempty"`
}

// GroupList is the body of GET MonitoringGroups.
type GroupList struct {
	Groups []GroupView `json:"groups"`
}

// StreamCreated is the answer of POST StreamTemplate (docs/protocol.md
// §2.2 #2).
type StreamCreated struct {
	StreamPrefix    string `json:"streamPrefix"`
	ShardCount      int    `json:"shardCount"`
	MetadataVersion int64  `json:"metadataVersion"`
}

// Member is one member record as GET MonitoringMembers shows it
// (docs/protocol.md §2.6, §8.5).
type Member struct {
	MemberID              string          `json:"memberId"`
	MemberName            string          `json:"memberName"`
	State                 MemberState     `json:"state"`
	MemberEpoch           int64           `json:"memberEpoch"`
	MetadataVersion       int64           `json:"metadataVersion"`
	RuntimeMaxConcurrency int             `json:"runtimeMaxConcurrency"`
	ActiveConsumerWorkers int             `json:"activeConsumerWorkers"`
	CurrentAssignment     ShardSet        `json:"currentAssignment"`
	GrantedAssignment     ShardSet        `json:"grantedAssignment"`
	Revoking              ShardSet        `json:"revoking"`
	LastHeartbeatAt       Instant         `json:"lastHeartbeatAt"`
	MemberLeaseExpiresAt  Instant         `json:"memberLeaseExpiresAt"`
	RebalanceTimeoutMs    int64           `json:"rebalanceTimeoutMs"`
	RebalanceDeadlineAt   Instant         `json:"rebalanceDeadlineAt"`
	ShardProgress         []ShardProgress `json:"shardProgress"` // [] when none
	// PreviousMemberEpoch and PreviousGrantedAssignment are the epoch the
	// member held before its last epoch change and what it was granted
	// then (a retry after a lost answer is accepted).
	PreviousMemberEpoch       int64    `json:"previousMemberEpoch"`
	PreviousGrantedAssignment ShardSet `json:"previousGrantedAssignment"`
}

// MemberList is the body of GET MonitoringMembers: every member record,
// every state, sorted by member id.
type MemberList struct {
	Members []Member `json:"members"`
}

// ProgressRow is one row of GET MonitoringConsumed (docs/protocol.md
// §2.6): one member's reported progress on one shard.
type ProgressRow struct {
	StreamPrefix    string      `json:"streamPrefix"`
	ConsumerGroup   string      `json:"consumerGroup"`
	MemberID        string      `json:"memberId"`
	MemberName      string      `json:"memberName"`
	MemberState     MemberState `json:"memberState"`
	Shard           Shard       `json:"shard"`
	StreamKey       string      `json:"streamKey"`
	LastDeliveredID *string     `json:"lastDeliveredId"`
	LastAckedID     *string     `json:"lastAckedId"`
	PendingCount    int64       `json:"pendingCount"`
	UpdatedAt       Instant     `json:"updatedAt"`
}

// Consumption is the body of GET MonitoringConsumed: the rows sorted by
// member id, then shard index.
type Consumption struct {
	Progress []ProgressRow `json:"progress"`
}

// AssignmentsView is the body of GET MonitoringAssigned (docs/protocol.md
// §2.6): the target and current assignments, what is being revoked, and
// the texts of the invariants that do not hold ([] when all do).
type AssignmentsView struct {
	TargetAssignment    map[string]ShardSet `json:"targetAssignment"`
	CurrentAssignments  map[string]ShardSet `json:"currentAssignments"`
	RevokeProgress      map[string]ShardSet `json:"revokeProgress"`
	InvariantViolations []string            `json:"invariantViolations"`
	// PausedShards are the shards in no target because they are paused
	// (additive).
	PausedShards ShardSet `json:"pausedShards,omitempty"`
	// WorkView adds the assignor, each shard's weight and each live
	// member's load (additive).
	WorkView
}

// WorkView is how a group's work is spread (docs/assignment.md): its
// assignor, each shard's weight and each live member's load.
type WorkView struct {
	Assignor string `json:"assignor,omitempty"`
	// ShardWeights[s] is shard s's weight in entries per second (ingest
	// rate plus backlog over 30 s plus 1, smoothed); absent until measured.
	ShardWeights []float64 `json:"shardWeights,omitempty"`
	// MemberLoads are the live members' loads by the current weights (1 per
	// shard before any measure).
	MemberLoads map[string]MemberLoad `json:"memberLoads,omitempty"`
	// Imbalance is the busiest member's load per capacity over the mean.
	Imbalance  float64 `json:"imbalance,omitempty"`
	MeasuredAt Instant `json:"measuredAt,omitempty"`
}

// MemberLoad is one member's share of the work.
type MemberLoad struct {
	// Load is the sum of the weights of its target shards.
	Load float64 `json:"load"`
	// Capacity is its runtimeMaxConcurrency (at least 1).
	Capacity int `json:"capacity"`
	// RelativeLoad is its load per capacity over the group's mean (1 is
	// an even share).
	RelativeLoad float64 `json:"relativeLoad"`
}

// Migration is one resharding migration (docs/protocol.md §6.1): the
// answer of scaling a group, reading a migration and rolling it back.
type Migration struct {
	ReshardingID   string         `json:"reshardingId"`
	FromShardCount int            `json:"fromShardCount"`
	ToShardCount   int            `json:"toShardCount"`
	State          MigrationState `json:"state"`
	CreatedAt      Instant        `json:"createdAt"`
	UpdatedAt      Instant        `json:"updatedAt"`
}

// MigrationList is the body of GET MonitoringMigrations: every migration
// of the group by creation time, and the active one's id (null when none
// is active).
type MigrationList struct {
	Migrations         []Migration `json:"migrations"`
	ActiveReshardingID *string     `json:"activeReshardingId"`
}

// StreamScaleView is the 202 answer of POST StreamScale (docs/protocol.md
// §2.5 #3): the groups of the prefix, sorted, each with the migration of
// the same index in Migrations.
type StreamScaleView struct {
	StreamPrefix           string      `json:"streamPrefix"`
	TargetShardCount       int         `json:"targetShardCount"`
	AffectedConsumerGroups []string    `json:"affectedConsumerGroups"`
	Migrations             []Migration `json:"migrations"`
}

// MonitoredGroup is the body of GET MonitoringGroup: the GroupResponse
// and the latest audited mutations of the group and of its stream, newest
// first.
type MonitoredGroup struct {
	GroupView
	RecentMutations []AuditEvent `json:"recentMutations"`
}
