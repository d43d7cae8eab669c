package group

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group/assignor"
)

// The answers of the group's reads and admin commands, and their
// projections into the wire views of package contract (the only code that
// builds a group's views). Domain types carry no JSON: a view is built
// here, field by field.

// Routing is what producers need to route keys to shards (docs/protocol.md §2.4).
type Routing struct {
	StreamPrefix    string
	ConsumerGroup   string
	MetadataVersion int64
	ShardCount      int
}

// Migrations is a group's migration history (docs/protocol.md §2.6 /migrations).
type Migrations struct {
	// List holds every migration ordered by creation time.
	List []Migration
	// ActiveReshardingID names the active migration, nil when none is.
	ActiveReshardingID *string
}

// StreamScale is the outcome of a stream scale (docs/protocol.md §2.5 #3):
// the groups of the prefix, sorted, each with the migration of the same
// index in Migrations.
type StreamScale struct {
	StreamPrefix           string
	TargetShardCount       int
	AffectedConsumerGroups []string
	Migrations             []Migration
}

// View returns the GroupResponse projection (docs/protocol.md §2.2).
func (g *Group) View() contract.GroupView {
	v := contract.GroupView{
		StreamPrefix:             g.StreamPrefix,
		ConsumerGroup:            g.ConsumerGroup,
		State:                    contract.GroupState(g.State),
		GroupEpoch:               g.GroupEpoch,
		AssignmentEpoch:          g.AssignmentEpoch,
		MetadataVersion:          g.MetadataVersion,
		ShardCount:               g.ShardCount,
		TargetAssignmentSummary:  map[string]int{},
		CurrentAssignmentSummary: map[string]int{},
		PausedShards:             g.Paused(),
		Assignor:                 g.AssignorOf(),
	}
	if m := g.activeMigration(); m != nil {
		mv := m.View()
		v.ActiveMigration = &mv
	}
	if r := g.ActiveReset(); r != nil {
		rv := r.View()
		v.ActiveReset = &rv
	}
	if v.Assignor == AssignorWork {
		w := g.WorkView()
		v.Work = &w
	}
	for _, id := range g.idx.liveIDs {
		v.TargetAssignmentSummary[id] = len(g.Targets[id])
	}
	for id, m := range g.Members {
		if m.Holds() && len(m.CurrentAssignment) > 0 {
			v.CurrentAssignmentSummary[id] = len(m.CurrentAssignment)
		}
	}
	return v
}

// MemberList returns copies of every member record sorted by member id.
func (g *Group) MemberList() []Member {
	out := make([]Member, 0, len(g.Members))
	for _, id := range sortedMemberIDs(g) {
		out = append(out, *g.Members[id])
	}
	return out
}

// MemberViews projects members (MemberList) into the body of GET
// …/members.
func MemberViews(members []Member) contract.MemberList {
	out := contract.MemberList{Members: make([]contract.Member, len(members))}
	for i := range members {
		out.Members[i] = members[i].View()
	}
	return out
}

// View returns the member record as GET …/members shows it.
func (m *Member) View() contract.Member {
	progress := []contract.ShardProgress(m.ShardProgress)
	if progress == nil {
		progress = []contract.ShardProgress{}
	}
	return contract.Member{
		MemberID:                  m.MemberID,
		MemberName:                m.MemberName,
		State:                     contract.MemberState(m.State),
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
	}
}

// Consumption flattens the shard progress members (of the group key)
// reported into the body of GET …/consumption, sorted by member id then
// shard index. A row without a reported stream key gets the shard's key
// "P:i".
func Consumption(key Key, members []Member) contract.Consumption {
	rows := []contract.ProgressRow{}
	for _, m := range members {
		for _, p := range m.ShardProgress {
			sk := contract.StreamKey(key.StreamPrefix, p.Shard.ShardIndex)
			if p.StreamKey != nil {
				sk = *p.StreamKey
			}
			rows = append(rows, contract.ProgressRow{
				StreamPrefix:    key.StreamPrefix,
				ConsumerGroup:   key.ConsumerGroup,
				MemberID:        m.MemberID,
				MemberName:      m.MemberName,
				MemberState:     contract.MemberState(m.State),
				Shard:           p.Shard,
				StreamKey:       sk,
				LastDeliveredID: p.LastDeliveredID,
				LastAckedID:     p.LastAckedID,
				PendingCount:    p.PendingCount,
				UpdatedAt:       p.UpdatedAt,
			})
		}
	}
	slices.SortStableFunc(rows, func(x, y contract.ProgressRow) int {
		return cmp.Or(cmp.Compare(x.MemberID, y.MemberID), cmp.Compare(x.Shard.ShardIndex, y.Shard.ShardIndex))
	})
	return contract.Consumption{Progress: rows}
}

// Assignments returns the /assignments projection (docs/protocol.md §2.6);
// its invariant texts are those of Violations.
func (g *Group) Assignments() contract.AssignmentsView {
	v := contract.AssignmentsView{
		TargetAssignment:    make(map[string]contract.ShardSet, len(g.Targets)),
		CurrentAssignments:  make(map[string]contract.ShardSet, len(g.Members)),
		RevokeProgress:      map[string]contract.ShardSet{},
		InvariantViolations: ViolationTexts(g.Violations()),
		PausedShards:        g.Paused(),
		WorkView:            g.WorkView(),
	}
	for id, t := range g.Targets {
		v.TargetAssignment[id] = t
	}
	for id, m := range g.Members {
		v.CurrentAssignments[id] = m.CurrentAssignment
		if len(m.Revoking) > 0 {
			v.RevokeProgress[id] = m.Revoking
		}
	}
	return v
}

// WorkView returns how the group's work is spread: its assignor, each
// shard's weight (nil until measured, for a group assigned by work only)
// and each live member's load.
func (g *Group) WorkView() contract.WorkView {
	v := contract.WorkView{Assignor: g.AssignorOf()}
	if !g.Exists() {
		return v
	}
	w := g.weights()
	if g.workWeights() != nil {
		v.ShardWeights = w
		v.MeasuredAt = g.Meta.Work.MeasuredAt
	}
	live := g.LiveMemberIDs()
	caps := g.capacity()
	prev := g.livePrev(live)
	var total, totalCap float64
	loads := make([]float64, len(live))
	for i, set := range prev {
		for _, s := range set {
			if s < len(w) {
				loads[i] += w[s]
			}
		}
		total += loads[i]
		totalCap += caps[i]
	}
	v.Imbalance = round2(assignor.Imbalance(w, caps, prev))
	if len(live) > 0 {
		v.MemberLoads = make(map[string]contract.MemberLoad, len(live))
	}
	for i, id := range live {
		rel := 0.0
		if total > 0 {
			rel = loads[i] / caps[i] / (total / totalCap)
		}
		v.MemberLoads[id] = contract.MemberLoad{Load: round2(loads[i]), Capacity: int(caps[i]), RelativeLoad: round2(rel)}
	}
	if v.ShardWeights != nil {
		v.ShardWeights = slices.Clone(v.ShardWeights)
		for s := range v.ShardWeights {
			v.ShardWeights[s] = round2(v.ShardWeights[s])
		}
	}
	return v
}

func round2(x float64) float64 { return math.Round(x*100) / 100 }

// View returns the migration as the wire shows it (docs/protocol.md §6.1).
func (m Migration) View() contract.Migration {
	return contract.Migration{
		ReshardingID:   m.ReshardingID,
		FromShardCount: m.FromShardCount,
		ToShardCount:   m.ToShardCount,
		State:          contract.MigrationState(m.State),
		CreatedAt:      m.CreatedAt,
		UpdatedAt:      m.UpdatedAt,
	}
}

// migrationViews projects ms, [] when there are none.
func migrationViews(ms []Migration) []contract.Migration {
	out := make([]contract.Migration, len(ms))
	for i, m := range ms {
		out[i] = m.View()
	}
	return out
}

// View returns the body of GET …/migrations.
func (m Migrations) View() contract.MigrationList {
	return contract.MigrationList{Migrations: migrationViews(m.List), ActiveReshardingID: m.ActiveReshardingID}
}

// View returns the 202 body of POST /streams/{P}/scale.
func (s StreamScale) View() contract.StreamScaleView {
	groups := s.AffectedConsumerGroups
	if groups == nil {
		groups = []string{}
	}
	return contract.StreamScaleView{
		StreamPrefix:           s.StreamPrefix,
		TargetShardCount:       s.TargetShardCount,
		AffectedConsumerGroups: groups,
		Migrations:             migrationViews(s.Migrations),
	}
}

// View returns the producer-routing answer (docs/protocol.md §2.4): the
// stream key and Redis Cluster slot of every shard.
func (r Routing) View() contract.RoutingView {
	shards := make([]contract.RoutingShard, r.ShardCount)
	for i := range shards {
		k := contract.StreamKey(r.StreamPrefix, i)
		shards[i] = contract.RoutingShard{ShardIndex: i, StreamKey: k, RedisSlot: contract.Slot(k)}
	}
	return contract.RoutingView{
		StreamPrefix:     r.StreamPrefix,
		ConsumerGroup:    r.ConsumerGroup,
		MetadataVersion:  r.MetadataVersion,
		ShardCount:       r.ShardCount,
		StreamKeyPattern: contract.KeyPattern(r.StreamPrefix),
		Shards:           shards,
	}
}

// View returns the live reset as the wire shows it.
func (r *LiveReset) View() contract.LiveReset {
	var shards []contract.ShardReset // null when r's are
	if r.Shards != nil {
		shards = make([]contract.ShardReset, len(r.Shards))
	}
	for i, s := range r.Shards {
		shards[i] = contract.ShardReset{ShardIndex: s.ShardIndex, PausedFrom: s.PausedFrom, SetID: s.SetID, Before: s.Before, After: s.After}
	}
	t := r.Target
	return contract.LiveReset{
		ResetID:     r.ResetID,
		State:       r.State,
		Target:      contract.ResetTarget{To: t.To, EntryID: t.EntryID, TimestampMs: t.TimestampMs, By: t.By},
		Shards:      shards,
		RequestedBy: r.RequestedBy,
		Reason:      r.Reason,
		Error:       r.Error,
		CreatedAt:   r.CreatedAt,
		ApplyingAt:  r.ApplyingAt,
		UpdatedAt:   r.UpdatedAt,
	}
}

// ResetViews projects resets into the body of GET …/offsets/resets.
func ResetViews(resets []LiveReset) contract.ResetList {
	out := contract.ResetList{Resets: make([]contract.LiveReset, len(resets))}
	for i := range resets {
		out.Resets[i] = resets[i].View()
	}
	return out
}

// PausedView returns the paused shards and who still holds them.
func (g *Group) PausedView() contract.PausedView {
	v := contract.PausedView{PausedShards: g.PausedShards.Below(g.ShardCount), Pausing: g.holdersOf(g.Paused())}
	if v.PausedShards == nil {
		v.PausedShards = contract.ShardSet{}
	}
	v.ResetShards = contract.ShardSet{}
	if r := g.ActiveReset(); r != nil {
		v.ResetShards = r.ShardIndexes()
	}
	return v
}

// ViolationKind names which invariant a Violation breaks.
type ViolationKind string

const (
	UnknownTargetMember    ViolationKind = "UNKNOWN_TARGET_MEMBER"
	NoTargetOwner          ViolationKind = "NO_TARGET_OWNER"
	DuplicateTargetOwners  ViolationKind = "DUPLICATE_TARGET_OWNERS"
	DuplicateCurrentOwners ViolationKind = "DUPLICATE_CURRENT_OWNERS"
	EpochMismatch          ViolationKind = "EPOCH_MISMATCH"
)

// Violation is one broken invariant: its kind and the docs/protocol.md §2.6 text the
// /assignments view shows.
type Violation struct {
	Kind ViolationKind
	Text string
}

func (v Violation) String() string { return v.Text }

// ViolationTexts returns the texts of vs, [] when there are none.
func ViolationTexts(vs []Violation) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.Text
	}
	return out
}

// Violations checks the invariants of docs/protocol.md §2.6 and ours (no shard in the
// current sets of two owners). It returns none when all hold.
func (g *Group) Violations() []Violation {
	var out []Violation
	add := func(kind ViolationKind, format string, args ...any) {
		out = append(out, Violation{Kind: kind, Text: fmt.Sprintf(format, args...)})
	}
	anyActive := false
	for _, m := range g.Members {
		anyActive = anyActive || m.State == MemberActive
	}
	targetOwners := map[int][]string{}
	for _, id := range slices.Sorted(mapsKeys(g.Targets)) {
		if g.Members[id] == nil {
			add(UnknownTargetMember, "target assignment references unknown member %s", id)
		}
		for _, s := range g.Targets[id] {
			targetOwners[s] = append(targetOwners[s], id)
		}
	}
	currentOwners := map[int][]string{}
	for _, id := range sortedMemberIDs(g) {
		if m := g.Members[id]; m.Holds() {
			for _, s := range m.CurrentAssignment {
				currentOwners[s] = append(currentOwners[s], id)
			}
		}
	}
	paused := g.Paused()
	for s := 0; s < g.ShardCount; s++ {
		switch owners := targetOwners[s]; {
		case len(owners) == 0 && anyActive && !paused.Contains(s):
			add(NoTargetOwner, "readable shard ShardId(shardIndex=%d) has no target owner", s)
		case len(owners) > 1:
			add(DuplicateTargetOwners, "readable shard ShardId(shardIndex=%d) has duplicate target owners [%s]", s, strings.Join(owners, ", "))
		}
	}
	for _, s := range slices.Sorted(mapsKeys(currentOwners)) {
		if owners := currentOwners[s]; len(owners) > 1 {
			add(DuplicateCurrentOwners, "shard ShardId(shardIndex=%d) has duplicate current owners [%s]", s, strings.Join(owners, ", "))
		}
	}
	if g.State != GroupEmpty && g.AssignmentEpoch != g.GroupEpoch {
		add(EpochMismatch, "assignmentEpoch %d does not match groupEpoch %d", g.AssignmentEpoch, g.GroupEpoch)
	}
	return out
}

func mapsKeys[K comparable, V any](m map[K]V) func(func(K) bool) {
	return func(yield func(K) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// HistoryView projects the entries of the group's history q selects
// (HistoryOf) into GET GroupHistory's body.
func (g *Group) HistoryView(q HistoryQuery) contract.HistoryView {
	changes := g.HistoryOf(q)
	v := contract.HistoryView{StreamPrefix: g.StreamPrefix, ConsumerGroup: g.ConsumerGroup, Entries: make([]contract.HistoryEntry, len(changes))}
	for i, c := range changes {
		e := contract.HistoryEntry{At: c.At, GroupEpoch: c.Epoch, Shard: int(c.Shard), Cause: c.Cause.Name()}
		if c.GroupLevel() {
			e.FromCoordinator, e.ToCoordinator = c.From, c.To
		} else {
			e.FromMember, e.ToMember = c.From, c.To
		}
		if w := c.Work; w != nil {
			e.Weights = &contract.MoveWeights{ShardWeight: widen(w.Weight), FromLoad: widen(w.FromLoad), ToLoad: widen(w.ToLoad)}
		}
		v.Entries[i] = e
	}
	return v
}

// widen returns the float64 whose shortest form is f's (2.3, not the
// 2.299999952316284 that float64(f) prints).
func widen(f float32) float64 {
	w, _ := strconv.ParseFloat(strconv.FormatFloat(float64(f), 'g', -1, 32), 64)
	return w
}
