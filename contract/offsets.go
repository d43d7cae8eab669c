package contract

// The offset reset's wire (POST …/offsets/reset, docs/operations.md): the
// request, the answer of a forced reset, the answer of a dry run, and the
// consumer group position they report. A live reset (neither Force nor
// DryRun) answers the stored operation, group.LiveReset.

// GroupPosition is where a consumer group stands on one shard stream, from
// XINFO GROUPS; the pointers are nil when the stream or the group does not
// exist (Lag also when Redis cannot compute it).
type GroupPosition struct {
	LastDeliveredID *string `json:"lastDeliveredId"`
	Lag             *int64  `json:"lag"`
	Pending         *int64  `json:"pending"`
}

// The targets of OffsetReset.To: the stream's start (every entry is
// delivered again), its end (only entries added later are delivered), just
// after an entry id, just before a time (entries added at or after it are
// delivered), and a number of entries away from the group's position.
const (
	ResetToEarliest  = "EARLIEST"
	ResetToLatest    = "LATEST"
	ResetToID        = "ID"
	ResetToTimestamp = "TIMESTAMP"
	ResetToBy        = "BY"
)

// OffsetReset is the body of POST …/offsets/reset: where To moves the
// group on Shards (empty: every shard). To is ResetToEarliest,
// ResetToLatest, ResetToID (with EntryID), ResetToTimestamp (with
// TimestampMs) or ResetToBy (By entries forward, or back when negative),
// case-insensitive. Force sets the positions at once,
// racing members reading the shards (without it the reset is live:
// group.LiveReset); DryRun changes nothing (the answer is a ResetPreview).
type OffsetReset struct {
	To          string `json:"to"`
	EntryID     string `json:"entryId,omitempty"`
	TimestampMs int64  `json:"timestampMs,omitempty"`
	Shards      []int  `json:"shards"`
	By          int64  `json:"by,omitempty"`
	Force       bool   `json:"force"`
	DryRun      bool   `json:"dryRun,omitempty"`
	RequestedBy string `json:"requestedBy"`
	Reason      string `json:"reason"`
}

// OffsetResetResult is the answer of a forced offset reset: each shard's
// position before and after, and the members that held it (they raced the
// reset).
type OffsetResetResult struct {
	StreamPrefix  string             `json:"streamPrefix"`
	ConsumerGroup string             `json:"consumerGroup"`
	To            string             `json:"to"`
	Forced        bool               `json:"forced"`
	Shards        []OffsetResetShard `json:"shards"`
}

// OffsetResetShard is one shard of OffsetResetResult.
type OffsetResetShard struct {
	ShardIndex int           `json:"shardIndex"`
	StreamKey  string        `json:"streamKey"`
	HeldBy     []string      `json:"heldBy"`
	Before     GroupPosition `json:"before"`
	After      GroupPosition `json:"after"`
}

// ResetPreview is the answer of a dry run (OffsetReset.DryRun): per shard,
// the position before and the one the reset would set, the entries it
// would deliver again or skip, and the members that would pause (they hold
// the shard now). DryRun is always true.
type ResetPreview struct {
	StreamPrefix  string              `json:"streamPrefix"`
	ConsumerGroup string              `json:"consumerGroup"`
	To            string              `json:"to"`
	DryRun        bool                `json:"dryRun"`
	Shards        []ResetPreviewShard `json:"shards"`
}

// ResetPreviewShard is one shard of ResetPreview. CountCapped says
// Redelivered or Skipped stopped counting at the server's cap
// (streams.MaxPlanCount).
type ResetPreviewShard struct {
	ShardIndex  int            `json:"shardIndex"`
	StreamKey   string         `json:"streamKey"`
	WouldPause  []string       `json:"wouldPause"`
	Before      GroupPosition  `json:"before"`
	After       PreviewedAfter `json:"after"`
	Redelivered int64          `json:"redelivered"`
	Skipped     int64          `json:"skipped"`
	CountCapped bool           `json:"countCapped"`
}

// PreviewedAfter is the position a reset would set.
type PreviewedAfter struct {
	LastDeliveredID string `json:"lastDeliveredId"`
}
