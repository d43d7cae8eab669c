package persistence

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
)

// The stored documents (docs/protocol.md §8.5), declared here and not by
// the group types they hold, so that the domain and the wire may change
// without changing what is stored. Their fields, in the order they are
// written, and their null and omitempty rules are the stored form: the
// golden documents in testdata pin it byte for byte. Values keep the
// encoding of their contract type (ShardSet, Instant) and the group's
// string enums; every structure is declared here.
//
// Each record is read and written with the same type: the legacy fields of
// the Kotlin server's layout are omitempty and never set when writing, so
// they are read only.

// storedAggregate is a group's aggregate: the group-level fields. As
// written (layout 2) its members and targetAssignments are empty; a legacy
// layout-1 aggregate holds the member records and targets there.
type storedAggregate struct {
	StreamPrefix       string                     `json:"streamPrefix"`
	ConsumerGroup      string                     `json:"consumerGroup"`
	SchemaVersion      *int                       `json:"schemaVersion"`
	StoreRevision      storedRevision             `json:"storeRevision"`
	GroupEpoch         int64                      `json:"groupEpoch"`
	MetadataVersion    int64                      `json:"metadataVersion"`
	AssignmentEpoch    int64                      `json:"assignmentEpoch"`
	State              group.GroupState           `json:"state"`
	ShardCount         *int                       `json:"shardCount"`
	ActiveReshardingID *string                    `json:"activeReshardingId"`
	MetadataCorrection *storedCorrection          `json:"metadataCorrection"`
	CreatedAt          contract.Instant           `json:"createdAt"`
	UpdatedAt          contract.Instant           `json:"updatedAt"`
	PausedShards       contract.ShardSet          `json:"pausedShards,omitempty"`
	LiveResets         []storedReset              `json:"liveResets,omitempty"`
	Assignor           string                     `json:"assignor,omitempty"`
	History            []storedChange             `json:"history,omitempty"`
	Coordinator        string                     `json:"coordinator,omitempty"`
	Migrations         map[string]storedMigration `json:"migrations"` // {} when there are none
	// Members and TargetAssignments are {} as written.
	Members           map[string]json.RawMessage   `json:"members"`
	TargetAssignments map[string]contract.ShardSet `json:"targetAssignments"`

	// Legacy, read only: activeMigrationId stands for activeReshardingId;
	// a missing shardCount is shardCountsByVersion[activeWriteVersion].
	ActiveMigrationID    *string        `json:"activeMigrationId,omitempty"`
	ShardCountsByVersion map[string]int `json:"shardCountsByVersion,omitempty"`
	ActiveWriteVersion   *int           `json:"activeWriteVersion,omitempty"`
}

// storedRevision is the aggregate's storeRevision: written, never read,
// since the store's revision is the one that counts (Decode) and stores
// rewrite it on every write (WithStoreRevision).
type storedRevision Revision

// UnmarshalJSON ignores the stored value, whatever its JSON type.
func (*storedRevision) UnmarshalJSON([]byte) error { return nil }

// storedMigration is one resharding migration.
type storedMigration struct {
	ReshardingID   string               `json:"reshardingId"`
	FromShardCount *int                 `json:"fromShardCount"`
	ToShardCount   *int                 `json:"toShardCount"`
	State          group.MigrationState `json:"state"`
	CreatedAt      contract.Instant     `json:"createdAt"`
	UpdatedAt      contract.Instant     `json:"updatedAt"`

	// Legacy, read only: migrationId stands for reshardingId; a missing
	// shard count is shardCountsByVersion[fromVersion or toVersion].
	MigrationID *string `json:"migrationId,omitempty"`
	FromVersion *int    `json:"fromVersion,omitempty"`
	ToVersion   *int    `json:"toVersion,omitempty"`
}

// storedChange is one entry of the assignment history: at (Unix epoch
// milliseconds, a number to keep the aggregate small), the group epoch,
// the shard, the cause's wire name, the members it left and joined
// (omitted when nobody; a handover's shard is -1 and from and to are the
// coordinators it left and joined) and a work-rebalance's weights.
type storedChange struct {
	At      int64              `json:"at"`
	Epoch   int64              `json:"epoch"`
	Shard   int32              `json:"shard"`
	Cause   contract.MoveCause `json:"cause"`
	From    string             `json:"from,omitempty"`
	To      string             `json:"to,omitempty"`
	Weights *storedWeights     `json:"weights,omitempty"`
}

// storedWeights is a work-rebalance's evidence.
type storedWeights struct {
	Shard    float32 `json:"shard"`
	FromLoad float32 `json:"fromLoad"`
	ToLoad   float32 `json:"toLoad"`
}

func storeChange(c *group.Change) storedChange {
	out := storedChange{At: int64(c.At), Epoch: c.Epoch, Shard: c.Shard, Cause: c.Cause.Name(), From: c.From, To: c.To}
	if w := c.Work; w != nil {
		out.Weights = &storedWeights{Shard: w.Weight, FromLoad: w.FromLoad, ToLoad: w.ToLoad}
	}
	return out
}

// change returns the history entry of c; a cause this codec does not
// know is an error (the aggregate is corrupt, or written by a newer one).
func (c *storedChange) change() (group.Change, error) {
	cause, ok := group.ParseCause(c.Cause)
	if !ok {
		return group.Change{}, fmt.Errorf("history: unknown cause %q", c.Cause)
	}
	out := group.Change{At: contract.Instant(c.At), Epoch: c.Epoch, Shard: c.Shard, Cause: cause, From: c.From, To: c.To}
	if w := c.Weights; w != nil {
		out.Work = &group.WorkEvidence{Weight: w.Shard, FromLoad: w.FromLoad, ToLoad: w.ToLoad}
	}
	return out, nil
}

// intern returns the string of ids equal to s, adding s when there is none.
func intern(ids map[string]string, s string) string {
	if v, ok := ids[s]; ok {
		return v
	}
	ids[s] = s
	return s
}

// storedCorrection is an open metadata-correction round.
type storedCorrection struct {
	TargetMetadataVersion   int64            `json:"targetMetadataVersion"`
	ObservedMetadataVersion int64            `json:"observedMetadataVersion"`
	RequestedAt             contract.Instant `json:"requestedAt"`
	UpdatedAt               contract.Instant `json:"updatedAt"`
	AcknowledgedMembers     []string         `json:"acknowledgedMembers"`
}

// storedReset is one live offset reset.
type storedReset struct {
	ResetID     string              `json:"resetId"`
	State       contract.ResetState `json:"state"`
	Target      storedResetTarget   `json:"target"`
	Shards      []storedShardReset  `json:"shards"`
	RequestedBy string              `json:"requestedBy"`
	Reason      string              `json:"reason,omitempty"`
	Error       string              `json:"error,omitempty"`
	CreatedAt   contract.Instant    `json:"createdAt"`
	ApplyingAt  contract.Instant    `json:"applyingAt"`
	UpdatedAt   contract.Instant    `json:"updatedAt"`
}

// storedResetTarget is where a live reset moves the group.
type storedResetTarget struct {
	To          string `json:"to"`
	EntryID     string `json:"entryId,omitempty"`
	TimestampMs int64  `json:"timestampMs,omitempty"`
	By          int64  `json:"by,omitempty"`
}

// storedShardReset is one shard of a live reset.
type storedShardReset struct {
	ShardIndex int             `json:"shardIndex"`
	PausedFrom []string        `json:"pausedFrom"`
	SetID      string          `json:"setId,omitempty"`
	Before     *storedPosition `json:"before,omitempty"`
	After      *storedPosition `json:"after,omitempty"`
}

// storedPosition is a consumer group's position on one shard stream.
type storedPosition struct {
	LastDeliveredID *string `json:"lastDeliveredId"`
	Lag             *int64  `json:"lag"`
	Pending         *int64  `json:"pending"`
}

// storedMember is one member document: the member record and, last, the
// member's target entry (null when it has none). A legacy member record
// embedded in the aggregate has no targetAssignment.
type storedMember struct {
	MemberID                  string             `json:"memberId"`
	MemberName                string             `json:"memberName"`
	State                     storedState        `json:"state"`
	MemberEpoch               int64              `json:"memberEpoch"`
	MetadataVersion           int64              `json:"metadataVersion"`
	RuntimeMaxConcurrency     int                `json:"runtimeMaxConcurrency"`
	ActiveConsumerWorkers     int                `json:"activeConsumerWorkers"`
	CurrentAssignment         contract.ShardSet  `json:"currentAssignment"`
	GrantedAssignment         contract.ShardSet  `json:"grantedAssignment"`
	Revoking                  contract.ShardSet  `json:"revoking"`
	LastHeartbeatAt           contract.Instant   `json:"lastHeartbeatAt"`
	MemberLeaseExpiresAt      contract.Instant   `json:"memberLeaseExpiresAt"`
	RebalanceTimeoutMs        int64              `json:"rebalanceTimeoutMs"`
	RebalanceDeadlineAt       contract.Instant   `json:"rebalanceDeadlineAt"`
	ShardProgress             []storedProgress   `json:"shardProgress"` // [] when there is none
	PreviousMemberEpoch       int64              `json:"previousMemberEpoch"`
	PreviousGrantedAssignment contract.ShardSet  `json:"previousGrantedAssignment"`
	GrantEpochs               []int64            `json:"grantEpochs,omitempty"` // aligned with grantedAssignment
	TargetAssignment          *contract.ShardSet `json:"targetAssignment"`
}

// storedState is a stored member state. Decoding shares the constants'
// storage for the states of docs/protocol.md §4.1 instead of holding a
// string per decoded record; any other string is kept as it is, and null
// leaves the state unchanged.
type storedState group.MemberState

// UnmarshalJSON decodes a state (see storedState).
func (s *storedState) UnmarshalJSON(data []byte) error {
	for _, known := range []group.MemberState{group.MemberActive, group.MemberLeaving, group.MemberExpired, group.MemberFenced, group.MemberStarting} {
		if len(data) == len(known)+2 && data[0] == '"' && string(data[1:len(data)-1]) == string(known) {
			*s = storedState(known)
			return nil
		}
	}
	if string(data) == "null" {
		return nil
	}
	var v string
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	*s = storedState(v)
	return nil
}

// storedProgress is a member's report of how far it read one shard.
type storedProgress struct {
	Shard           storedShard      `json:"shard"`
	StreamKey       *string          `json:"streamKey"`
	LastDeliveredID *string          `json:"lastDeliveredId"`
	LastAckedID     *string          `json:"lastAckedId"`
	PendingCount    int64            `json:"pendingCount"`
	UpdatedAt       contract.Instant `json:"updatedAt"`
}

// storedShard names one shard.
type storedShard struct {
	ShardIndex int `json:"shardIndex"`
}

// storeAggregate returns the aggregate of meta at storeRevision rev, with
// empty member and target maps.
func storeAggregate(meta *group.Meta, rev Revision) storedAggregate {
	schema, shards := SchemaVersion, meta.ShardCount
	a := storedAggregate{
		StreamPrefix:       meta.StreamPrefix,
		ConsumerGroup:      meta.ConsumerGroup,
		SchemaVersion:      &schema,
		StoreRevision:      storedRevision(rev),
		GroupEpoch:         meta.GroupEpoch,
		MetadataVersion:    meta.MetadataVersion,
		AssignmentEpoch:    meta.AssignmentEpoch,
		State:              meta.State,
		ShardCount:         &shards,
		ActiveReshardingID: meta.ActiveReshardingID,
		CreatedAt:          meta.CreatedAt,
		UpdatedAt:          meta.UpdatedAt,
		PausedShards:       meta.PausedShards,
		LiveResets:         convert(meta.LiveResets, storeReset),
		Assignor:           meta.Assignor,
		History:            convert(meta.History, storeChange),
		Coordinator:        meta.Coordinator,
		Migrations:         make(map[string]storedMigration, len(meta.Migrations)),
		Members:            map[string]json.RawMessage{},
		TargetAssignments:  map[string]contract.ShardSet{},
	}
	if c := meta.MetadataCorrection; c != nil {
		a.MetadataCorrection = &storedCorrection{
			TargetMetadataVersion:   c.TargetMetadataVersion,
			ObservedMetadataVersion: c.ObservedMetadataVersion,
			RequestedAt:             c.RequestedAt,
			UpdatedAt:               c.UpdatedAt,
			AcknowledgedMembers:     c.AcknowledgedMembers,
		}
	}
	for id, m := range meta.Migrations {
		a.Migrations[id] = storedMigration{
			ReshardingID:   m.ReshardingID,
			FromShardCount: &m.FromShardCount,
			ToShardCount:   &m.ToShardCount,
			State:          m.State,
			CreatedAt:      m.CreatedAt,
			UpdatedAt:      m.UpdatedAt,
		}
	}
	return a
}

// meta returns the group-level fields of a, resolving the legacy aliases
// and shard counts.
func (a *storedAggregate) meta() (group.Meta, error) {
	meta := group.Meta{
		StreamPrefix:       a.StreamPrefix,
		ConsumerGroup:      a.ConsumerGroup,
		GroupEpoch:         a.GroupEpoch,
		MetadataVersion:    a.MetadataVersion,
		AssignmentEpoch:    a.AssignmentEpoch,
		State:              a.State,
		ActiveReshardingID: a.ActiveReshardingID,
		CreatedAt:          a.CreatedAt,
		UpdatedAt:          a.UpdatedAt,
		PausedShards:       a.PausedShards,
		LiveResets:         convert(a.LiveResets, (*storedReset).liveReset),
		Assignor:           a.Assignor,
		Coordinator:        a.Coordinator,
	}
	if c := a.MetadataCorrection; c != nil {
		meta.MetadataCorrection = &group.MetadataCorrection{
			TargetMetadataVersion:   c.TargetMetadataVersion,
			ObservedMetadataVersion: c.ObservedMetadataVersion,
			RequestedAt:             c.RequestedAt,
			UpdatedAt:               c.UpdatedAt,
			AcknowledgedMembers:     c.AcknowledgedMembers,
		}
	}
	if meta.StreamPrefix == "" || meta.ConsumerGroup == "" {
		return meta, fmt.Errorf("aggregate lacks streamPrefix or consumerGroup")
	}
	if len(a.History) > 0 {
		meta.History = make([]group.Change, len(a.History))
		ids := map[string]string{} // one string per distinct member or coordinator id
		for i := range a.History {
			c, err := a.History[i].change()
			if err != nil {
				return meta, err
			}
			c.From, c.To = intern(ids, c.From), intern(ids, c.To)
			meta.History[i] = c
		}
	}
	if a.SchemaVersion != nil && *a.SchemaVersion != SchemaVersion {
		return meta, fmt.Errorf("aggregate schemaVersion %d", *a.SchemaVersion)
	}
	count, err := a.shardCount("shardCount", a.ShardCount, a.ActiveWriteVersion)
	if err != nil {
		return meta, err
	}
	meta.ShardCount = count
	if meta.ActiveReshardingID == nil {
		meta.ActiveReshardingID = a.ActiveMigrationID
	}
	for id, in := range a.Migrations {
		mig := group.Migration{ReshardingID: in.ReshardingID, State: in.State, CreatedAt: in.CreatedAt, UpdatedAt: in.UpdatedAt}
		if mig.ReshardingID == "" && in.MigrationID != nil {
			mig.ReshardingID = *in.MigrationID
		}
		if mig.ReshardingID == "" {
			mig.ReshardingID = id
		}
		if mig.FromShardCount, err = a.shardCount("fromShardCount", in.FromShardCount, in.FromVersion); err != nil {
			return meta, fmt.Errorf("migration %s: %w", id, err)
		}
		if mig.ToShardCount, err = a.shardCount("toShardCount", in.ToShardCount, in.ToVersion); err != nil {
			return meta, fmt.Errorf("migration %s: %w", id, err)
		}
		if meta.Migrations == nil {
			meta.Migrations = map[string]group.Migration{}
		}
		meta.Migrations[id] = mig
	}
	return meta, nil
}

// shardCount returns the stored count, or the legacy count of version in
// shardCountsByVersion.
func (a *storedAggregate) shardCount(field string, stored, version *int) (int, error) {
	if stored != nil {
		return *stored, nil
	}
	if version != nil {
		if n, ok := a.ShardCountsByVersion[strconv.Itoa(*version)]; ok {
			return n, nil
		}
	}
	return 0, fmt.Errorf("%s missing and not derivable from shardCountsByVersion", field)
}

func storeReset(r *group.LiveReset) storedReset {
	return storedReset{
		ResetID: r.ResetID,
		State:   r.State,
		Target: storedResetTarget{
			To: r.Target.To, EntryID: r.Target.EntryID, TimestampMs: r.Target.TimestampMs, By: r.Target.By,
		},
		Shards:      convert(r.Shards, storeShardReset),
		RequestedBy: r.RequestedBy,
		Reason:      r.Reason,
		Error:       r.Error,
		CreatedAt:   r.CreatedAt,
		ApplyingAt:  r.ApplyingAt,
		UpdatedAt:   r.UpdatedAt,
	}
}

func (r *storedReset) liveReset() group.LiveReset {
	return group.LiveReset{
		ResetID: r.ResetID,
		State:   r.State,
		Target: group.ResetTarget{
			To: r.Target.To, EntryID: r.Target.EntryID, TimestampMs: r.Target.TimestampMs, By: r.Target.By,
		},
		Shards:      convert(r.Shards, (*storedShardReset).shardReset),
		RequestedBy: r.RequestedBy,
		Reason:      r.Reason,
		Error:       r.Error,
		CreatedAt:   r.CreatedAt,
		ApplyingAt:  r.ApplyingAt,
		UpdatedAt:   r.UpdatedAt,
	}
}

func storeShardReset(s *group.ShardReset) storedShardReset {
	return storedShardReset{
		ShardIndex: s.ShardIndex, PausedFrom: s.PausedFrom, SetID: s.SetID,
		Before: (*storedPosition)(s.Before), After: (*storedPosition)(s.After),
	}
}

func (s *storedShardReset) shardReset() group.ShardReset {
	return group.ShardReset{
		ShardIndex: s.ShardIndex, PausedFrom: s.PausedFrom, SetID: s.SetID,
		Before: (*contract.GroupPosition)(s.Before), After: (*contract.GroupPosition)(s.After),
	}
}

// storeMember returns the document of member m with its target entry (nil:
// none).
func storeMember(m *group.Member, target *contract.ShardSet) storedMember {
	progress := convert(m.ShardProgress, storeProgress)
	if progress == nil {
		progress = []storedProgress{}
	}
	return storedMember{
		MemberID:                  m.MemberID,
		MemberName:                m.MemberName,
		State:                     storedState(m.State),
		MemberEpoch:               m.MemberEpoch,
		MetadataVersion:           m.MetadataVersion,
		RuntimeMaxConcurrency:     m.RuntimeMaxConcurrency,
		ActiveConsumerWorkers:     m.ActiveConsumerWorkers,
		CurrentAssignment:         m.CurrentAssignment,
		GrantedAssignment:         m.GrantedAssignment,
		Revoking:                  m.Revoking,
		LastHeartbeatAt:           m.LastHeartbeatAt,
		MemberLeaseExpiresAt:      m.MemberLeaseExpiresAt,
		RebalanceTimeoutMs:        m.RebalanceTimeoutMs,
		RebalanceDeadlineAt:       m.RebalanceDeadlineAt,
		ShardProgress:             progress,
		PreviousMemberEpoch:       m.PreviousMemberEpoch,
		PreviousGrantedAssignment: m.PreviousGrantedAssignment,
		GrantEpochs:               m.GrantEpochs,
		TargetAssignment:          target,
	}
}

// member returns the member record of r.
func (r *storedMember) member() *group.Member {
	return &group.Member{
		MemberID:                  r.MemberID,
		MemberName:                r.MemberName,
		State:                     group.MemberState(r.State),
		MemberEpoch:               r.MemberEpoch,
		MetadataVersion:           r.MetadataVersion,
		RuntimeMaxConcurrency:     r.RuntimeMaxConcurrency,
		ActiveConsumerWorkers:     r.ActiveConsumerWorkers,
		CurrentAssignment:         r.CurrentAssignment,
		GrantedAssignment:         r.GrantedAssignment,
		Revoking:                  r.Revoking,
		LastHeartbeatAt:           r.LastHeartbeatAt,
		MemberLeaseExpiresAt:      r.MemberLeaseExpiresAt,
		RebalanceTimeoutMs:        r.RebalanceTimeoutMs,
		RebalanceDeadlineAt:       r.RebalanceDeadlineAt,
		ShardProgress:             convert(r.ShardProgress, (*storedProgress).progress),
		PreviousMemberEpoch:       r.PreviousMemberEpoch,
		PreviousGrantedAssignment: r.PreviousGrantedAssignment,
		GrantEpochs:               r.GrantEpochs,
	}
}

func storeProgress(p *contract.ShardProgress) storedProgress {
	return storedProgress{
		Shard: storedShard{ShardIndex: p.Shard.ShardIndex}, StreamKey: p.StreamKey, LastDeliveredID: p.LastDeliveredID,
		LastAckedID: p.LastAckedID, PendingCount: p.PendingCount, UpdatedAt: p.UpdatedAt,
	}
}

func (p *storedProgress) progress() contract.ShardProgress {
	return contract.ShardProgress{
		Shard: contract.Shard{ShardIndex: p.Shard.ShardIndex}, StreamKey: p.StreamKey, LastDeliveredID: p.LastDeliveredID,
		LastAckedID: p.LastAckedID, PendingCount: p.PendingCount, UpdatedAt: p.UpdatedAt,
	}
}

// convert maps each element of in through f; nil stays nil and empty
// stays empty, so that null and [] are written and read back as they were.
func convert[S ~[]T, T, U any](in S, f func(*T) U) []U {
	if in == nil {
		return nil
	}
	out := make([]U, len(in))
	for i := range in {
		out[i] = f(&in[i])
	}
	return out
}
