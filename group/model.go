package group

import (
	"strings"
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
)

// Key names one consumer group of one sharded stream.
type Key struct {
	StreamPrefix  string
	ConsumerGroup string
}

func (k Key) String() string { return k.StreamPrefix + ":" + k.ConsumerGroup }

// HashTag is "{P:G}", the Redis Cluster hash tag every Redis key of the
// group carries (docs/protocol.md §8.3: <kp>:{P:G}:metadata, :mutex, :admin:audit,
// …); every store and sink builds it here. For keys that pass ValidateKey
// it names one group only (KeyFromHashTag reads it back).
func (k Key) HashTag() string { return "{" + k.StreamPrefix + ":" + k.ConsumerGroup + "}" }

// KeyFromHashTag parses a HashTag of a valid key: "{X:X}" is the
// stream-level group (X, X); otherwise the group is what follows the last
// ':' (a group name other than its prefix has no ':').
func KeyFromHashTag(tag string) (Key, bool) {
	inner, ok := strings.CutPrefix(tag, "{")
	if !ok {
		return Key{}, false
	}
	if inner, ok = strings.CutSuffix(inner, "}"); !ok {
		return Key{}, false
	}
	if x, ok := streamLevelTag(inner); ok {
		return Key{StreamPrefix: x, ConsumerGroup: x}, true
	}
	i := strings.LastIndexByte(inner, ':')
	if i < 0 {
		return Key{}, false
	}
	return Key{StreamPrefix: inner[:i], ConsumerGroup: inner[i+1:]}, true
}

// streamLevelTag reports whether inner is "X:X", returning X.
func streamLevelTag(inner string) (string, bool) {
	n := len(inner) / 2
	if len(inner)%2 == 0 || inner[n] != ':' || inner[:n] != inner[n+1:] {
		return "", false
	}
	return inner[:n], true
}

// GroupState is the coarse state of a group (docs/protocol.md §4.1).
type GroupState string

const (
	GroupEmpty       GroupState = "EMPTY"
	GroupAssigning   GroupState = "ASSIGNING" // never persisted
	GroupReconciling GroupState = "RECONCILING"
	GroupStable      GroupState = "STABLE"
)

// MemberState is the lifecycle state of a member record (docs/protocol.md §4.1).
type MemberState string

const (
	MemberStarting MemberState = "STARTING" // transient, never observable
	MemberActive   MemberState = "ACTIVE"
	MemberLeaving  MemberState = "LEAVING"
	MemberExpired  MemberState = "EXPIRED"
	MemberFenced   MemberState = "FENCED"
)

// Live reports whether a member in this state counts as an owner.
func (s MemberState) Live() bool { return s == MemberActive || s == MemberStarting }

// MigrationState is the state of a resharding migration (docs/protocol.md §6.1).
type MigrationState string

const (
	MigrationPreparing   MigrationState = "PREPARING"
	MigrationActive      MigrationState = "ACTIVE"
	MigrationDraining    MigrationState = "DRAINING"
	MigrationDeprecated  MigrationState = "DEPRECATED"
	MigrationRollingBack MigrationState = "ROLLING_BACK" // never produced
	MigrationRolledBack  MigrationState = "ROLLED_BACK"
)

// Member is one member record (docs/protocol.md §8.5); persistence stores
// it in a record of its own (persistence/record.go), and Member.View is how
// the /members API shows it.
type Member struct {
	MemberID              string
	MemberName            string
	State                 MemberState
	MemberEpoch           int64
	MetadataVersion       int64
	RuntimeMaxConcurrency int
	ActiveConsumerWorkers int
	CurrentAssignment     contract.ShardSet
	GrantedAssignment     contract.ShardSet
	Revoking              contract.ShardSet
	LastHeartbeatAt       contract.Instant
	MemberLeaseExpiresAt  contract.Instant
	RebalanceTimeoutMs    int64
	RebalanceDeadlineAt   contract.Instant
	ShardProgress         ProgressList
	// PreviousMemberEpoch and PreviousGrantedAssignment remember the epoch the
	// member held before its last epoch change and what it was granted then,
	// so a retry after a lost response is accepted (improvement 8a).
	PreviousMemberEpoch       int64
	PreviousGrantedAssignment contract.ShardSet
	// LeaseHold is a lower bound of the lease end that this process must
	// honour beyond MemberLeaseExpiresAt: set when a coordinator takes the
	// group over (RestartLeases), since the previous owner promised leases
	// it never wrote, and while a member still holds shards it was told to
	// release. Never stored.
	LeaseHold contract.Instant

	// GrantEpochs are the group epochs at which the shards of
	// GrantedAssignment were granted, aligned with it: each shard's
	// fencing token for as long as the grant lasts (fence.go).
	GrantEpochs []int64
}

// LeaseEnd is the instant after which no coordinator can have promised the
// member a lease: the later of the lease it was granted and the hold.
func (m *Member) LeaseEnd() contract.Instant { return max(m.MemberLeaseExpiresAt, m.LeaseHold) }

// Holds reports whether the member counts as an owner of what it holds:
// ACTIVE, STARTING and LEAVING members block others; a FENCED member blocks
// what it held until its lease has run out (it may not have heard that it
// was fenced, and reads until its own lease lapses; maintain then clears
// its sets); EXPIRED records keep stale sets but never block (docs/protocol.md §4.6).
func (m *Member) Holds() bool {
	switch m.State {
	case MemberExpired:
		return false
	case MemberFenced:
		return len(m.CurrentAssignment)+len(m.Revoking)+len(m.GrantedAssignment) > 0
	}
	return true
}

// releasing reports whether the rebalance timeout applies to the member:
// an owner that is not already fenced.
func (m *Member) releasing() bool { return m.Holds() && m.State != MemberFenced }

// ProgressList is a member's shard progress, one entry a shard.
type ProgressList []contract.ShardProgress

// Holding is every shard the member may be reading: what it reports owning,
// what it is still releasing, and what it was last granted (it may have
// started reading a granted shard before reporting it). A shard held by one
// owner is blocked for every other member (revoke before assign).
func (m *Member) Holding() contract.ShardSet {
	return m.CurrentAssignment.Union(m.Revoking).Union(m.GrantedAssignment)
}

// Migration is one resharding migration (docs/protocol.md §6.1).
type Migration struct {
	ReshardingID   string
	FromShardCount int
	ToShardCount   int
	State          MigrationState
	CreatedAt      contract.Instant
	UpdatedAt      contract.Instant
}

// MetadataCorrection is an open metadata-correction round (docs/protocol.md §4.8).
type MetadataCorrection struct {
	TargetMetadataVersion   int64
	ObservedMetadataVersion int64
	RequestedAt             contract.Instant
	UpdatedAt               contract.Instant
	AcknowledgedMembers     []string // sorted, never nil
}

// Meta is the group-level part of the aggregate: everything but the member
// records and the target assignment. persistence stores it in a record of
// its own (persistence/record.go).
type Meta struct {
	StreamPrefix       string
	ConsumerGroup      string
	GroupEpoch         int64
	MetadataVersion    int64
	AssignmentEpoch    int64
	State              GroupState
	ShardCount         int
	Migrations         map[string]Migration
	ActiveReshardingID *string
	MetadataCorrection *MetadataCorrection
	CreatedAt          contract.Instant
	UpdatedAt          contract.Instant
	// PausedShards are the shards an operator paused, LiveResets the
	// group's live offset resets, oldest first (liveops.go).
	PausedShards contract.ShardSet
	LiveResets   []LiveReset
	// Assignor is how the targets are computed: AssignorWork or, when
	// empty, AssignorCount (work.go). Work is what a work-assigned group
	// measured; it lives in memory only and is never stored.
	Assignor string
	Work     *Work
	// History is the group's assignment history, oldest first, bounded by
	// Settings.HistoryMaxEntries and HistoryMaxAge (history.go). It is
	// replaced, never modified: copies of the group share it.
	History []Change
	// Coordinator is the id of the coordinator that last took the group as
	// its owner (TakeOver), "" when none recorded one.
	Coordinator string
}

// Key returns the group's key.
func (m *Meta) Key() Key { return Key{m.StreamPrefix, m.ConsumerGroup} }

// Settings are the coordinator-wide defaults the domain needs (docs/protocol.md §11).
type Settings struct {
	HeartbeatInterval    time.Duration
	MemberLeaseTTL       time.Duration
	RebalanceTimeout     time.Duration
	StaleMemberRetention time.Duration // ≤ 0 disables pruning
	DefaultShardCount    int
	MaxShardCount        int
	// DrainCheck is true when removed shards must be confirmed drained in
	// Redis (ConfirmDrain) before a scale-in completes (docs/protocol.md §6.4); false when
	// Redis is not configured.
	DrainCheck bool
	// DefaultAssignor is the assignor of a group created without one
	// (AssignorCount or AssignorWork; "" is count).
	DefaultAssignor string
	// HistoryMaxEntries bounds a group's assignment history (≤ 0 keeps
	// none); entries older than HistoryMaxAge (> 0) are dropped when the
	// next change is recorded (history.go).
	HistoryMaxEntries int
	HistoryMaxAge     time.Duration
}

// DefaultSettings returns the seed's defaults.
func DefaultSettings() Settings {
	return Settings{
		HeartbeatInterval:    time.Second,
		MemberLeaseTTL:       10 * time.Second,
		RebalanceTimeout:     60 * time.Second,
		StaleMemberRetention: 10 * time.Minute,
		DefaultShardCount:    4,
		MaxShardCount:        4096,
		HistoryMaxEntries:    DefaultHistoryMaxEntries,
		HistoryMaxAge:        DefaultHistoryMaxAge,
	}
}
