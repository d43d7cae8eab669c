package group

import (
	"slices"

	"github.com/redis-stream-coordinator/coordinator/contract"
)

// openCorrection opens or extends the metadata-correction round of docs/protocol.md §4.8 for
// a member claiming the future version observed.
func (t *tx) openCorrection(observed int64) {
	meta := t.g.Meta
	c := MetadataCorrection{
		TargetMetadataVersion:   meta.MetadataVersion,
		ObservedMetadataVersion: observed,
		RequestedAt:             t.now,
		UpdatedAt:               t.now,
		AcknowledgedMembers:     []string{},
	}
	if old := meta.MetadataCorrection; old != nil {
		c.RequestedAt = old.RequestedAt
		c.AcknowledgedMembers = old.AcknowledgedMembers
		c.ObservedMetadataVersion = max(old.ObservedMetadataVersion, observed)
	}
	meta.MetadataCorrection = &c
	t.setMeta(meta)
}

// syncMetadata answers SYNC_METADATA (docs/protocol.md §4.2 steps 6–7, payload §4.5): the
// member's liveness is refreshed and it may keep reading only the shards it
// already reads that are still its own.
//
// Unlike docs/protocol.md §4.5, the current and revoking sets become what the member reports
// reading and draining (within its authority): the member may not get this answer, and until it
// does, the shards it reads must keep blocking every other member.
func (t *tx) syncMetadata(req *contract.HeartbeatRequest, rec *Member, maint bool) contract.HeartbeatResponse {
	g := t.g
	before := *rec
	target := g.Targets[rec.MemberID]
	authority := rec.Holding().Union(target.Minus(g.blocked(rec.MemberID, target)))
	t.refreshLiveness(rec, req)
	rec.MetadataVersion = req.MetadataVersion
	rec.CurrentAssignment = req.OwnedShards.Intersect(authority)
	rec.Revoking = activeRevokes(req).Intersect(authority)
	t.putMember(*rec, false)
	if maint {
		t.reconcile()
	}
	return t.finish(req, rec.MemberID, &before, syncAnswer)
}

// acknowledgeCorrection records that member id runs on the current version
// and closes the round once every participant has acknowledged, no owner is
// still revoking and nothing is blocked (docs/protocol.md §4.8).
func (t *tx) acknowledgeCorrection(id string) {
	g := t.g
	meta := g.Meta
	c := *meta.MetadataCorrection
	c.AcknowledgedMembers = sortedInsert(c.AcknowledgedMembers, id)
	c.UpdatedAt = t.now
	if t.correctionComplete(c.AcknowledgedMembers) {
		meta.MetadataCorrection = nil
	} else {
		meta.MetadataCorrection = &c
	}
	t.setMeta(meta)
}

func (t *tx) correctionComplete(acked []string) bool {
	g := t.g
	if g.shardIndex().foreign > 0 {
		return false
	}
	for id, m := range g.Members {
		participant := m.State.Live() || (m.State == MemberLeaving && len(m.CurrentAssignment)+len(m.Revoking) > 0)
		if participant {
			if _, ok := slices.BinarySearch(acked, id); !ok {
				return false
			}
		}
		if m.Holds() && len(m.Revoking) > 0 {
			return false
		}
	}
	return true
}

// activeRevokes returns the shards of the request's non-terminal revoke reports.
func activeRevokes(req *contract.HeartbeatRequest) contract.ShardSet {
	var out []int
	for _, r := range req.RevokingShards {
		if !r.Terminal() {
			out = append(out, r.Shard.ShardIndex)
		}
	}
	return contract.NewShardSet(out...)
}
