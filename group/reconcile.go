package group

import "github.com/redis-stream-coordinator/coordinator/group/assignor"

// reconcile brings the target assignment up to date (§5): when the group
// epoch moved past the assignment epoch the sticky assignor recomputes the
// targets of the live members; then assignmentEpoch := groupEpoch and the
// group state is derived. Targets only change on a G bump, so a steady
// heartbeat costs O(1) here.
func (t *tx) reconcile() {
	g := t.g
	meta := g.Meta
	if g.AssignmentEpoch < g.GroupEpoch {
		t.assign()
		meta = g.Meta
		meta.AssignmentEpoch = g.GroupEpoch
	}
	meta.State = t.state()
	if meta.State != g.State || meta.AssignmentEpoch != g.AssignmentEpoch {
		t.setMeta(meta)
	}
}

// assign recomputes the targets. Deadlines then need a full re-check, so the
// deadline bound becomes unknown.
func (t *tx) assign() {
	g := t.g
	prev := make(map[string][]int, len(g.Targets))
	for id, set := range g.Targets {
		prev[id] = set
	}
	live := g.LiveMemberIDs()
	next, changed := assignor.Assign(g.ShardCount, live, prev)
	for id := range g.Targets {
		if _, ok := next[id]; !ok {
			t.apply(TargetRemovedRecord{MemberID: id})
		}
	}
	for _, id := range changed {
		t.apply(TargetRecord{MemberID: id, Shards: next[id]})
	}
	for _, id := range live {
		if _, ok := g.Targets[id]; !ok {
			t.apply(TargetRecord{MemberID: id, Shards: next[id]})
		}
	}
	g.idx.nextDeadlineAt = 0
}

// state derives the group state (§5): EMPTY without live members, STABLE
// when every live member's current set equals its target and nothing is
// blocked, RECONCILING otherwise.
func (t *tx) state() GroupState {
	switch idx := &t.g.idx; {
	case len(idx.liveIDs) == 0:
		return GroupEmpty
	case idx.mismatched == 0 && idx.foreign == 0:
		return GroupStable
	default:
		return GroupReconciling
	}
}
