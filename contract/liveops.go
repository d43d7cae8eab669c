package contract

// The live group operations' wire (docs/operations.md): pausing and
// resuming shards, and live offset resets as the coordinator shows them.

// PauseRequest is the body of POST GroupPause and GroupResume: the shards,
// who asks and why.
type PauseRequest struct {
	Shards      []int  `json:"shards"`
	RequestedBy string `json:"requestedBy"`
	Reason      string `json:"reason"`
}

// PausedView is the answer of the pause routes and of GET MonitoringPaused:
// the shards the operator paused, those an active live reset holds paused,
// and the members still holding a paused shard (they are being revoked).
type PausedView struct {
	PausedShards ShardSet            `json:"pausedShards"`
	ResetShards  ShardSet            `json:"resetShards"`
	Pausing      map[string]ShardSet `json:"pausing"`
}

// ResetState is the state of a live reset: PAUSING → APPLYING → DONE, or
// FAILED from PAUSING or APPLYING.
type ResetState string

const (
	ResetPausing  ResetState = "PAUSING"
	ResetApplying ResetState = "APPLYING"
	ResetDone     ResetState = "DONE"
	ResetFailed   ResetState = "FAILED"
)

// Finished reports whether a reset in this state is over: DONE and FAILED
// are final, and its shards are granted again.
func (s ResetState) Finished() bool { return s == ResetDone || s == ResetFailed }

// LiveReset is one live offset reset: the answer of POST GroupOffsetsReset
// without Force or DryRun, of GET MonitoringReset, and each entry of
// ResetList.
type LiveReset struct {
	ResetID     string       `json:"resetId"`
	State       ResetState   `json:"state"`
	Target      ResetTarget  `json:"target"`
	Shards      []ShardReset `json:"shards"`
	RequestedBy string       `json:"requestedBy"`
	Reason      string       `json:"reason,omitempty"`
	// Error says why a FAILED reset failed.
	Error     string  `json:"error,omitempty"`
	CreatedAt Instant `json:"createdAt"`
	// ApplyingAt is when the reset entered APPLYING: from then on no member
	// reads its shards until they are set.
	ApplyingAt Instant `json:"applyingAt"`
	UpdatedAt  Instant `json:"updatedAt"`
}

// ResetTarget is where a live reset moves the group, as OffsetReset gave
// it.
type ResetTarget struct {
	To          string `json:"to"`
	EntryID     string `json:"entryId,omitempty"`
	TimestampMs int64  `json:"timestampMs,omitempty"`
	By          int64  `json:"by,omitempty"`
}

// ShardReset is one shard of a live reset: the members that held it when
// the reset started, the last-delivered id chosen at APPLYING and the
// positions before and after (absent until read).
type ShardReset struct {
	ShardIndex int            `json:"shardIndex"`
	PausedFrom []string       `json:"pausedFrom"`
	SetID      string         `json:"setId,omitempty"`
	Before     *GroupPosition `json:"before,omitempty"`
	After      *GroupPosition `json:"after,omitempty"`
}

// ResetList is the body of GET MonitoringResets: the group's live resets,
// oldest first.
type ResetList struct {
	Resets []LiveReset `json:"resets"`
}
