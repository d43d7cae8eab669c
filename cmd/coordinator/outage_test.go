package main

import (
	"fmt"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/eventually"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/membersim"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/testredis"
)

// Phases of the outage test; heartbeat answers are counted per phase.
const (
	phaseUp        = "up"        // before Redis is killed
	phaseDown      = "down"      // from the kill until health shows Redis back
	phaseRecovered = "recovered" // after that
)

// load makes members heartbeat in rounds, one new member joining per
// round until all have joined, and tallies the answers. Its members are
// the loader goroutine's until done is closed.
type load struct {
	key     group.Key
	base    string
	oracle  *membersim.Oracle
	total   int
	members []*membersim.Member
	stop    chan struct{}
	done    chan struct{}

	mu       sync.Mutex
	phase    string
	rounds   map[string]int
	statuses map[string]map[contract.HeartbeatStatus]int
	failures []string         // answers that were not 200 with a steady status
	acked    map[string]int64 // member → highest epoch of an OK or REVOKE_PENDING answer
	groupEp  int64            // highest group epoch of such an answer
}

// startLoad starts the loader with members already joined, up to total.
func startLoad(key group.Key, base string, o *membersim.Oracle, members []*membersim.Member, total int) *load {
	ld := &load{
		key: key, base: base, oracle: o, total: total, members: members,
		stop: make(chan struct{}), done: make(chan struct{}),
		phase: phaseUp, rounds: map[string]int{}, statuses: map[string]map[contract.HeartbeatStatus]int{},
		acked: map[string]int64{},
	}
	go ld.run()
	return ld
}

// run sends a round every 10ms (the members' heartbeat interval) until
// stopped, at most maxRounds rounds.
func (ld *load) run() {
	defer close(ld.done)
	const maxRounds = 10000
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for range maxRounds {
		select {
		case <-ld.stop:
			return
		case <-tick.C:
		}
		if len(ld.members) < ld.total {
			ld.members = append(ld.members, membersim.New(fmt.Sprintf("m-%02d", len(ld.members)), ld.oracle))
		}
		ld.record(round(ld.key, ld.members, func(int) string { return ld.base }))
	}
}

func (ld *load) record(answers []answer) {
	ld.mu.Lock()
	defer ld.mu.Unlock()
	ld.rounds[ld.phase]++
	if ld.statuses[ld.phase] == nil {
		ld.statuses[ld.phase] = map[contract.HeartbeatStatus]int{}
	}
	for _, a := range answers {
		if a.err != nil || !steady(a.resp.Status) {
			ld.failures = append(ld.failures, fmt.Sprintf("%s (%s): %+v, %v", a.member.ID, ld.phase, a.resp, a.err))
			continue
		}
		ld.statuses[ld.phase][a.resp.Status]++
		if a.resp.Status != contract.StatusRetry {
			ld.acked[a.member.ID] = max(ld.acked[a.member.ID], a.resp.MemberEpoch)
			ld.groupEp = max(ld.groupEp, a.resp.GroupEpoch)
		}
	}
}

// enter starts phase p.
func (ld *load) enter(p string) {
	ld.mu.Lock()
	defer ld.mu.Unlock()
	ld.phase = p
}

// count returns the rounds of phase p and how many answers had status s.
func (ld *load) count(p string, s contract.HeartbeatStatus) (rounds, answers int) {
	ld.mu.Lock()
	defer ld.mu.Unlock()
	return ld.rounds[p], ld.statuses[p][s]
}

// heartbeats returns how many answers phase p got.
func (ld *load) heartbeats(p string) int {
	ld.mu.Lock()
	defer ld.mu.Unlock()
	n := 0
	for _, c := range ld.statuses[p] {
		n += c
	}
	return n
}

// halt stops the loader and waits for it.
func (ld *load) halt() {
	close(ld.stop)
	<-ld.done
}

// TestRedisOutageUnderLoad kills the Redis of a coordinator (store, state
// mutex, health) while members heartbeat and join, and restarts it on the
// same port and data: Redis fsyncs its append-only file before every
// reply, so whatever it acknowledged survives SIGKILL. During the outage
// every heartbeat is answered 200 (RETRY), the breaker opens, health turns
// DEGRADED and admin calls answer 503 STORE_UNAVAILABLE. Afterwards no
// acknowledged change is lost: every member is stored at an epoch at least
// the one it was last answered, the group epoch did not go back, and the
// group converges with every member, no shard ever read twice. (A state
// mutex held at the kill outlives the restart until its TTL ends; until
// then heartbeats are answered RETRY.)
func TestRedisOutageUnderLoad(t *testing.T) {
	srv := testredis.StartDurable(t)
	host, port, _ := net.SplitHostPort(srv.Addr)
	cfg := loadConfig(t, fmt.Sprintf(`coordinator:
  id: outage
  store:
    type: redis
    key-prefix: outage
    breaker: {failure-threshold: 3, open-timeout: 1s}
    timeout: 1s
  redis: {host: %q, port: %s}
  coordination:
    event-loop: {enabled: false}
    # A mutex held when Redis dies survives in the append-only file until
    # its TTL ends: a short TTL keeps the group's wait after the restart short.
    state-mutex: {ttl-ms: 1000, acquire-timeout-ms: 1000, retry-interval-ms: 5}
  health: {redis-timeout-ms: 200, cache-ttl-ms: 10}
`, host, port))
	n := startNode(t, cfg, newTestClock())
	key := group.Key{StreamPrefix: "orders", ConsumerGroup: "workers"}
	const shards, total = 24, 12
	createGroup(t, n.base, key, shards)
	oracle := membersim.NewOracle()
	var members []*membersim.Member
	for i := range 4 {
		members = append(members, membersim.New(fmt.Sprintf("m-%02d", i), oracle))
	}
	sw := &swarm{key: key, shards: shards, members: members,
		target: func(int, int) string { return n.base }, view: func() contract.GroupView { return groupView(t, n.base, key) }}
	sw.converge(t)

	ld := startLoad(key, n.base, oracle, members, total)
	eventually.True(t, "load rounds before the kill", func() bool { r, _ := ld.count(phaseUp, contract.StatusOK); return r >= 4 })
	srv.Kill()
	ld.enter(phaseDown)

	waitHealth(t, n.base, "health DEGRADED", func(h contract.HealthReport) bool { return h.Status == "DEGRADED" && h.Redis == contract.RedisDown })
	waitHealth(t, n.base, "breaker open", func(h contract.HealthReport) bool { return h.Store.Breaker == "open" })
	// A write fails fast; a read is answered from the owner's memory, which
	// is the group's truth while the owner serves.
	if st, body := call(t, "POST", groupURL(n.base, group.Key{StreamPrefix: "orders", ConsumerGroup: "audit"}), `{"requestedBy":"it"}`, nil); st != http.StatusServiceUnavailable || errorCode(body) != "STORE_UNAVAILABLE" {
		t.Errorf("create with the breaker open: %d %s", st, body)
	}
	eventually.True(t, "RETRY answers during the outage", func() bool { _, retries := ld.count(phaseDown, contract.StatusRetry); return retries > 0 })

	srv.Restart()
	waitHealth(t, n.base, "health UP with the breaker closed", func(h contract.HealthReport) bool {
		return h.Status == "UP" && h.Redis == contract.RedisUp && h.Store.Breaker == "closed"
	})
	ld.enter(phaseRecovered)
	eventually.True(t, "load rounds after recovery", func() bool { r, _ := ld.count(phaseRecovered, contract.StatusOK); return r >= 4 })
	ld.halt()

	for _, f := range ld.failures {
		t.Errorf("answer: %s", f)
	}
	if len(ld.members) != total {
		t.Fatalf("%d members joined, want %d", len(ld.members), total)
	}
	stored := memberRecords(t, n.base, key)
	for id, epoch := range ld.acked {
		if rec, ok := stored[id]; !ok || rec.MemberEpoch < epoch || rec.State != contract.MemberActive {
			t.Errorf("%s was answered at epoch %d, stored: %+v (present %v)", id, epoch, rec, ok)
		}
	}
	if v := groupView(t, n.base, key); v.GroupEpoch < ld.groupEp {
		t.Errorf("group epoch %d after the outage, %d was answered before", v.GroupEpoch, ld.groupEp)
	}
	sw.members = ld.members
	sw.converge(t)
	if ov := oracle.Overlaps(); len(ov) != 0 {
		t.Errorf("shards read by two members: %v", ov)
	}
	downRounds, retries := ld.count(phaseDown, contract.StatusRetry)
	t.Logf("heartbeats: %d before the kill, %d in %d rounds during the outage (%d RETRY), %d after recovery; %d members acknowledged",
		ld.heartbeats(phaseUp), ld.heartbeats(phaseDown), downRounds, retries, ld.heartbeats(phaseRecovered), len(ld.acked))
}
