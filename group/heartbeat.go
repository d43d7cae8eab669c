package group

import (
	"slices"

	"github.com/redis-stream-coordinator/coordinator/contract"
)

// Heartbeat runs the decision procedure of docs/protocol.md §4.2 for one member. It never
// fails: every outcome is a status in the response. Callers validate the
// request first with ValidateHeartbeat (the HTTP 400 cases). Its answer is
// the response; its records have already been applied to g.
//
// The numbered steps below are the steps of docs/protocol.md §4.2.
func (g *Group) Heartbeat(now contract.Instant, s Settings, req *contract.HeartbeatRequest) Result[contract.HeartbeatResponse] {
	t := newTx(g, s, now)
	return result(t, t.heartbeat(req))
}

func (t *tx) heartbeat(req *contract.HeartbeatRequest) contract.HeartbeatResponse {
	g := t.g
	// 1–3. Envelope checks.
	switch {
	case req.ProtocolVersion != 1:
		return t.rejected(req, contract.StatusUnsupportedProtocol)
	case req.PathMemberID != "" && req.PathMemberID != req.MemberID:
		return t.rejected(req, contract.StatusInvalidRequest)
	case !g.Exists():
		return t.rejected(req, contract.StatusUnknownMemberID)
	}
	// 4. Maintenance.
	maint := t.maintain()

	// 5–7. Metadata correction (docs/protocol.md §4.8).
	id := req.MemberID
	rec := t.member(id)
	// Deviations from docs/protocol.md §4.2 that keep a round from trapping members: a leave
	// (epoch −1) is never intercepted, so a leaving member can always leave
	// (and its G bump ends the round); a new process of a LEAVING member
	// (epoch 0) rejoins in step 8 instead of being held at epoch −1.
	syncable := rec != nil && rec.State != MemberFenced && rec.State != MemberExpired &&
		req.MemberEpoch != -1 && (rec.State != MemberLeaving || req.MemberEpoch != 0)
	if syncable && req.MetadataVersion > g.MetadataVersion {
		t.openCorrection(req.MetadataVersion)
		return t.syncMetadata(req, rec, maint)
	}
	if syncable && g.MetadataCorrection != nil && req.MetadataVersion != g.MetadataVersion {
		return t.syncMetadata(req, rec, maint)
	}
	// A heartbeat proves the shards it omits released only when the member
	// sent it knowing the current target (its epoch is the assignment
	// epoch) or it is a leave; any other one (a retry with the previous
	// epoch, a delayed duplicate, a rejoin over a record that still holds
	// shards) may predate what the member reads now, so what the record
	// held stays held (retain).
	var before *Member
	if req.MemberEpoch != -1 && req.MemberEpoch != g.AssignmentEpoch {
		before = t.member(id)
	}

	// 8. Epoch dispatch.
	epoch := req.MemberEpoch
	switch {
	case epoch < -1:
		return t.rejected(req, contract.StatusInvalidRequest)
	case rec == nil && epoch == 0:
		rec = t.join(id, req)
	case rec == nil:
		return t.rejected(req, contract.StatusUnknownMemberID)
	case epoch == 0 && !rec.State.Live():
		rec = t.join(id, req)
	case epoch == 0 && len(req.OwnedShards) == 0 && len(req.RevokingShards) == 0:
		return t.joinReplay(req, rec, maint)
	case epoch == 0:
		return t.rejected(req, contract.StatusInvalidRequest)
	case rec.State == MemberFenced || rec.State == MemberExpired:
		return t.fenced(req, rec)
	case epoch == -1:
		if rec.State != MemberLeaving {
			rec.State = MemberLeaving
			rec.MemberEpoch = -1
			t.putMember(*rec, false)
			t.bumpGroupEpoch(CauseLeave)
		}
	case epoch > rec.MemberEpoch:
		return t.rejected(req, contract.StatusInvalidRequest)
	case epoch < rec.MemberEpoch && !t.acceptsPreviousEpoch(req, rec):
		return t.fenced(req, rec)
	}

	// 9. Ownership validation (docs/protocol.md §4.4); an invalid report fences the member.
	report, ok := t.validateOwnership(req, rec)
	if !ok {
		t.fence(rec, g.GroupEpoch)
		t.bumpGroupEpoch(CauseFenced)
		t.reconcile()
		return t.fenced(req, t.member(id))
	}

	// 10. Apply the report.
	t.applyReport(req, rec, report)

	// 11–16.
	t.reconcile()
	return t.finish(req, id, before, regularAnswer)
}

// answerMode is how finish answers: the regular path of docs/protocol.md §4.2, the join
// replay (improvement 8b) or a metadata sync (docs/protocol.md §4.5).
type answerMode int

const (
	regularAnswer answerMode = iota
	joinReplayAnswer
	syncAnswer
)

// finish is steps 11–16 of docs/protocol.md §4.2, the one ending of every accepted
// heartbeat (the caller has reconciled): rebalance timeouts (and, on the
// regular path, migration advance and the correction acknowledgement),
// the fence check, the move to the assignment epoch (regular path only:
// the other two answer with the stored epoch), the answer's sets, the
// granted set, and retain of what an unproven heartbeat must not free.
func (t *tx) finish(req *contract.HeartbeatRequest, id string, before *Member, mode answerMode) contract.HeartbeatResponse {
	g := t.g
	t.enforceTimeouts(id)
	if mode == regularAnswer {
		t.advanceMigration()
		if g.MetadataCorrection != nil {
			t.acknowledgeCorrection(id)
		}
	}
	// 12. Fenced by a timeout in step 11.
	rec := t.member(id)
	if rec.State == MemberFenced {
		t.retain(rec, before)
		return t.fenced(req, rec)
	}
	// 13. A live member moves to the assignment epoch.
	if mode == regularAnswer && rec.State.Live() && rec.MemberEpoch != g.AssignmentEpoch {
		rec.PreviousMemberEpoch = rec.MemberEpoch
		rec.PreviousGrantedAssignment = rec.GrantedAssignment
		rec.MemberEpoch = g.AssignmentEpoch
	}
	// 14–16. Answer: SYNC_METADATA with what the member already reads,
	// REVOKE_PENDING while a round is open, OK otherwise.
	target := g.Targets[id]
	blocked := g.blocked(id, target)
	status, assigned, pending := contract.StatusOK, target.Minus(blocked), target.Intersect(blocked)
	switch {
	case mode == syncAnswer:
		status = contract.StatusSyncMetadata
		assigned = req.OwnedShards.Intersect(target.Minus(blocked))
		pending = target.Minus(assigned)
	case mode == regularAnswer && g.MetadataCorrection != nil:
		status = contract.StatusRevokePending
		assigned = rec.CurrentAssignment.Intersect(target.Minus(blocked))
		pending = target.Minus(assigned)
	}
	t.grant(rec, assigned)
	t.retain(rec, before)
	t.saveMember(rec)
	resp := t.answer(req, status, rec, assigned, pending)
	resp.Assignment.FencingTokens = rec.fences()
	return resp
}

// report is the validated content of a heartbeat (docs/protocol.md §4.4).
type report struct {
	owned, revoking contract.ShardSet
	progress        ProgressList
	// livenessOnly: the report changes nothing but liveness fields.
	livenessOnly bool
}

// join creates or resets a member record (join and rejoin of docs/protocol.md §4.2 step 8).
func (t *tx) join(id string, req *contract.HeartbeatRequest) *Member {
	m := &Member{MemberID: id, MemberName: id}
	if req.MemberName != nil {
		m.MemberName = *req.MemberName
	}
	m.State = MemberActive
	m.MemberEpoch = t.g.GroupEpoch
	m.RebalanceTimeoutMs = t.s.RebalanceTimeout.Milliseconds()
	t.refreshLiveness(m, req)
	t.putMember(*m, false)
	t.bumpGroupEpoch(CauseJoin)
	return m
}

// joinReplay answers an epoch-0 heartbeat of a live member that reports
// nothing: the member has dropped its state (a lost join response or a client
// restart), or this is a delayed duplicate of its join. It gets its current
// target with its stored epoch and nothing is bumped (improvement 8b).
// Unlike 8b, whatever the record held and its target no longer grants
// stays held as revoking until the member's next heartbeat says what it
// reads: a duplicate join must not free shards the member still reads.
func (t *tx) joinReplay(req *contract.HeartbeatRequest, rec *Member, maint bool) contract.HeartbeatResponse {
	before := *rec
	livenessOnly := len(rec.CurrentAssignment) == 0 && len(rec.Revoking) == 0 && len(rec.GrantedAssignment) == 0
	if !livenessOnly {
		rec.CurrentAssignment, rec.Revoking, rec.GrantedAssignment, rec.GrantEpochs, rec.ShardProgress = nil, nil, nil, nil, nil
	}
	t.refreshLiveness(rec, req)
	t.putMember(*rec, livenessOnly)
	if maint || !livenessOnly {
		t.reconcile()
	}
	return t.finish(req, rec.MemberID, &before, joinReplayAnswer)
}

// acceptsPreviousEpoch implements improvement 8a: a retry with the epoch the
// member held before its last change is accepted when what it reports owning
// was granted at that epoch.
func (t *tx) acceptsPreviousEpoch(req *contract.HeartbeatRequest, rec *Member) bool {
	return rec.State.Live() && rec.PreviousMemberEpoch > 0 &&
		req.MemberEpoch == rec.PreviousMemberEpoch &&
		req.OwnedShards.SubsetOf(rec.PreviousGrantedAssignment)
}

// validateOwnership checks the report against the member's authority
// (docs/protocol.md §4.4). Terminal revoke reports and progress for shards outside it are
// dropped; anything else outside it makes the report invalid.
func (t *tx) validateOwnership(req *contract.HeartbeatRequest, rec *Member) (report, bool) {
	g := t.g
	var r report
	if req.MemberEpoch == 0 {
		return r, true
	}
	target := g.Targets[rec.MemberID].Below(g.ShardCount)
	accepted := rec.CurrentAssignment.Union(rec.Revoking).Union(rec.GrantedAssignment)
	authority := accepted.Union(target.Minus(g.blocked(rec.MemberID, target)))
	if rec.State != MemberLeaving {
		r.owned = req.OwnedShards
	}
	if !r.owned.SubsetOf(authority) {
		return r, false
	}
	// During a round, a member already on the round's version may report
	// entries outside what it holds or targets: those are discarded first.
	var relevant contract.ShardSet
	inRound := g.MetadataCorrection != nil && req.MetadataVersion == g.MetadataCorrection.TargetMetadataVersion
	if inRound {
		relevant = rec.CurrentAssignment.Union(rec.Revoking).Union(g.Targets[rec.MemberID])
	}
	var revoking []int
	for _, rr := range req.RevokingShards {
		s := rr.Shard.ShardIndex
		if inRound && !relevant.Contains(s) {
			continue
		}
		if rr.Terminal() {
			continue
		}
		if !authority.Contains(s) {
			return r, false
		}
		revoking = append(revoking, s)
	}
	r.revoking = contract.NewShardSet(revoking...)
	for _, p := range req.ShardProgress {
		s := p.Shard.ShardIndex
		if inRound && !relevant.Contains(s) {
			continue
		}
		if !authority.Contains(s) {
			return r, false
		}
		r.progress = append(r.progress, p)
	}
	return r, true
}

// applyReport is step 10 of docs/protocol.md §4.2.
func (t *tx) applyReport(req *contract.HeartbeatRequest, rec *Member, r report) {
	g := t.g
	before := *rec
	rec.MetadataVersion = g.MetadataVersion
	rec.RebalanceTimeoutMs = t.s.RebalanceTimeout.Milliseconds()
	rec.CurrentAssignment = r.owned
	rec.Revoking = r.revoking
	if rec.State == MemberLeaving {
		rec.CurrentAssignment, rec.GrantedAssignment, rec.GrantEpochs = nil, nil, nil
	}
	rec.ShardProgress = r.progress
	t.refreshLiveness(rec, req)
	r.livenessOnly = before.MetadataVersion == rec.MetadataVersion &&
		before.RebalanceTimeoutMs == rec.RebalanceTimeoutMs &&
		before.CurrentAssignment.Equal(rec.CurrentAssignment) &&
		before.Revoking.Equal(rec.Revoking) &&
		before.GrantedAssignment.Equal(rec.GrantedAssignment) &&
		before.State == rec.State && before.MemberEpoch == rec.MemberEpoch
	t.putMember(*rec, r.livenessOnly)
}

// retain re-adds to m's revoking set every shard that the record before
// held and m no longer holds, keeping the lease end that went with them,
// and stores m if that changed it: the heartbeat that produced m does not
// prove those shards released. A nil before, or one that held nothing,
// keeps nothing.
func (t *tx) retain(m *Member, before *Member) {
	if before == nil || !before.Holds() {
		return
	}
	if kept := before.Holding().Minus(m.Holding()); len(kept) > 0 {
		m.Revoking = m.Revoking.Union(kept)
		m.LeaseHold = max(m.LeaseHold, before.LeaseEnd())
		t.putMember(*m, false)
	}
}

// refreshLiveness updates the liveness fields from a heartbeat. The lease
// never moves back.
func (t *tx) refreshLiveness(m *Member, req *contract.HeartbeatRequest) {
	if req.MemberName != nil {
		m.MemberName = *req.MemberName
	}
	if c := req.RuntimeConsumerCapacity; c != nil {
		m.RuntimeMaxConcurrency = c.RuntimeMaxConcurrency
		m.ActiveConsumerWorkers = max(0, c.RuntimeMaxConcurrency-c.AvailableConcurrency)
	}
	m.LastHeartbeatAt = t.now
	m.MemberLeaseExpiresAt = max(m.MemberLeaseExpiresAt, t.now.Add(t.s.MemberLeaseTTL))
}

// saveMember stores the member after steps 13–16 unless they changed nothing.
func (t *tx) saveMember(m *Member) {
	cur := t.g.Members[m.MemberID]
	if cur.MemberEpoch == m.MemberEpoch && cur.GrantedAssignment.Equal(m.GrantedAssignment) &&
		slices.Equal(cur.GrantEpochs, m.GrantEpochs) && cur.PreviousMemberEpoch == m.PreviousMemberEpoch {
		return
	}
	t.putMember(*m, false)
}

// answer builds an accepted response (OK, REVOKE_PENDING, SYNC_METADATA).
func (t *tx) answer(req *contract.HeartbeatRequest, status contract.HeartbeatStatus, m *Member, assigned, pending contract.ShardSet) contract.HeartbeatResponse {
	g := t.g
	return contract.HeartbeatResponse{
		ResponseTo:          req.RequestID,
		Status:              status,
		MemberID:            m.MemberID,
		MemberEpoch:         m.MemberEpoch,
		HeartbeatIntervalMs: t.s.HeartbeatInterval.Milliseconds(),
		RebalanceTimeoutMs:  t.s.RebalanceTimeout.Milliseconds(),
		MemberLeaseTtlMs:    t.s.MemberLeaseTTL.Milliseconds(),
		GroupEpoch:          g.GroupEpoch,
		AssignmentEpoch:     g.AssignmentEpoch,
		MetadataVersion:     g.MetadataVersion,
		Assignment:          contract.AssignmentPayload{AssignedShards: assigned, PendingShards: pending, MetadataVersion: g.MetadataVersion},
	}
}

// fenced answers FENCED_MEMBER_EPOCH with the stored member epoch and the
// group's real epochs.
func (t *tx) fenced(req *contract.HeartbeatRequest, rec *Member) contract.HeartbeatResponse {
	resp := t.answer(req, contract.StatusFencedMemberEpoch, rec, nil, nil)
	resp.Assignment.MetadataVersion = 0
	return resp
}

// rejected answers UNSUPPORTED_PROTOCOL, INVALID_REQUEST or UNKNOWN_MEMBER_ID:
// the request epoch echoed, zero epochs, an empty assignment.
func (t *tx) rejected(req *contract.HeartbeatRequest, status contract.HeartbeatStatus) contract.HeartbeatResponse {
	return rejectedResponse(t.s, req, status)
}

func rejectedResponse(s Settings, req *contract.HeartbeatRequest, status contract.HeartbeatStatus) contract.HeartbeatResponse {
	return contract.HeartbeatResponse{
		ResponseTo:          req.RequestID,
		Status:              status,
		MemberID:            req.MemberID,
		MemberEpoch:         req.MemberEpoch,
		HeartbeatIntervalMs: s.HeartbeatInterval.Milliseconds(),
		RebalanceTimeoutMs:  s.RebalanceTimeout.Milliseconds(),
		MemberLeaseTtlMs:    s.MemberLeaseTTL.Milliseconds(),
	}
}

// RetryResponse is the answer to a heartbeat that was not served but may
// succeed as it is (a store briefly unavailable, improvement 5; load
// shedding; a group moving between coordinators): HTTP 200, status RETRY,
// the request's epoch echoed, zero group epochs and an empty assignment.
// Clients keep their lease and heartbeat again. The HTTP layer's table of
// outcomes decides when it is answered.
func RetryResponse(s Settings, req *contract.HeartbeatRequest) contract.HeartbeatResponse {
	return rejectedResponse(s, req, contract.StatusRetry)
}
