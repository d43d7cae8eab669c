package group_test

import (
	"testing"
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/grouptest"
)

// Tests of resharding in the domain: docs/protocol.md §6.2 scale, §6.4 advancement, §6.5
// rollback, docs/protocol.md §13.7–8.

// clients returns protocol-following clients for A{0,1} and B{2,3} of stableAB.
func clientsAB(c *grouptest.Context) []*client {
	return []*client{
		holding(c, "A", 3, c.Group.MetadataVersion, shards(0, 1)),
		holding(c, "B", 3, c.Group.MetadataVersion, shards(2, 3)),
	}
}

// rounds lets every client heartbeat n times, one second apart, with a tick
// after each round, failing on any status but OK/REVOKE_PENDING/SYNC.
func rounds(t *testing.T, c *grouptest.Context, n int, cls ...*client) {
	t.Helper()
	for i := 0; i < n; i++ {
		c.Advance(time.Second)
		for _, cl := range cls {
			if cl.gone {
				continue
			}
			switch r := cl.beat(c); r.Status {
			case contract.StatusOK, contract.StatusRevokePending, contract.StatusSyncMetadata:
			default:
				t.Fatalf("%s: %+v", cl.id, r)
			}
			c.Check()
		}
		c.Tick()
		c.Check()
	}
}

func activeState(t *testing.T, c *grouptest.Context, id string) group.MigrationState {
	t.Helper()
	m, ok := c.Group.Migration(id)
	if !ok {
		t.Fatalf("no migration %s", id)
	}
	return m.State
}

// expectMigration fails the test unless migration id is in state want.
func expectMigration(t *testing.T, c *grouptest.Context, id string, want group.MigrationState) {
	t.Helper()
	if st := activeState(t, c, id); st != want {
		t.Fatalf("migration %s is %s, want %s", id, st, want)
	}
}

func TestScale_PrepareThenActivate(t *testing.T) {
	c := stableAB(t)
	v := versionsOf(c.Group)
	c.Advance(time.Second)
	m, err := c.StartScale(8)
	if err != nil || m.State != group.MigrationPreparing || m.FromShardCount != 4 || m.ToShardCount != 8 ||
		m.CreatedAt != c.Now || m.ReshardingID == "" {
		t.Fatalf("start: %+v %v", m, err)
	}
	if c.Group.ActiveReshardingID == nil || *c.Group.ActiveReshardingID != m.ReshardingID || c.Group.ShardCount != 4 {
		t.Fatalf("after start %+v", c.Group.Meta)
	}
	if stored, ok := c.Group.Migration(m.ReshardingID); !ok || stored != m {
		t.Fatalf("stored %+v", stored)
	}
	expectVersions(t, c.Group, v)
	// Resume with the same target; another target is refused; rollback of
	// PREPARING is not allowed.
	again, err := c.StartScale(8)
	if err != nil || again != m {
		t.Fatalf("resume: %+v %v", again, err)
	}
	_, err = c.StartScale(6)
	expectCode(t, err, contract.CodeActiveMigrationExists)
	_, err = c.Rollback(m.ReshardingID)
	expectCode(t, err, contract.CodeRollbackNotAllowed)
	// Activate.
	act, err := c.ActivateScale(m.ReshardingID)
	if err != nil || act.State != group.MigrationActive || act.ReshardingID != m.ReshardingID {
		t.Fatalf("activate: %+v %v", act, err)
	}
	if c.Group.ShardCount != 8 || c.Group.View().ActiveMigration == nil || c.Group.View().ActiveMigration.State != contract.MigrationActive {
		t.Fatalf("after activate %+v", c.Group.View())
	}
	expectVersions(t, c.Group, versions{v.G + 1, v.G + 1, v.V + 1})
	checkTargets(t, c.Group)
	// Sticky: A and B keep their shards.
	if !shards(0, 1).SubsetOf(c.Group.Targets["A"]) || !shards(2, 3).SubsetOf(c.Group.Targets["B"]) {
		t.Fatalf("targets %v", c.Group.Targets)
	}
	// A second activation fails.
	_, err = c.ActivateScale(m.ReshardingID)
	expectCode(t, err, contract.CodeMigrationNotFound)
	// Another scale while ACTIVE: 409.
	_, err = c.StartScale(2)
	expectCode(t, err, contract.CodeActiveMigrationExists)
	c.Check()
}

func TestScale_SameCountIsNoop(t *testing.T) {
	c := stableAB(t)
	n, v := len(c.Records), versionsOf(c.Group)
	m, err := c.StartScale(4)
	if err != nil || m.ReshardingID != group.NoopMigrationID || m.FromShardCount != 4 || m.ToShardCount != 4 ||
		m.State != group.MigrationDeprecated {
		t.Fatalf("noop: %+v %v", m, err)
	}
	if len(c.Group.Migrations) != 0 || c.Group.ActiveReshardingID != nil || len(c.Records) != n {
		t.Fatalf("noop stored something: %+v", c.Group.Meta)
	}
	expectVersions(t, c.Group, v)
}

func TestScale_NegativeRejected(t *testing.T) {
	c := stableAB(t)
	_, err := c.StartScale(-1)
	expectCode(t, err, contract.CodeInvalidRequest)
}

// StartScale expires leases first (docs/protocol.md §6.2 step 3).
func TestScale_ExpiresLeasesFirst(t *testing.T) {
	c := stableAB(t)
	c.Advance(c.Settings.MemberLeaseTTL + time.Millisecond)
	c.Scale(8)
	if len(c.Group.LiveMemberIDs()) != 0 || len(c.Group.Targets) != 0 {
		t.Fatalf("leases not expired: %v", c.Group.MemberList())
	}
	c.Check()
}

// Scale-out: live consumers are not fenced, ACTIVE → DRAINING (G) once
// STABLE, → DEPRECATED (V) on a later pass.
func TestScale_OutAdvancesInTwoPasses(t *testing.T) {
	c := stableAB(t)
	cls := clientsAB(c)
	m := c.Scale(8)
	v := versionsOf(c.Group)
	// First round: everyone learns the new targets; the group becomes
	// STABLE only when everyone reads its target.
	var seen []group.MigrationState
	for i := 0; i < 6 && activeState(t, c, m.ReshardingID) != group.MigrationDeprecated; i++ {
		for _, cl := range cls {
			if r := cl.beat(c); r.Status != contract.StatusOK {
				t.Fatalf("%s: %+v", cl.id, r)
			}
			if st := activeState(t, c, m.ReshardingID); len(seen) == 0 || seen[len(seen)-1] != st {
				seen = append(seen, st)
			}
			c.Check()
		}
	}
	want := []group.MigrationState{group.MigrationActive, group.MigrationDraining, group.MigrationDeprecated}
	sawDraining := len(seen) == 3 && seen[0] == want[0] && seen[1] == want[1] && seen[2] == want[2]
	if !sawDraining {
		t.Logf("states seen %v", seen)
	}
	if !sawDraining {
		t.Fatalf("never observed DRAINING")
	}
	expectMigration(t, c, m.ReshardingID, group.MigrationDeprecated)
	if c.Group.ActiveReshardingID != nil || c.Group.View().ActiveMigration != nil {
		t.Fatalf("active migration not cleared")
	}
	// One G for ACTIVE → DRAINING, one V for DRAINING → DEPRECATED.
	expectVersions(t, c.Group, versions{v.G + 1, v.G + 1, v.V + 2})
	for _, cl := range cls {
		if !cl.owned().Equal(c.Group.Targets[cl.id]) || len(cl.owned()) != 4 {
			t.Fatalf("%s reads %v", cl.id, cl.owned())
		}
		expectState(t, c, cl.id, group.MemberActive, v.G+1)
	}
}

// Scale-out without live members stays ACTIVE.
func TestScale_OutWithoutLiveMembersStaysActive(t *testing.T) {
	c := stableAB(t)
	c.Advance(c.Settings.MemberLeaseTTL + time.Millisecond)
	m := c.Scale(8)
	for i := 0; i < 5; i++ {
		c.Advance(time.Minute)
		c.Tick()
	}
	expectMigration(t, c, m.ReshardingID, group.MigrationActive)
	c.Check()
}

// Scale-in with DrainCheck: removed shards are revoked at once, DEPRECATED
// needs ConfirmDrain and no owner holding a removed shard.
func TestScale_InWaitsForReleaseAndConfirmDrain(t *testing.T) {
	c := stableAB(t)
	c.Settings.DrainCheck = true
	cls := clientsAB(c)
	m := c.Scale(2)
	checkTargets(t, c.Group)
	if _, ok := c.Group.Targets["A"]; !ok || len(c.Group.Targets["A"])+len(c.Group.Targets["B"]) != 2 {
		t.Fatalf("targets %v", c.Group.Targets)
	}
	// B leaves slowly, still draining the removed shards 2,3.
	c.Leave("B", grouptest.Draining(2, 3)...)
	cls[1].gone = true
	rounds(t, c, 3, cls[0])
	expectMigration(t, c, m.ReshardingID, group.MigrationDraining)
	id, removed, ok := c.Group.PendingDrain()
	if !ok || id != m.ReshardingID || !contract.ShardSet(removed).Equal(shards(2, 3)) {
		t.Fatalf("pending drain %s %v %v", id, removed, ok)
	}
	// Redis says drained, but B still holds 2,3.
	c.ConfirmDrain(m.ReshardingID)
	expectMigration(t, c, m.ReshardingID, group.MigrationDraining)
	// B finishes: still waiting for a confirmation.
	c.Leave("B", grouptest.Revoked(2, 3)...)
	rounds(t, c, 2, cls[0])
	expectMigration(t, c, m.ReshardingID, group.MigrationDraining)
	v := versionsOf(c.Group)
	c.ConfirmDrain("reshard-other") // another id: ignored
	c.ConfirmDrain(m.ReshardingID)
	if st := activeState(t, c, m.ReshardingID); st != group.MigrationDeprecated || c.Group.ActiveReshardingID != nil {
		t.Fatalf("migration %s", st)
	}
	expectVersions(t, c.Group, versions{v.G, v.A, v.V + 1})
	if _, _, ok := c.Group.PendingDrain(); ok {
		t.Fatalf("pending drain after completion")
	}
	c.Check()
}

// Scale-in without DrainCheck completes once no owner holds a removed shard.
func TestScale_InWithoutDrainCheck(t *testing.T) {
	c := stableAB(t)
	cls := clientsAB(c)
	m := c.Scale(2)
	rounds(t, c, 6, cls...)
	expectMigration(t, c, m.ReshardingID, group.MigrationDeprecated)
	for _, cl := range cls {
		if len(cl.owned()) != 1 {
			t.Fatalf("%s reads %v", cl.id, cl.owned())
		}
	}
	c.Check()
}

// With every member gone a scale-in goes straight to DRAINING and completes
// after ConfirmDrain (docs/protocol.md §13.8).
func TestScale_InWithoutLiveMembers(t *testing.T) {
	c := stableAB(t)
	c.Settings.DrainCheck = true
	c.Advance(c.Settings.MemberLeaseTTL + time.Millisecond)
	m := c.Scale(2)
	v := versionsOf(c.Group)
	c.Tick()
	expectMigration(t, c, m.ReshardingID, group.MigrationDraining)
	expectVersions(t, c.Group, versions{v.G + 1, v.G + 1, v.V + 1})
	c.Advance(time.Minute)
	c.Tick()
	expectMigration(t, c, m.ReshardingID, group.MigrationDraining)
	c.ConfirmDrain(m.ReshardingID)
	expectMigration(t, c, m.ReshardingID, group.MigrationDeprecated)
	expectVersions(t, c.Group, versions{v.G + 1, v.G + 1, v.V + 2})
	c.Check()
}

// Without DrainCheck the no-live scale-in completes in the same pass.
func TestScale_InWithoutLiveMembersNoDrainCheck(t *testing.T) {
	c := stableAB(t)
	c.Advance(c.Settings.MemberLeaseTTL + time.Millisecond)
	m := c.Scale(2)
	c.Tick()
	expectMigration(t, c, m.ReshardingID, group.MigrationDeprecated)
	c.Check()
}

// Scale to 0: empty targets, members drop everything, not fenced.
func TestScale_ToZero(t *testing.T) {
	c := stableAB(t)
	cls := clientsAB(c)
	m := c.Scale(0)
	if c.Group.ShardCount != 0 {
		t.Fatalf("shard count %d", c.Group.ShardCount)
	}
	for _, id := range []string{"A", "B"} {
		if set, ok := c.Group.Targets[id]; !ok || len(set) != 0 {
			t.Fatalf("targets %v", c.Group.Targets)
		}
	}
	rounds(t, c, 6, cls...)
	for _, cl := range cls {
		if len(cl.owned()) != 0 {
			t.Fatalf("%s reads %v", cl.id, cl.owned())
		}
		expectState(t, c, cl.id, group.MemberActive, member(t, c, cl.id).MemberEpoch)
	}
	expectMigration(t, c, m.ReshardingID, group.MigrationDeprecated)
	if c.Group.State != group.GroupStable {
		t.Fatalf("state %s", c.Group.State)
	}
	c.Check()
}

func TestRollback(t *testing.T) {
	c := stableAB(t)
	cls := clientsAB(c)
	m := c.Scale(8)
	rounds(t, c, 1, cls...)
	expectMigration(t, c, m.ReshardingID, group.MigrationActive)
	v := versionsOf(c.Group)
	rb, err := c.Rollback(m.ReshardingID)
	if err != nil || rb.State != group.MigrationRolledBack || rb.ReshardingID != m.ReshardingID {
		t.Fatalf("rollback %+v %v", rb, err)
	}
	if c.Group.ShardCount != 4 || c.Group.ActiveReshardingID != nil {
		t.Fatalf("after rollback %+v", c.Group.Meta)
	}
	expectVersions(t, c.Group, versions{v.G + 1, v.G + 1, v.V + 1})
	checkTargets(t, c.Group)
	// Again: returned as is, nothing changes.
	n := len(c.Records)
	again, err := c.Rollback(m.ReshardingID)
	if err != nil || again != rb || len(c.Records) != n {
		t.Fatalf("second rollback %+v %v", again, err)
	}
	_, err = c.Rollback("reshard-unknown")
	expectCode(t, err, contract.CodeMigrationNotFound)
	// Members settle on 4 shards without being fenced.
	rounds(t, c, 4, cls...)
	if c.Group.State != group.GroupStable {
		t.Fatalf("state %s", c.Group.State)
	}
	// A completed migration cannot be rolled back.
	m2 := c.Scale(6)
	rounds(t, c, 6, cls...)
	expectMigration(t, c, m2.ReshardingID, group.MigrationDeprecated)
	_, err = c.Rollback(m2.ReshardingID)
	expectCode(t, err, contract.CodeRollbackNotAllowed)
	c.Check()
}

// A DRAINING migration cannot be rolled back.
func TestRollback_DrainingNotAllowed(t *testing.T) {
	c := stableAB(t)
	c.Settings.DrainCheck = true
	cls := clientsAB(c)
	m := c.Scale(2)
	rounds(t, c, 4, cls...)
	expectMigration(t, c, m.ReshardingID, group.MigrationDraining)
	_, err := c.Rollback(m.ReshardingID)
	expectCode(t, err, contract.CodeRollbackNotAllowed)
}
