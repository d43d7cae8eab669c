package group

import (
	"slices"

	"github.com/redis-stream-coordinator/coordinator/contract"
)

// tx is the working context of one handler call: it applies records to the
// group as they are produced (so later steps see earlier ones) and collects
// them for the caller.
type tx struct {
	g    *Group
	s    Settings
	now  contract.Instant
	recs []Record
	// cause is the event of the latest G bump: the cause of the target
	// changes the next assignment records (history.go).
	cause Cause
}

func newTx(g *Group, s Settings, now contract.Instant) *tx { return &tx{g: g, s: s, now: now} }

func (t *tx) apply(r Record) {
	t.g.Apply(r)
	t.recs = append(t.recs, r)
}

// setMeta stores a modified copy of the group-level fields.
func (t *tx) setMeta(m Meta) {
	m.UpdatedAt = t.now
	t.apply(MetaRecord{Meta: m})
}

// putMember stores a member record. livenessOnly marks a change to liveness
// fields only (see MemberRecord).
//
// An owner that holds nothing outside its target loses its rebalance
// deadline here; deadlines start in enforceTimeouts, when the member is
// answered.
func (t *tx) putMember(m Member, livenessOnly bool) {
	t.putMemberRecord(MemberRecord{Member: &m, LivenessOnly: livenessOnly})
}

// putMemberRecord is putMember for a record that may carry an event.
func (t *tx) putMemberRecord(r MemberRecord) {
	m := r.Member
	if m.releasing() && m.RebalanceDeadlineAt != 0 && len(m.Holding().Minus(t.g.Targets[m.MemberID])) == 0 {
		m.RebalanceDeadlineAt, r.LivenessOnly = 0, false
	}
	t.apply(r)
}

// member returns a copy of the member record, or nil.
func (t *tx) member(id string) *Member {
	m := t.g.Members[id]
	if m == nil {
		return nil
	}
	cp := *m
	return &cp
}

// bumpGroupEpoch is the G bump of docs/protocol.md §4.3: groupEpoch and metadataVersion grow,
// and any metadata-correction round is dropped. cause is the event behind
// it, which the history names for the target changes that follow.
func (t *tx) bumpGroupEpoch(cause Cause) {
	t.cause = cause
	m := t.g.Meta
	m.GroupEpoch++
	m.MetadataVersion++
	m.MetadataCorrection = nil
	t.setMeta(m)
}

// bumpMetadataVersion is the V bump of docs/protocol.md §4.3.
func (t *tx) bumpMetadataVersion() {
	m := t.g.Meta
	m.MetadataVersion++
	m.MetadataCorrection = nil
	t.setMeta(m)
}

// sortedInsert returns ids with id added (sorted, no duplicates), as a new slice.
func sortedInsert(ids []string, id string) []string {
	i, found := slices.BinarySearch(ids, id)
	if found {
		return ids
	}
	out := make([]string, 0, len(ids)+1)
	out = append(out, ids[:i]...)
	out = append(out, id)
	return append(out, ids[i:]...)
}
