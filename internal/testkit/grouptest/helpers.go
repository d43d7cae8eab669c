package grouptest

import (
	"fmt"
	"reflect"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
)

// Join sends an epoch-0 heartbeat with nothing owned for member id.
func (c *Context) Join(id string) contract.HeartbeatResponse {
	c.T.Helper()
	return c.Heartbeat(c.Member(id, 0))
}

// Leave sends an epoch −1 heartbeat for member id with the given revoke reports.
func (c *Context) Leave(id string, revoking ...contract.RevokeReport) contract.HeartbeatResponse {
	c.T.Helper()
	hb := c.Member(id, -1)
	hb.RevokingShards = revoking
	return c.Heartbeat(hb)
}

// StartScale runs the first half of a group scale (docs/protocol.md §6.2 steps 1–6).
func (c *Context) StartScale(n int) (group.Migration, error) {
	c.seq++
	return c.record(c.Group.StartScale(c.Now, c.Settings,
		contract.ScaleRequest{TargetShardCount: &n, RequestedBy: "test"}, fmt.Sprintf("reshard-%d", c.seq)))
}

// ActivateScale runs docs/protocol.md §6.2 step 8 for migration id.
func (c *Context) ActivateScale(id string) (group.Migration, error) {
	return c.record(c.Group.ActivateScale(c.Now, c.Settings, id))
}

// record keeps the records of a migration command's result and returns
// its answer and error.
func (c *Context) record(res group.Result[group.Migration]) (group.Migration, error) {
	c.Records = append(c.Records, res.Records...)
	return res.Answer, res.Err
}

// Scale runs a whole group scale to n shards: start, then activate when a
// migration was prepared. It fails the test on an error.
func (c *Context) Scale(n int) group.Migration {
	c.T.Helper()
	m, err := c.StartScale(n)
	if err != nil {
		c.T.Fatalf("start scale to %d: %v", n, err)
	}
	if m.State != group.MigrationPreparing {
		return m
	}
	m, err = c.ActivateScale(m.ReshardingID)
	if err != nil {
		c.T.Fatalf("activate scale to %d: %v", n, err)
	}
	return m
}

// Rollback rolls migration id back.
func (c *Context) Rollback(id string) (group.Migration, error) {
	return c.record(c.Group.Rollback(c.Now, c.Settings, id, contract.RollbackRequest{RequestedBy: "test", Reason: "test"}))
}

// ConfirmDrain reports the removed shards of migration id drained.
func (c *Context) ConfirmDrain(id string) {
	c.Records = append(c.Records, c.Group.ConfirmDrain(c.Now, c.Settings, id).Records...)
}

// Delete deletes the group.
func (c *Context) Delete(force bool) error {
	res := c.Group.Delete(c.Now, c.Settings, contract.DeleteRequest{RequestedBy: "test", Reason: "test", Force: force})
	c.Records = append(c.Records, res.Records...)
	return res.Err
}

// Check fails the test when an invariant of the group is broken: invariant
// violations, assignmentEpoch ≠ groupEpoch, or a replay of every record
// differing from the live group.
func (c *Context) Check() {
	c.T.Helper()
	if err := CheckGroup(c.Group, c.Records); err != nil {
		c.T.Fatalf("%v", err)
	}
}

// CheckGroup returns an error when g breaks an invariant or differs from
// the replay of recs onto group.New(), its stats included: g's are kept by
// Apply from the first check on, the replay's counted from scratch.
func CheckGroup(g *group.Group, recs []group.Record) error {
	if v := g.Violations(); len(v) != 0 {
		return fmt.Errorf("invariant violations: %v", v)
	}
	if g.Exists() && g.AssignmentEpoch != g.GroupEpoch {
		return fmt.Errorf("assignmentEpoch %d != groupEpoch %d", g.AssignmentEpoch, g.GroupEpoch)
	}
	r := group.New()
	for _, rec := range recs {
		r.Apply(rec)
	}
	if x, y := g.Stats(), r.Stats(); x != y {
		return fmt.Errorf("stats kept by Apply %+v, counted %+v", x, y)
	}
	return SameGroup(g, r)
}

// SameGroup returns an error when the observable projections of a and b
// (View, MemberList, Assignments, migrations, correction round, history)
// differ.
func SameGroup(a, b *group.Group) error {
	if x, y := a.View(), b.View(); !reflect.DeepEqual(x, y) {
		return fmt.Errorf("views differ:\n%+v\n%+v", x, y)
	}
	if x, y := a.MemberList(), b.MemberList(); !reflect.DeepEqual(x, y) {
		return fmt.Errorf("members differ:\n%+v\n%+v", x, y)
	}
	if x, y := a.Assignments(), b.Assignments(); !reflect.DeepEqual(x, y) {
		return fmt.Errorf("assignments differ:\n%+v\n%+v", x, y)
	}
	if x, y := a.MigrationList(), b.MigrationList(); !reflect.DeepEqual(x, y) {
		return fmt.Errorf("migrations differ:\n%+v\n%+v", x, y)
	}
	if x, y := a.MetadataCorrection, b.MetadataCorrection; !reflect.DeepEqual(x, y) {
		return fmt.Errorf("correction rounds differ:\n%+v\n%+v", x, y)
	}
	if x, y := a.HistoryOf(group.HistoryQuery{}), b.HistoryOf(group.HistoryQuery{}); !reflect.DeepEqual(x, y) {
		return fmt.Errorf("histories differ:\n%+v\n%+v", x, y)
	}
	return nil
}
