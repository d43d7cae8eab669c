package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis-stream-coordinator/coordinator/actors"
	"github.com/redis-stream-coordinator/coordinator/cluster"
	"github.com/redis-stream-coordinator/coordinator/config"
	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	httpapi "github.com/redis-stream-coordinator/coordinator/http"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/coordtest"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/eventually"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/fakeclock"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/membersim"
)

// Durability tests: coordinators wired as run wires them (configuration →
// openBackend → actorOptions → httpapi) on real Redis and PostgreSQL,
// driven over HTTP by simulated members (internal/testkit/membersim). A node runs
// on a fake clock without the event loop, so member leases never expire
// unless a test advances time.

// newTestClock returns a fake clock to share between the nodes of a test.
func newTestClock() *fakeclock.Clock {
	return fakeclock.New(time.Date(2026, 5, 21, 0, 0, 0, 0, time.UTC))
}

// loadConfig loads a configuration file with the given YAML.
func loadConfig(t *testing.T, yaml string) *config.Config {
	t.Helper()
	cfg, err := config.Load(writeConfig(t, yaml))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// node is one coordinator instance wired as run wires it: an in-process
// coordinator (internal/testkit/coordtest) on the configured backend.
type node struct {
	*coordtest.Server
	base string // the API's base URL, e.g. http://127.0.0.1:1234/coord/v1
	// stop shuts the node down in run's order: hand the groups over and
	// leave the cluster (leaveCluster), refuse mutations, drain the
	// actors, close the server (coordtest's Stop), close the backend. It
	// is idempotent.
	stop func()
}

// startNode starts a node as run does (openBackend, joinCluster on the
// server's address, actorOptions, the API with the backend's health), but
// on clock and with the event loop off. It is stopped at cleanup.
func startNode(t *testing.T, cfg *config.Config, clock *fakeclock.Clock) *node {
	t.Helper()
	logger := slog.New(slog.DiscardHandler)
	back, closeBack := openRunBackend(t, cfg)
	var member *cluster.Node
	c := coordtest.Start(t, coordtest.Options{Backend: storeOf(t, back), ID: cfg.ID, Settings: domainSettings(cfg), Clock: clock,
		Node: func(c *coordtest.Server) *cluster.Node {
			n, err := joinCluster(t.Context(), cfg, back, c.HTTP.Listener.Addr(), nil, logger)
			if err != nil {
				t.Fatal(err)
			}
			member = n
			return n
		},
		Actors: func(o *actors.Options) {
			run := actorOptions(cfg, back, logger)
			run.Clock, run.TickEnabled, run.Ownership = o.Clock, false, o.Ownership
			*o = run
		},
		API: func(o *httpapi.Options) { o.BasePath, o.Health = cfg.API.BasePath, back.health(cfg, member.Serving) },
	})
	n := &node{Server: c, base: c.Base}
	n.stop = sync.OnceFunc(func() {
		leaveCluster(context.Background(), c.Node, c.Actors, logger)
		c.Stop()
		closeBack()
	})
	t.Cleanup(n.stop)
	return n
}

// openRunBackend opens cfg's backend as run does; the function it
// returns closes it once, and runs when the test ends (after the
// coordinators started later have stopped).
func openRunBackend(t *testing.T, cfg *config.Config) (*backend, func()) {
	t.Helper()
	back, err := openBackend(t.Context(), cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	closeBack := sync.OnceFunc(func() {
		if err := back.Close(); err != nil {
			t.Errorf("close backend: %v", err)
		}
	})
	t.Cleanup(closeBack)
	return back, closeBack
}

// storeOf is back's store without the breaker (back.direct), as the
// backend of an in-process coordinator: the actor options run builds name
// the store behind the breaker that the actors use.
func storeOf(t *testing.T, back *backend) *coordtest.Backend {
	t.Helper()
	s, ok := back.direct.(coordtest.Store)
	if !ok {
		t.Fatalf("store %T keeps no coordinator registry", back.direct)
	}
	return coordtest.Opened(s)
}

// call sends a JSON request and decodes a 2xx answer into out (if non-nil);
// it returns the status and the raw body.
func call(t *testing.T, method, url, body string, out any) (int, string) {
	t.Helper()
	st, b := send(t, method, url, body)
	if out != nil && st/100 == 2 {
		if err := json.Unmarshal([]byte(b), out); err != nil {
			t.Fatalf("%s %s: %v in %s", method, url, err, b)
		}
	}
	return st, b
}

// errorCode returns the errorCode of an error body, "" when there is none.
func errorCode(body string) string {
	var e struct{ ErrorCode string }
	_ = json.Unmarshal([]byte(body), &e)
	return e.ErrorCode
}

// groupURL is the admin URL of group key on the API at base.
func groupURL(base string, key group.Key) string {
	return base + "/streams/" + key.StreamPrefix + "/groups/" + key.ConsumerGroup
}

// createGroup creates key with the given shard count through the API at base.
func createGroup(t *testing.T, base string, key group.Key, shards int) {
	t.Helper()
	if st, body := callRetrying(t, "POST", groupURL(base, key), fmt.Sprintf(`{"initialShardCount":%d,"requestedBy":"it"}`, shards)); st != http.StatusCreated {
		t.Fatalf("create %s: %d %s", key, st, body)
	}
}

// callRetrying is call, repeated while the answer is 503 with a
// Retry-After (a group moving between coordinators), as clients do.
func callRetrying(t *testing.T, method, url, body string) (status int, answer string) {
	t.Helper()
	eventually.True(t, method+" "+url+" answered without a retry", func() bool {
		status, answer = call(t, method, url, body, nil)
		return status != http.StatusServiceUnavailable || !strings.Contains(answer, "GROUP_OWNED_ELSEWHERE") && !strings.Contains(answer, "COORDINATOR_UNREACHABLE")
	})
	return status, answer
}

// deleteGroup force-deletes key through the API at base.
func deleteGroup(t *testing.T, base string, key group.Key) {
	t.Helper()
	if st, body := callRetrying(t, "DELETE", groupURL(base, key), `{"requestedBy":"it","reason":"cleanup","force":true}`); st != http.StatusOK {
		t.Errorf("delete %s: %d %s", key, st, body)
	}
}

// groupView returns key's GroupResponse from the API at base.
func groupView(t *testing.T, base string, key group.Key) contract.GroupView {
	t.Helper()
	var v contract.GroupView
	st, body := callRetrying(t, "GET", groupURL(base, key), "")
	if st != http.StatusOK || json.Unmarshal([]byte(body), &v) != nil {
		t.Fatalf("get %s: %d %s", key, st, body)
	}
	return v
}

// memberRecords returns key's member records by id from the API at base.
func memberRecords(t *testing.T, base string, key group.Key) map[string]contract.Member {
	t.Helper()
	var body contract.MemberList
	url := base + contract.Expand(contract.MonitoringMembers, key.StreamPrefix, key.ConsumerGroup)
	if st, b := call(t, "GET", url, "", &body); st != http.StatusOK {
		t.Fatalf("members of %s: %d %s", key, st, b)
	}
	out := make(map[string]contract.Member, len(body.Members))
	for _, m := range body.Members {
		out[m.MemberID] = m
	}
	return out
}

// waitHealth polls the health of the API at base until cond holds and
// returns that report.
func waitHealth(t *testing.T, base, what string, cond func(contract.HealthReport) bool) contract.HealthReport {
	t.Helper()
	var h contract.HealthReport
	eventually.True(t, what, func() bool {
		if st, body := call(t, "GET", base+"/monitoring/health", "", &h); st != http.StatusOK {
			t.Fatalf("health: %d %s", st, body)
		}
		return cond(h)
	})
	return h
}

// answer is one member's heartbeat outcome in a round.
type answer struct {
	member *membersim.Member
	target string // the base URL the heartbeat went to
	resp   contract.HeartbeatResponse
	err    error
}

// round sends one heartbeat from every member at once, member i to
// target(i), and returns the outcomes in member order.
func round(key group.Key, members []*membersim.Member, target func(i int) string) []answer {
	out := make([]answer, len(members))
	var wg sync.WaitGroup
	for i, m := range members {
		out[i] = answer{member: m, target: target(i)}
		wg.Go(func() {
			out[i].resp, out[i].err = membersim.Heartbeat(context.Background(), http.DefaultClient, out[i].target, key, m)
		})
	}
	wg.Wait()
	return out
}

// swarm is the simulated members of one group and how they reach the
// coordinators.
type swarm struct {
	key     group.Key
	shards  int
	members []*membersim.Member
	// target returns the API base URL member i heartbeats to in round r.
	target func(r, i int) string
	// view returns the group as a coordinator serves it.
	view func() contract.GroupView
	// tick, when set, runs after every round (e.g. to advance a clock).
	tick func()
	// rounds counts the rounds sent.
	rounds int
}

// round sends one heartbeat from every member that has not left, member i
// to s.target(s.rounds, i), and returns the outcomes.
func (s *swarm) round() []answer {
	r := s.rounds
	out := round(s.key, present(s.members), func(i int) string { return s.target(r, i) })
	s.rounds++
	if s.tick != nil {
		s.tick()
	}
	return out
}

// converge runs rounds until the members that have not left read every
// shard once, balanced, and the group is STABLE with its assignment epoch
// caught up. Every answer must be 200 with a steady status.
func (s *swarm) converge(t *testing.T) {
	t.Helper()
	const maxRounds = 60
	for range maxRounds {
		for _, a := range s.round() {
			if a.err != nil || !steady(a.resp.Status) {
				t.Fatalf("round %d: %s via %s: %+v, %v", s.rounds-1, a.member.ID, a.target, a.resp, a.err)
			}
		}
		if v := s.view(); membersim.Settled(s.shards, present(s.members)) && v.State == contract.GroupStable && v.AssignmentEpoch == v.GroupEpoch {
			return
		}
	}
	t.Fatalf("not converged after %d rounds", maxRounds)
}

// present returns the members that have not left.
func present(members []*membersim.Member) []*membersim.Member {
	var out []*membersim.Member
	for _, m := range members {
		if !m.Done() {
			out = append(out, m)
		}
	}
	return out
}

// steady reports the statuses a protocol-following member may get while
// no lease expires and nobody is fenced.
func steady(s contract.HeartbeatStatus) bool {
	return s == contract.StatusOK || s == contract.StatusRevokePending || s == contract.StatusRetry
}
