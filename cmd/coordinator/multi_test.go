package main

import (
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/redis-stream-coordinator/coordinator/client"
	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/membersim"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/testredis"
)

// TestSeveralCoordinators runs three coordinators, each with its own
// store client, breaker and actor system, on one shared store (Redis with
// the per-group state mutex; PostgreSQL without one) and a shared fake
// clock that moves one heartbeat interval per round. Twelve members
// heartbeat round-robin across them: the group converges balanced with no
// shard ever read by two members. Then four members leave, four others
// join and one coordinator is stopped while the members heartbeat; the
// group converges again on the other two, still without an overlap, and
// stays put for longer than a member lease.
func TestSeveralCoordinators(t *testing.T) {
	for name, store := range map[string]func(t *testing.T) string{
		"redis": func(t *testing.T) string {
			return redisStoreYAML(testredis.SharedAddr, testredis.Prefix(t, testredis.Shared(t)))
		},
		"jdbc": func(*testing.T) string { return fmt.Sprintf("  store: {type: jdbc, jdbc: {url: %q}}\n", testDSN) },
	} {
		t.Run(name, func(t *testing.T) { severalCoordinators(t, store(t)) })
	}
}

func severalCoordinators(t *testing.T, storeYAML string) {
	const (
		shards   = 48
		interval = time.Second
	)
	clock := newTestClock()
	var nodes []*node
	for i := range 3 {
		// Leases (20 heartbeat intervals) are renewed in the store every
		// ten rounds or so (when less than half is left), and never expire.
		nodes = append(nodes, startNode(t, loadConfig(t, fmt.Sprintf("coordinator:\n  id: c%d\n", i)+storeYAML+`  coordination:
    heartbeat-interval: 1s
    member-lease-ttl: 20s
    event-loop: {enabled: false}
    state-mutex: {retry-interval-ms: 5}
`), clock))
	}
	key := group.Key{StreamPrefix: fmt.Sprintf("multi-%d", time.Now().UnixNano()), ConsumerGroup: "workers"}
	createGroup(t, nodes[0].base, key, shards)
	t.Cleanup(func() { deleteGroup(t, nodes[2].base, key) })

	oracle := membersim.NewOracle()
	live := nodes
	sw := &swarm{
		key: key, shards: shards,
		target: func(r, i int) string { return live[(r+i)%len(live)].base },
		view:   func() contract.GroupView { return groupView(t, live[0].base, key) },
		tick:   func() { clock.Advance(interval) },
	}
	for i := range 12 {
		sw.members = append(sw.members, membersim.New(fmt.Sprintf("m-%02d", i), oracle))
	}
	sw.converge(t)
	checkReads(t, oracle, sw.members, shards/12)
	first := sw.rounds

	for _, m := range sw.members[:4] {
		m.Leave()
	}
	for i := range 4 {
		sw.members = append(sw.members, membersim.New(fmt.Sprintf("m-%02d", 12+i), oracle))
	}
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		nodes[0].stop()
	}()
	lost := 0
	for down := false; !down; {
		select {
		case <-stopped:
			down = true
		default:
		}
		for _, a := range sw.round() {
			if a.target == nodes[0].base && isLost(a.err) {
				lost++
				continue
			}
			if a.err != nil || !steady(a.resp.Status) {
				t.Fatalf("%s via %s while c0 stops: %+v, %v", a.member.ID, a.target, a.resp, a.err)
			}
		}
	}
	live = nodes[1:]
	sw.converge(t)
	checkReads(t, oracle, present(sw.members), shards/12)
	second := sw.rounds - first

	// Longer than a lease without a change: renewals reach the store in
	// time for the other coordinator, so nobody expires and nothing moves.
	before := sw.view()
	for range 25 {
		for _, a := range sw.round() {
			if a.err != nil || !steady(a.resp.Status) || a.resp.Status == contract.StatusOK && a.resp.GroupEpoch != before.GroupEpoch {
				t.Fatalf("steady round: %s via %s: %+v, %v (group epoch was %d)", a.member.ID, a.target, a.resp, a.err, before.GroupEpoch)
			}
		}
	}
	if after := sw.view(); after.GroupEpoch != before.GroupEpoch || after.State != contract.GroupStable {
		t.Errorf("after steady rounds: %+v, before %+v", after, before)
	}
	checkReads(t, oracle, present(sw.members), shards/12)
	t.Logf("converged after %d rounds on three coordinators, then after %d more with c0 stopped (%d heartbeats to it lost), steady for 25",
		first, second, lost)
}

// isLost reports the failures of a heartbeat sent to a coordinator that
// is stopping: refused (503 while draining) or never answered.
func isLost(err error) bool {
	if err == nil {
		return false
	}
	se, ok := errors.AsType[*client.APIError](err)
	return !ok || se.StatusCode == http.StatusServiceUnavailable
}

// checkReads fails the test if the oracle saw a shard read twice or the
// members do not read per shards each.
func checkReads(t *testing.T, o *membersim.Oracle, members []*membersim.Member, per int) {
	t.Helper()
	if ov := o.Overlaps(); len(ov) != 0 {
		t.Fatalf("shards read by two members: %v", ov)
	}
	for _, m := range members {
		if len(m.Owned()) != per {
			t.Errorf("%s reads %v, want %d shards", m.ID, m.Owned(), per)
		}
	}
}
