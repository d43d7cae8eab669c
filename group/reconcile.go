package group

import "slices"

// reconcile brings the target assignment up to date (docs/protocol.md §5): when the group
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

// assign recomputes the targets of the live members with the sticky
// assignor and drops the entries of members that are no longer live, and
// records every shard whose target owner changed in the history. The
// deadline bound stays valid: a target change starts no deadline (the
// member's own answer does) and moves none.
func (t *tx) assign() {
	g := t.g
	before := g.targetOwners()
	defer t.recordMoves(before, nil)
	live := g.LiveMemberIDs()
	var gone []string
	for id := range g.Targets {
		if m := g.Members[id]; m == nil || !m.State.Live() {
			gone = append(gone, id)
		}
	}
	slices.Sort(gone) // records in a reproducible order
	for _, id := range gone {
		t.apply(TargetRemovedRecord{MemberID: id})
	}
	prev := g.livePrev(live)
	var changed []int
	var sets [][]int
	if g.AssignorOf() == AssignorWork {
		changed, sets = t.assignWork(prev)
	} else {
		changed, sets = assignUnpaused(g.ShardCount, g.Paused(), prev)
	}
	t.setTargets(live, changed, sets)
}

// setTargets applies the targets an assignor computed for the live members
// (live[changed[j]] gets sets[j]) and gives every live member without a
// target entry an empty one.
func (t *tx) setTargets(live []string, changed []int, sets [][]int) {
	g := t.g
	ids := make([]string, len(changed))
	for j, i := range changed {
		ids[j] = live[i]
	}
	for j, id := range ids {
		t.apply(TargetRecord{MemberID: id, Shards: sets[j]})
	}
	for _, id := range live {
		if _, ok := g.Targets[id]; !ok {
			t.apply(TargetRecord{MemberID: id, Shards: nil})
		}
	}
}

// state derives the group state (docs/protocol.md §5): EMPTY without live members, STABLE
// when every live member's current set equals its target and nothing is
// blocked, RECONCILING otherwise.
func (t *tx) state() GroupState {
	switch idx := &t.g.idx; {
	case len(idx.liveIDs) == 0:
		return GroupEmpty
	case idx.mismatched == 0 && t.g.shardIndex().foreign == 0:
		return GroupStable
	default:
		return GroupReconciling
	}
}
