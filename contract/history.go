package contract

// The assignment history of a group (GET GroupHistory,
// docs/observability.md "Assignment history"): why each shard's target
// owner changed.

// MoveCause is why a shard's target owner changed.
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
)

// HistoryView is the body of GET GroupHistory: the entries the query
// selects, oldest first.
type HistoryView struct {
	StreamPrefix  string         `json:"streamPrefix"`
	ConsumerGroup string         `json:"consumerGroup"`
	Entries       []HistoryEntry `json:"entries"` // [] when none
}

// HistoryEntry is one change of a shard's target owner. FromMember and
// ToMember are "" for nobody (a paused shard, a shard a scale added or
// removed, a group without live members).
type HistoryEntry struct {
	At         Instant   `json:"at"`
	GroupEpoch int64     `json:"groupEpoch"`
	Shard      int       `json:"shard"`
	FromMember string    `json:"fromMember"`
	ToMember   string    `json:"toMember"`
	Cause      MoveCause `json:"cause"`
	// Weights are set for a work-rebalance only.
	Weights *MoveWeights `json:"weights,omitempty"`
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
	// HistoryShardParam selects the entries of one shard index.
	HistoryShardParam = "shard"
	// HistorySinceParam selects the entries at or after an instant: an
	// RFC 3339 time or Unix epoch milliseconds.
	HistorySinceParam = "since"
)
