package group

import (
	"slices"
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
)

// Cause is why a shard's target owner changed: the event behind the G
// bump whose reassignment moved it (docs/observability.md, "Assignment
// history"); CauseHandover is why the group changed coordinators. The
// zero Cause names no event.
type Cause uint8

const (
	// CauseJoin: a member joined or rejoined (docs/protocol.md §4.2 step 8).
	CauseJoin Cause = iota + 1
	// CauseLeave: a member left (memberEpoch −1).
	CauseLeave
	// CauseLeaseExpired: a member's lease ran out (docs/protocol.md §4.6).
	CauseLeaseExpired
	// CauseFenced: a member was fenced, for an invalid report
	// (docs/protocol.md §4.4) or a rebalance timeout (§4.6).
	CauseFenced
	// CauseWorkRebalance: the work balancer moved the shard (work.go); the
	// change carries the weights that triggered it.
	CauseWorkRebalance
	// CausePause and CauseResume: an operator paused or resumed shards.
	CausePause
	CauseResume
	// CauseLiveReset: a live offset reset paused its shards or ended.
	CauseLiveReset
	// CauseScale: a resharding migration changed the shard count
	// (activation, rollback) or moved on (docs/protocol.md §6).
	CauseScale
	// CauseHandover: another coordinator took the group over (TakeOver);
	// its Change is group-level.
	CauseHandover
)

// causeNames are the wire names of the causes, indexed by Cause.
var causeNames = [...]contract.MoveCause{
	CauseJoin:          contract.MoveJoin,
	CauseLeave:         contract.MoveLeave,
	CauseLeaseExpired:  contract.MoveLeaseExpired,
	CauseFenced:        contract.MoveFenced,
	CauseWorkRebalance: contract.MoveWorkRebalance,
	CausePause:         contract.MovePause,
	CauseResume:        contract.MoveResume,
	CauseLiveReset:     contract.MoveLiveReset,
	CauseScale:         contract.MoveScale,
	CauseHandover:      contract.MoveHandover,
}

// Name returns the cause's wire name ("" for the zero Cause).
func (c Cause) Name() contract.MoveCause {
	if int(c) < len(causeNames) {
		return causeNames[c]
	}
	return ""
}

// ParseCause returns the cause whose wire name is name.
func ParseCause(name contract.MoveCause) (Cause, bool) {
	for c, n := range causeNames {
		if n != "" && n == name {
			return Cause(c), true
		}
	}
	return 0, false
}

// Change is one assignment decision of the group's history: at At, in
// group epoch Epoch, shard Shard's target owner went From → To ("" for
// nobody: a paused shard, a shard added or removed by a scale, a group
// without live members) because of Cause. Work holds the weights behind a
// work-rebalance, nil for every other cause. A handover is group-level:
// its Shard is contract.GroupLevelShard and From and To are the ids of the
// coordinators that held the group and took it over. A Change is
// immutable once built; From and To share the strings of the ids they
// name.
type Change struct {
	At       contract.Instant
	Epoch    int64
	Shard    int32
	Cause    Cause
	From, To string
	Work     *WorkEvidence
}

// WorkEvidence is what made the work balancer move a shard: the shard's
// smoothed weight and the loads (weight per unit of capacity) of the
// member it left and of the one it joined, before the move.
type WorkEvidence struct {
	Weight, FromLoad, ToLoad float32
}

// History bounds, the defaults of Settings.HistoryMaxEntries and
// HistoryMaxAge (coordination.history in the configuration).
const (
	DefaultHistoryMaxEntries = 128
	DefaultHistoryMaxAge     = 24 * time.Hour
)

// targetOwners returns the target owner of each shard, indexed by shard
// ("" for none), as a copy that later target records leave unchanged.
func (g *Group) targetOwners() []string { return slices.Clone(g.ownerTable()) }

// ownerTable is the per-shard index's target owners; a group without
// target entries has none, and gets no per-shard index built for it.
func (g *Group) ownerTable() []string {
	if g.idx.shards == nil && len(g.Targets) == 0 {
		return nil
	}
	return g.shardIndex().targetOwner.dense
}

// recordMoves appends to the history one Change per shard whose target
// owner differs from before (targetOwners taken before the targets
// changed), in shard order, at the current group epoch, with the cause
// of the latest G bump. work, when not nil, gives a work-rebalance's
// evidence for a shard moving from → to.
func (t *tx) recordMoves(before []string, work func(shard int, from, to string) *WorkEvidence) {
	after := t.g.ownerTable()
	var moves []Change
	for s := range max(len(before), len(after)) {
		from, to := ownerAt(before, s), ownerAt(after, s)
		if from == to {
			continue
		}
		c := Change{At: t.now, Epoch: t.g.GroupEpoch, Shard: int32(s), Cause: t.cause, From: from, To: to}
		if work != nil {
			c.Work = work(s, from, to)
		}
		moves = append(moves, c)
	}
	if len(moves) == 0 {
		return
	}
	history := appendHistory(t.g.History, moves, t.now, t.s)
	if len(history)+len(t.g.History) == 0 {
		return // no history kept
	}
	meta := t.g.Meta
	meta.History = history
	t.setMeta(meta)
}

// ownerAt is owners[s], "" beyond the slice.
func ownerAt(owners []string, s int) string {
	if s < len(owners) {
		return owners[s]
	}
	return ""
}

// appendHistory returns a new slice (nil when empty): the entries of old
// younger than s.HistoryMaxAge at now (when it is positive), then add,
// keeping the last s.HistoryMaxEntries (none when it is ≤ 0). old is never
// modified: a Meta's history is shared by every copy of the group it was
// applied to.
func appendHistory(old, add []Change, now contract.Instant, s Settings) []Change {
	keep := old
	if s.HistoryMaxAge > 0 {
		cut := now.Add(-s.HistoryMaxAge)
		i := slices.IndexFunc(keep, func(c Change) bool { return c.At >= cut })
		if i < 0 {
			i = len(keep)
		}
		keep = keep[i:]
	}
	if n := len(keep) + len(add) - max(s.HistoryMaxEntries, 0); n > 0 {
		drop := min(n, len(keep))
		keep, add = keep[drop:], add[n-drop:]
	}
	if len(keep)+len(add) == 0 {
		return nil
	}
	out := make([]Change, 0, len(keep)+len(add))
	return append(append(out, keep...), add...)
}

// HistoryQuery selects entries of a group's history: those of one shard
// (when Shard is set; group-level entries are of none) at or after Since
// (when not zero).
type HistoryQuery struct {
	Shard *int
	Since contract.Instant
}

// HistoryOf returns the entries of the group's history q selects, oldest
// first.
func (g *Group) HistoryOf(q HistoryQuery) []Change {
	var out []Change
	for _, c := range g.History {
		if c.At < q.Since || (q.Shard != nil && int(c.Shard) != *q.Shard) {
			continue
		}
		out = append(out, c)
	}
	return out
}

// GroupLevel reports whether c concerns the group rather than a shard (a
// handover).
func (c *Change) GroupLevel() bool { return c.Shard == contract.GroupLevelShard }

// TakeOver records coordinator as the group's holder (Meta.Coordinator):
// the coordinator whose actor took the group as its owner. When another
// coordinator held it, the history gains one group-level Change with
// cause handover from that coordinator to this one, at the current group
// epoch; a group that names no holder (stored before holders were
// recorded, or being created) gets one without an entry. An empty
// coordinator (no cluster), a group held by coordinator already and a
// group that does not exist change nothing. It answers whether an entry
// was recorded.
func (g *Group) TakeOver(now contract.Instant, s Settings, coordinator string) Result[bool] {
	prev := g.Coordinator
	if coordinator == "" || prev == coordinator || !g.Exists() {
		return Result[bool]{}
	}
	t := newTx(g, s, now)
	meta := g.Meta
	meta.Coordinator = coordinator
	if prev != "" {
		c := Change{At: now, Epoch: g.GroupEpoch, Shard: contract.GroupLevelShard, Cause: CauseHandover, From: prev, To: coordinator}
		meta.History = appendHistory(g.History, []Change{c}, now, s)
	}
	t.setMeta(meta)
	return result(t, prev != "")
}
