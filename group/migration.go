package group

import "github.com/redis-stream-coordinator/coordinator/contract"

// advanceMigration moves the active migration forward (docs/protocol.md §6.4):
// ACTIVE → DRAINING once the group settled on the new count (or, for a
// scale-in, once nobody is live), DRAINING → DEPRECATED once no owner holds
// a removed shard and the removed shards are drained.
func (t *tx) advanceMigration() {
	g := t.g
	m := g.activeMigration()
	if m == nil {
		return
	}
	if m.State == MigrationActive {
		noneLive := len(g.idx.liveIDs) == 0
		settled := !noneLive && g.State == GroupStable
		if !(noneLive && m.ToShardCount < m.FromShardCount) && !settled {
			return
		}
		t.setMigrationState(*m, MigrationDraining)
		t.bumpGroupEpoch(CauseScale)
		t.reconcile()
		if !noneLive {
			return
		}
	}
	t.completeDrain(false)
}

// completeDrain finishes a DRAINING migration when no owner holds a shard at
// or above its target count and Redis drained the removed shards (confirmed,
// not needed for a scale-out, or not checked without Redis).
func (t *tx) completeDrain(confirmed bool) {
	g := t.g
	m := g.activeMigration()
	if m == nil || m.State != MigrationDraining {
		return
	}
	if g.shardIndex().holders.anyFrom(m.ToShardCount) {
		return
	}
	if m.ToShardCount < m.FromShardCount && t.s.DrainCheck && !confirmed {
		return
	}
	t.setMigrationState(*m, MigrationDeprecated)
	meta := g.Meta
	meta.ActiveReshardingID = nil
	t.setMeta(meta)
	t.bumpMetadataVersion()
	t.reconcile()
}

func (t *tx) setMigrationState(m Migration, state MigrationState) {
	m.State = state
	m.UpdatedAt = t.now
	meta := t.g.Meta
	meta.Migrations = withMigration(meta.Migrations, m)
	t.setMeta(meta)
}

// ConfirmDrain tells the group that Redis reported every removed shard of
// migration id drained (docs/protocol.md §6.4); the migration then completes if no owner
// still holds a removed shard.
func (g *Group) ConfirmDrain(now contract.Instant, s Settings, id string) Result[Done] {
	m := g.activeMigration()
	if m == nil || m.ReshardingID != id || m.State != MigrationDraining {
		return Result[Done]{}
	}
	t := newTx(g, s, now)
	t.completeDrain(true)
	return result(t, Done{})
}

// PendingDrain names the DRAINING migration whose removed shards
// [to, from) must be confirmed drained in Redis before it can complete.
func (g *Group) PendingDrain() (id string, removed []int, ok bool) {
	m := g.activeMigration()
	if m == nil || m.State != MigrationDraining || m.ToShardCount >= m.FromShardCount {
		return "", nil, false
	}
	return m.ReshardingID, contract.Range(m.ToShardCount, m.FromShardCount), true
}
