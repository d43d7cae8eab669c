package group

import "github.com/redis-stream-coordinator/coordinator/contract"

// Record is one change to a group. Handlers express every change as records
// and apply them through (*Group).Apply, the only code that changes a Group;
// they return them in their Result. The actor commits the same records to
// the store and replays them onto its committed copy, so live traffic and
// recovery share one path.
//
// Contract: a record's values are immutable once built (ShardSets, maps and
// slices inside it are never modified afterwards), so one record may be
// applied to several Group copies.
type Record interface{ record() }

// MetaRecord sets the group-level fields. Applied to an empty Group it
// creates the group.
type MetaRecord struct{ Meta Meta }

// MemberRecord upserts one member record. LivenessOnly is true when only the
// liveness fields (name, capacity, workers, progress, lastHeartbeatAt, lease)
// differ from the previous value: a store may persist such records coalesced.
// Event names the decision the record carries out, if it is one that is
// counted (metrics count the records where a decision is made, not states).
// Member is immutable once the record is built: every Group copy the record
// is applied to stores that same value, so copies share their members.
type MemberRecord struct {
	Member       *Member
	LivenessOnly bool
	Event        MemberEvent
}

// MemberEvent is a counted decision about a member.
type MemberEvent uint8

const (
	NoMemberEvent MemberEvent = iota
	// MemberExpiredEvent: the member's lease ran out (docs/protocol.md §4.6).
	MemberExpiredEvent
	// MemberFencedEvent: the member was fenced (invalid report, docs/protocol.md §4.4, or
	// rebalance timeout, docs/protocol.md §4.6).
	MemberFencedEvent
)

// MemberRemovedRecord deletes a member record (pruning).
type MemberRemovedRecord struct{ MemberID string }

// TargetRecord sets one member's target assignment (an empty set is kept).
type TargetRecord struct {
	MemberID string
	Shards   contract.ShardSet
}

// TargetRemovedRecord drops one member's target entry.
type TargetRemovedRecord struct{ MemberID string }

// DeletedRecord deletes the whole group.
type DeletedRecord struct{}

// scanned sets the bound of the next lease expiry or prune time that a scan
// of every member found; deadlinesScanned that of the next rebalance
// deadline. They change only the index, which is never stored, so
// handlers apply them without returning them.
type (
	scanned          struct{ next contract.Instant }
	deadlinesScanned struct{ next contract.Instant }
)

func (MetaRecord) record()          {}
func (MemberRecord) record()        {}
func (MemberRemovedRecord) record() {}
func (TargetRecord) record()        {}
func (TargetRemovedRecord) record() {}
func (DeletedRecord) record()       {}
func (scanned) record()             {}
func (deadlinesScanned) record()    {}
