package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/membersim"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/testredis"
)

// TestRunKeepsMemberEpochsAcrossRestarts converges three members on a
// coordinator process, restarts the process on the same store and checks
// that every member is stored with its epoch and carries on where it was:
// the next heartbeats are OK at the same epochs with the same shards.
func TestRunKeepsMemberEpochsAcrossRestarts(t *testing.T) {
	for name, store := range map[string]func(t *testing.T) string{
		"redis": func(t *testing.T) string {
			return redisStoreYAML(testredis.SharedAddr, testredis.Prefix(t, testredis.Shared(t)))
		},
		"jdbc": func(*testing.T) string { return fmt.Sprintf("  store: {type: jdbc, jdbc: {url: %q}}\n", testDSN) },
	} {
		t.Run(name, func(t *testing.T) {
			key := group.Key{StreamPrefix: fmt.Sprintf("epochs-%d", time.Now().UnixNano()), ConsumerGroup: "workers"}
			cfg := writeConfig(t, "coordinator:\n  id: it\n  server: {address: \"127.0.0.1:0\"}\n"+
				"  coordination: {member-lease-ttl: 1h}\n"+store(t))
			base, stop := start(t, "-config", cfg)
			api := base + "/coord/v1"
			createGroup(t, api, key, 6)
			members := []*membersim.Member{membersim.New("m-a", nil), membersim.New("m-b", nil), membersim.New("m-c", nil)}
			sw := &swarm{key: key, shards: 6, members: members,
				target: func(int, int) string { return api }, view: func() contract.GroupView { return groupView(t, api, key) }}
			sw.converge(t)
			before := groupView(t, api, key)
			stop()

			base, _ = start(t, "-config", cfg)
			api = base + "/coord/v1"
			t.Cleanup(func() { deleteGroup(t, api, key) })
			if v := groupView(t, api, key); v.GroupEpoch != before.GroupEpoch || v.AssignmentEpoch != before.AssignmentEpoch || v.State != contract.GroupStable {
				t.Fatalf("group after restart %+v, before %+v", v, before)
			}
			stored := memberRecords(t, api, key)
			for _, m := range members {
				if rec := stored[m.ID]; rec.MemberEpoch != m.Epoch() || rec.State != contract.MemberActive {
					t.Errorf("%s stored at epoch %d (%s) after restart, member has %d", m.ID, rec.MemberEpoch, rec.State, m.Epoch())
				}
			}
			owned := map[string]contract.ShardSet{}
			for _, m := range members {
				owned[m.ID] = m.Owned()
			}
			for _, a := range sw.round() {
				if a.err != nil || a.resp.Status != contract.StatusOK || a.resp.MemberEpoch != stored[a.member.ID].MemberEpoch || !a.member.Owned().Equal(owned[a.member.ID]) {
					t.Errorf("%s after restart: %+v, %v; reads %v, read %v", a.member.ID, a.resp, a.err, a.member.Owned(), owned[a.member.ID])
				}
			}
		})
	}
}
