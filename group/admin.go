package group

import (
	"slices"

	"github.com/redis-stream-coordinator/coordinator/contract"
)

// Create returns the records that create a group (docs/protocol.md §2.2 step 5): epochs and
// metadata version 1, the requested (or default) shard count, reconciled to
// assignmentEpoch 1, answering the created group's view. g must be a New()
// group; the caller has checked that the group does not exist in the store.
func (g *Group) Create(now contract.Instant, s Settings, key Key, req contract.CreateRequest) Result[contract.GroupView] {
	if err := ValidateCreate(&req, s); err != nil {
		return Result[contract.GroupView]{Err: err}
	}
	n := s.DefaultShardCount
	if req.InitialShardCount != nil {
		n = *req.InitialShardCount
	}
	assign := s.DefaultAssignor
	if req.Assignor != nil {
		assign = *req.Assignor
	}
	t := newTx(g, s, now)
	t.setMeta(Meta{
		StreamPrefix:    key.StreamPrefix,
		ConsumerGroup:   key.ConsumerGroup,
		GroupEpoch:      1,
		MetadataVersion: 1,
		State:           GroupEmpty,
		ShardCount:      n,
		Migrations:      map[string]Migration{},
		CreatedAt:       now,
		Assignor:        storedAssignor(assign),
	})
	t.reconcile()
	return result(t, g.View())
}

// Delete checks docs/protocol.md §2.3 and returns the DeletedRecord: a group with ACTIVE or
// STARTING members is deleted only with force. Expired leases are expired
// first so dead members do not block the delete. It answers the group's
// view from before the delete.
func (g *Group) Delete(now contract.Instant, s Settings, req contract.DeleteRequest) Result[contract.GroupView] {
	if err := ValidateDelete(&req); err != nil {
		return Result[contract.GroupView]{Err: err}
	}
	view := g.View()
	t := newTx(g, s, now)
	t.maintain()
	if len(g.idx.liveIDs) > 0 && !req.Force {
		return refusal[contract.GroupView](t, Errorf(contract.CodeGroupHasActiveMembers,
			"Group has %d active member(s); stop them or delete with force=true", len(g.idx.liveIDs)))
	}
	t.apply(DeletedRecord{})
	return result(t, view)
}

// NoopMigrationID is the id of the unstored answer to a same-count scale.
const NoopMigrationID = "noop"

// StartScale runs docs/protocol.md §6.2 steps 1–6: it expires leases, refuses while a
// correction round is open (409) or another migration is active (409), answers
// a same-count request with the unstored noop migration, resumes a PREPARING
// migration with the same target, or records a new PREPARING migration with
// id newID. The caller commits the records, provisions shards
// 0..target-1 when the returned migration is PREPARING, then calls
// ActivateScale.
func (g *Group) StartScale(now contract.Instant, s Settings, req contract.ScaleRequest, newID string) Result[Migration] {
	if err := ValidateScale(&req, s); err != nil {
		return Result[Migration]{Err: err}
	}
	target := *req.TargetShardCount
	if g.MetadataCorrection != nil {
		return Result[Migration]{Err: errCorrectionOpen()}
	}
	t := newTx(g, s, now)
	t.maintain()
	if active := g.activeMigration(); active != nil {
		if active.State == MigrationPreparing && active.ToShardCount == target {
			return result(t, *active)
		}
		return refusal[Migration](t, Errorf(contract.CodeActiveMigrationExists,
			"Group already has active migration %s (%s)", active.ReshardingID, active.State))
	}
	if target == g.ShardCount {
		return result(t, Migration{ReshardingID: NoopMigrationID, FromShardCount: target, ToShardCount: target,
			State: MigrationDeprecated, CreatedAt: now, UpdatedAt: now})
	}
	m := Migration{ReshardingID: newID, FromShardCount: g.ShardCount, ToShardCount: target,
		State: MigrationPreparing, CreatedAt: now, UpdatedAt: now}
	meta := g.Meta
	meta.Migrations = withMigration(meta.Migrations, m)
	meta.ActiveReshardingID = &m.ReshardingID
	t.setMeta(meta)
	return result(t, m)
}

// ActivateScale runs docs/protocol.md §6.2 step 8 for the PREPARING migration id: it becomes
// ACTIVE, the shard count switches (routing and targets change at once), the
// group epoch moves and the targets are recomputed.
func (g *Group) ActivateScale(now contract.Instant, s Settings, id string) Result[Migration] {
	m := g.activeMigration()
	if m == nil || m.ReshardingID != id || m.State != MigrationPreparing {
		return Result[Migration]{Err: Errorf(contract.CodeMigrationNotFound, "No preparing migration %s", id)}
	}
	t := newTx(g, s, now)
	act := *m
	act.State = MigrationActive
	act.UpdatedAt = now
	meta := g.Meta
	meta.Migrations = withMigration(meta.Migrations, act)
	meta.ShardCount = act.ToShardCount
	t.setMeta(meta)
	t.bumpGroupEpoch(CauseScale)
	t.reconcile()
	t.enforceTimeouts("")
	return result(t, act)
}

// Rollback runs docs/protocol.md §6.5: an ACTIVE migration is marked ROLLED_BACK and the
// shard count returns to its source; a rolled-back one is returned as is;
// anything else is 422.
func (g *Group) Rollback(now contract.Instant, s Settings, id string, req contract.RollbackRequest) Result[Migration] {
	if err := ValidateRollback(&req); err != nil {
		return Result[Migration]{Err: err}
	}
	if g.MetadataCorrection != nil {
		return Result[Migration]{Err: errCorrectionOpen()}
	}
	m, ok := g.Migrations[id]
	switch {
	case !ok:
		return Result[Migration]{Err: Errorf(contract.CodeMigrationNotFound, "Migration %s not found", id)}
	case m.State == MigrationRolledBack || m.State == MigrationRollingBack:
		return Result[Migration]{Answer: m}
	case g.ActiveReshardingID == nil || *g.ActiveReshardingID != id || m.State != MigrationActive:
		return Result[Migration]{Err: Errorf(contract.CodeRollbackNotAllowed,
			"Migration %s is %s; only the ACTIVE migration can be rolled back", id, m.State)}
	}
	t := newTx(g, s, now)
	m.State = MigrationRolledBack
	m.UpdatedAt = now
	meta := g.Meta
	meta.Migrations = withMigration(meta.Migrations, m)
	meta.ActiveReshardingID = nil
	meta.ShardCount = m.FromShardCount
	t.setMeta(meta)
	t.bumpGroupEpoch(CauseScale)
	t.reconcile()
	return result(t, m)
}

// Migration returns the migration with the given id.
func (g *Group) Migration(id string) (Migration, bool) {
	m, ok := g.Migrations[id]
	return m, ok
}

// MigrationList returns every migration ordered by creation time.
func (g *Group) MigrationList() []Migration {
	out := make([]Migration, 0, len(g.Migrations))
	for _, m := range g.Migrations {
		out = append(out, m)
	}
	slices.SortFunc(out, func(a, b Migration) int {
		if a.CreatedAt != b.CreatedAt {
			return int(a.CreatedAt - b.CreatedAt)
		}
		return compareStrings(a.ReshardingID, b.ReshardingID)
	})
	return out
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func errCorrectionOpen() *Error {
	return Errorf(contract.CodeMetadataSyncInProgress, "A metadata correction round is in progress")
}

// withMigration returns a copy of ms with m stored (Meta maps are immutable).
func withMigration(ms map[string]Migration, m Migration) map[string]Migration {
	out := make(map[string]Migration, len(ms)+1)
	for k, v := range ms {
		out[k] = v
	}
	out[m.ReshardingID] = m
	return out
}

// activeMigration returns the migration named by activeReshardingId.
func (g *Group) activeMigration() *Migration {
	if g.ActiveReshardingID == nil {
		return nil
	}
	m, ok := g.Migrations[*g.ActiveReshardingID]
	if !ok {
		return nil
	}
	return &m
}
