package metrics_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/coordtest"
)

// hbRoute are the API labels of a successful heartbeat, sorted.
const (
	hbRoute  = `group="billing",method="POST",outcome="SUCCESS",route="/coord/v1/streams/{streamPrefix}/groups/{consumerGroup}/members/{memberId}/heartbeat",status="200",stream="orders"`
	hbTiming = `method="POST",outcome="SUCCESS",route="/coord/v1/streams/{streamPrefix}/groups/{consumerGroup}/members/{memberId}/heartbeat",status="200"`
)

// Every step of a scripted flow moves exactly the expected series.
func TestFlowMovesExactlyTheExpectedSeries(t *testing.T) {
	h := newMemoryHarness(t)
	h.create(orders)

	var resp contract.HeartbeatResponse
	h.clock.Advance(2 * time.Second)
	h.step("join", func() { resp = h.heartbeat(orders, hb{member: "m-a"}) }, committed("OK", merge(bump, merge(series{
		`members{group="billing",state="active",stream="orders"}`:   1,
		`members{group="billing",state="total",stream="orders"}`:    1,
		`target_assignment_shards{group="billing",stream="orders"}`: 4,
		`actor_mailbox_depth{group="billing",stream="orders"}`:      1, // the flush message itself
	}, member("m-a", series{"active": 1, "runtime_max_concurrency": 2, "active_workers": 1})))))

	h.clock.Advance(2 * time.Second)
	h.step("commit", func() {
		resp = h.heartbeat(orders, hb{member: "m-a", epoch: resp.MemberEpoch, owned: resp.Assignment.AssignedShards})
	}, committed("OK", merge(series{
		`current_assignment_shards{group="billing",stream="orders"}`: 4,
	}, member("m-a", series{"current_shards": 4}))))

	h.clock.Advance(2 * time.Second)
	h.step("fence", func() {
		resp = h.heartbeat(orders, hb{member: "m-a", epoch: resp.MemberEpoch, owned: []int{0, 1, 2, 3, 7}})
	}, committed("FENCED_MEMBER_EPOCH", merge(bump, merge(series{
		`member_fenced_total{group="billing",stream="orders"}`:       1,
		`members{group="billing",state="active",stream="orders"}`:    -1,
		`target_assignment_shards{group="billing",stream="orders"}`:  -4,
		`current_assignment_shards{group="billing",stream="orders"}`: -4,
	}, member("m-a", series{"active": -1})))))

	// The fenced m-a may still read its shards until its lease runs out:
	// its current set is released (and its gauge drops) with m-b's expiry.
	h.clock.Advance(2 * time.Second)
	h.await(`actor_message_duration_seconds_count{type="flush"}`, func() { h.heartbeat(orders, hb{member: "m-b"}) })
	h.clock.Advance(settings.MemberLeaseTTL + time.Second)
	h.step("expiry", func() {
		h.coord.TickNow()
		waitFor(t, h.reg, "the expiry", func(s series) bool {
			return s[`member_expired_total{group="billing",stream="orders"}`] == 1
		})
	}, merge(bump, merge(series{
		`member_expired_total{group="billing",stream="orders"}`:                                   1,
		`members{group="billing",state="active",stream="orders"}`:                                 -1,
		`members{group="billing",state="expired",stream="orders"}`:                                1,
		`target_assignment_shards{group="billing",stream="orders"}`:                               -4,
		`actor_message_duration_seconds_count{type="tick"}`:                                       1,
		`tick_total{changed="true"}`:                                                              1,
		`tick_duration_seconds_count{changed="true"}`:                                             1,
		`actor_message_duration_seconds_count{type="flush"}`:                                      1,
		`group_commit_batch_size_count{}`:                                                         1,
		`group_commit_duration_seconds_count{result="success"}`:                                   1,
		`store_commit_duration_seconds_count{operation="commit",result="success",store="memory"}`: 1,
	}, merge(member("m-b", series{"active": -1}), member("m-a", series{"current_shards": -4})))))
}

// Two coordinators on one memory store: the one with stale state meets a
// revision conflict, reloads, re-runs the join and commits; the next
// scrape shows the reloaded and the joined members alike.
func TestRevisionConflictMovesExactlyTheExpectedSeries(t *testing.T) {
	backend, clock := coordtest.Memory(), newFakeClock()
	a := newHarness(t, backend, clock)
	b := newHarness(t, backend, clock)
	a.create(orders)
	clock.Advance(2 * time.Second)
	// m-a's flush is observed after its answer: wait for it, so that it
	// does not land in the conflict step.
	a.await(`actor_message_duration_seconds_count{type="flush"}`, func() { a.heartbeat(orders, hb{member: "m-a"}) })
	b.heartbeat(orders, hb{member: "m-b"})
	clock.Advance(2 * time.Second)

	a.step("conflict", func() { a.heartbeat(orders, hb{member: "m-c"}) }, committed("OK", merge(bump, merge(series{
		`state_conflict_total{attempt="1",operation="heartbeat"}`:                                  1,
		`store_commit_duration_seconds_count{operation="commit",result="conflict",store="memory"}`: 1,
		`group_epoch{group="billing",stream="orders"}`:                                             1, // m-b's join, read by the reload
		`assignment_epoch{group="billing",stream="orders"}`:                                        1,
		`members{group="billing",state="active",stream="orders"}`:                                  2,
		`members{group="billing",state="total",stream="orders"}`:                                   2,
	}, merge(member("m-b", series{"active": 1, "runtime_max_concurrency": 2, "active_workers": 1}),
		member("m-c", series{"active": 1, "runtime_max_concurrency": 2, "active_workers": 1}))))))
}

// committed returns the series every heartbeat answered with status and
// committed by its own group commit moves, plus extra.
func committed(status string, extra series) series {
	return merge(series{
		`heartbeat_total{group="billing",status="` + status + `",stream="orders"}`:                1,
		`api_request_total{` + hbRoute + `}`:                                                      1,
		`api_request_duration_seconds_count{` + hbTiming + `}`:                                    1,
		`actor_message_duration_seconds_count{type="heartbeat"}`:                                  1,
		`actor_message_duration_seconds_count{type="flush"}`:                                      1,
		`group_commit_batch_size_count{}`:                                                         1,
		`group_commit_duration_seconds_count{result="success"}`:                                   1,
		`store_commit_duration_seconds_count{operation="commit",result="success",store="memory"}`: 1,
	}, extra)
}

// bump are the series a group epoch bump moves: both epochs and one
// rebalance.
var bump = series{
	`group_epoch{group="billing",stream="orders"}`:                        1,
	`assignment_epoch{group="billing",stream="orders"}`:                   1,
	`rebalance_total{group="billing",reason="reconcile",stream="orders"}`: 1,
	`rebalance_duration_seconds_count{reason="reconcile"}`:                1,
}

// merge adds the moves of a and b.
func merge(a, b series) series {
	out := series{}
	for k, v := range a {
		out[k] += v
	}
	for k, v := range b {
		out[k] += v
	}
	return out
}

// member returns the member gauges of id moved by s (keys without the
// "member_" prefix).
func member(id string, s series) series {
	out := series{}
	for k, v := range s {
		out[`member_`+k+`{group="billing",member="`+id+`",stream="orders"}`] = v
	}
	return out
}

// Expiries are counted from the commit that decides them: a scrape right
// after an expiry shows it, also when an earlier commit of the group was
// half a second before.
func TestExpiryIsCountedAtItsCommit(t *testing.T) {
	h := newMemoryHarness(t)
	h.create(orders)
	h.heartbeat(orders, hb{member: "m-b"})
	h.clock.Advance(500 * time.Millisecond)
	h.heartbeat(orders, hb{member: "m-c"})
	expired := `member_expired_total{group="billing",stream="orders"}`
	expire := func(id string) {
		t.Helper()
		h.coord.TickNow()
		waitFor(t, h.reg, id+" expired", func(series) bool {
			members, err := h.coord.Members(context.Background(), orders)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range members {
				if m.MemberID == id {
					return m.State == group.MemberExpired
				}
			}
			return false
		})
	}
	h.clock.Advance(settings.MemberLeaseTTL - 500*time.Millisecond + time.Millisecond)
	expire("m-b")
	if got := scrape(t, h.reg)[expired]; got != 1 {
		t.Fatalf("after the first expiry the counter is %v", got)
	}
	h.clock.Advance(500 * time.Millisecond)
	expire("m-c")
	if got := scrape(t, h.reg)[expired]; got != 2 {
		t.Fatalf("right after the second expiry the counter is %v, want 2", got)
	}
}
