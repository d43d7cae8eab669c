package group

import (
	"fmt"
	"slices"
	"strings"

	"github.com/redis-stream-coordinator/coordinator/contract"
)

// View returns the GroupResponse projection (docs/protocol.md §2.2).
func (g *Group) View() GroupView {
	v := GroupView{
		StreamPrefix:             g.StreamPrefix,
		ConsumerGroup:            g.ConsumerGroup,
		State:                    g.State,
		GroupEpoch:               g.GroupEpoch,
		AssignmentEpoch:          g.AssignmentEpoch,
		MetadataVersion:          g.MetadataVersion,
		ShardCount:               g.ShardCount,
		ActiveMigration:          g.activeMigration(),
		TargetAssignmentSummary:  map[string]int{},
		CurrentAssignmentSummary: map[string]int{},
		PausedShards:             g.Paused(),
		ActiveReset:              g.ActiveReset(),
		Assignor:                 g.AssignorOf(),
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

// Assignments returns the /assignments projection (docs/protocol.md §2.6) with the invariant
// violations.
func (g *Group) Assignments() AssignmentsView {
	violations := g.Violations()
	v := AssignmentsView{
		TargetAssignment:    make(map[string]contract.ShardSet, len(g.Targets)),
		CurrentAssignments:  make(map[string]contract.ShardSet, len(g.Members)),
		RevokeProgress:      map[string]contract.ShardSet{},
		InvariantViolations: ViolationTexts(violations),
		Violations:          violations,
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
