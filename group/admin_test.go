package group_test

import (
	"testing"
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/grouptest"
)

// docs/protocol.md §2.3 / §13.1: a group with live members is deleted only with force;
// expired leases do not count.
func TestDelete_NeedsForceWhileMembersLive(t *testing.T) {
	c := stableAB(t)
	expectCode(t, c.Delete(false), contract.CodeGroupHasActiveMembers)
	if !c.Group.Exists() {
		t.Fatalf("deleted without force")
	}
	c.Advance(c.Settings.MemberLeaseTTL + time.Millisecond)
	if err := c.Delete(false); err != nil {
		t.Fatalf("delete after every lease expired: %v", err)
	}
	if c.Group.Exists() || len(c.Group.Members) != 0 || len(c.Group.Targets) != 0 {
		t.Fatalf("group survives delete: %+v", c.Group.Meta)
	}
	if err := grouptest.CheckGroup(c.Group, c.Records); err != nil {
		t.Fatal(err)
	}
}

func TestDelete_Force(t *testing.T) {
	c := stableAB(t)
	if err := c.Delete(true); err != nil {
		t.Fatal(err)
	}
	if c.Group.Exists() {
		t.Fatalf("not deleted")
	}
	// Heartbeats now get UNKNOWN_MEMBER_ID and create nothing.
	hb := c.Member("A", 0)
	expectRejected(t, c, hb, c.Heartbeat(hb), contract.StatusUnknownMemberID)
	if c.Group.Exists() {
		t.Fatalf("heartbeat recreated the group")
	}
}

// Tick on a missing group does nothing; on a quiet group it returns no
// records.
func TestTick_QuietGroupProducesNoRecords(t *testing.T) {
	if recs := group.New().Tick(grouptest.Start, group.DefaultSettings()).Records; len(recs) != 0 {
		t.Fatalf("tick on a missing group: %v", recs)
	}
	c := stableAB(t)
	n := len(c.Records)
	for i := 0; i < 5; i++ {
		c.Advance(time.Second)
		c.Tick()
	}
	if len(c.Records) != n {
		t.Fatalf("quiet ticks produced %v", c.Records[n:])
	}
}
