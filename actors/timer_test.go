package actors

import (
	"testing"
	"time"

	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/eventually"
)

// With the event loop on, a group's own timer expires a silent member: no
// sweep is needed (the sweep interval is far beyond the test).
func TestGroupTimerExpiresASilentMember(t *testing.T) {
	store := newTestStore()
	store.shared = true
	s := group.DefaultSettings()
	s.MemberLeaseTTL = 200 * time.Millisecond
	c := start(t, Options{Store: store, GroupCommit: true, Settings: s,
		TickEnabled: true, TickInterval: 20 * time.Millisecond, SweepInterval: time.Hour})
	createGroup(t, c, orders)
	resp := heartbeat(t, c, orders, join("m-1"))
	heartbeat(t, c, orders, next("m-1", resp))
	eventually.True(t, "m-1 expired by the group's timer", func() bool {
		return store.stored(t, orders).Members["m-1"].State == group.MemberExpired
	})
}

// The sweep at start ticks groups this coordinator has no actor for, so a
// group whose members all vanished elsewhere is still maintained.
func TestSweepAtStartMaintainsGroupsNobodyTalksTo(t *testing.T) {
	store := newTestStore()
	store.shared = true
	s := group.DefaultSettings()
	s.MemberLeaseTTL = 200 * time.Millisecond
	a := start(t, Options{Store: store, GroupCommit: true, Settings: s})
	createGroup(t, a, orders)
	heartbeat(t, a, orders, join("m-1"))
	start(t, Options{Store: store, GroupCommit: true, Settings: s,
		TickEnabled: true, TickInterval: 20 * time.Millisecond, SweepInterval: time.Hour})
	eventually.True(t, "m-1 expired by the other coordinator", func() bool {
		return store.stored(t, orders).Members["m-1"].State == group.MemberExpired
	})
}

// The actor of a group without live members passivates once it got no
// request for IdleTimeout; a request loads it again.
func TestIdleGroupActorPassivates(t *testing.T) {
	c := start(t, Options{Store: newTestStore(), GroupCommit: true, IdleTimeout: 20 * time.Millisecond})
	createGroup(t, c, orders)
	eventually.True(t, "the idle actor retired", func() bool {
		_, live := c.registry.Load(orders)
		return !live
	})
	if _, err := c.Group(testCtx(t), orders); err != nil {
		t.Fatalf("read after passivation: %v", err)
	}
}
