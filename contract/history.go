package contract

// The assignment history of a group (GET GroupHistory,
// docs/observability.md "Assignment history"): why each shard's target
// owner changed, and which coordinators held the group.

// MoveCause is why a shard's target owner changed, or, for handover, why
// the group changed coordinators.
type MoveCause string

const (
	// MoveJoin: a member joined or rejoined.
	MoveJoin MoveCause = "join"
	// MoveLeave: a member left (memberEpoch −1).
	MoveLeave MoveCause = "leave"
	// MoveLeaseExpired: a member's lease ran out.
	MoveLeaseExpired MoveCause = "lease-expired"
	// MoveFenced: a member was fenced (an invalid report or a rebalance
	// timeout).
	MoveFenced MoveCause = "fenced"
	// MoveWorkRebalance: the work balancer moved the shard; the entry's
	// weights say why.
	MoveWorkRebalance MoveCause = "work-rebalance"
	// MovePause and MoveResume: an operator paused or resumed shards.
	MovePause  MoveCause = "pause"
	MoveResume MoveCause = "resume"
	// MoveLiveReset: a live offset reset paused the shard or ended.
	MoveLiveReset MoveCause = "live-reset"
	// MoveScale: a resharding migration changed the shard count or moved on.
	MoveScale MoveCause = "scale"
	// MoveHandover: another coordinator took the group over; the entry is
	// group-level (GroupLevelShard) and names the coordinators.
	MoveHandover MoveCause = "handover"
)

// GroupLevelShard is the shard of a group-level entry (a handover): it
// concerns no shard, and a query for a shard never selects it.
const GroupLevelShard = -1

// HistoryView is the body of GET GroupHistory: the entries the query
// selects, oldest first.
type HistoryView struct {
	StreamPrefix  string         `json:"streamPrefix"`
	ConsumerGroup string         `json:"consumerGroup"`
	Entries       []HistoryEntry `json:"entries"` // [] when none
}

// HistoryEntry is one change of a shard's target owner. FromMember and
// ToMember are "" for nobody (a paused shard, a shard a scale added or
// removed, a group without live members). A handover is group-level: its
// Shard is GroupLevelShard, FromMember and ToMember are "", and
// FromCoordinator and ToCoordinator name the coordinator that held the
// group and the one that took it over; every other entry leaves them
// empty (omitted).
type HistoryEntry struct {
	At         Instant   `json:"at"`
	GroupEpoch int64     `json:"groupEpoch"`
	Shard      int       `json:"shard"`
	FromMember string    `json:"fromMember"`
	ToMember   string    `json:"toMember"`
	Cause      MoveCause `json:"cause"`
	// Weights are set for a work-rebalance only.
	Weights         *MoveWeights `json:"weights,omitempty"`
	FromCoordinator string       `json:"fromCoordinator,omitempty"`
	ToCoordinator   string       `json:"toCoordinator,omitempty"`
}

// MoveWeights are the weights behind a work-rebalance: the shard's
// smoothed weight and the loads (weight per unit of capacity) of the
// members it left and joined, before the move.
type MoveWeights struct {
	ShardWeight float64 `json:"shardWeight"`
	FromLoad    float64 `json:"fromLoad"`
	ToLoad      float64 `json:"toLoad"`
}

// History query parameters of GET GroupHistory.
const (
	// HistoryShardParam selects the entries of one shard index (never a
	// group-level entry: those are answered only without it).
	HistoryShardParam = "shard"
	// HistorySinceParam selects the entries at or after an instant: an
	// RFC 3339 time or Unix epoch milliseconds.
	HistorySinceParam = "since"
)
