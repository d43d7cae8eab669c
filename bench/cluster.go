package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sort"
	"sync/atomic"
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
)

// clusterLeaseTTL is the coordinator's default cluster.lease-ttl, which the
// bench leaves as it is: a SIGKILLed coordinator's groups move after it
// (goal P8d).
const clusterLeaseTTL = 5 * time.Second

// ClusterFigures are the cluster scenario's figures (goals P8b–d).
type ClusterFigures struct {
	Coordinators int `json:"coordinators"`
	Groups       int `json:"groups"`
	// Owned is how many groups each coordinator owned after cluster/closed,
	// by id, from GET contract.ClusterTemplate.
	Owned map[string]int `json:"groupsOwned"`
	// Rolling is the rolling restart of every coordinator (P8c), Kill the
	// SIGKILL of one (P8d).
	Rolling ClusterStep `json:"rollingRestart"`
	Kill    ClusterStep `json:"kill"`
	// Killed is the id of the coordinator Kill stopped, KilledGroups how
	// many groups it owned then.
	Killed       string `json:"killed"`
	KilledGroups int    `json:"killedGroups"`
	// Recovery is, over the groups the killed coordinator owned, the
	// longest time from the SIGKILL to the group's first OK answer to a
	// heartbeat sent after it; Unrecovered counts those without one.
	Recovery    float64 `json:"recoverySeconds"`
	Unrecovered int     `json:"unrecoveredGroups"`
	// LeaseTTL is the cluster lease TTL (seconds).
	LeaseTTL float64 `json:"clusterLeaseTtlSeconds"`
}

// ClusterStep is what the members saw during one change of the cluster.
type ClusterStep struct {
	// Moves counts the shards members started or stopped reading.
	Moves int64 `json:"shardMoves"`
	// MaxWait is the longest any member waited for an OK answer (seconds,
	// see Sim.wait).
	MaxWait float64 `json:"maxWaitSeconds"`
	// Done reports that the change finished (every restart, the kill).
	Done bool `json:"done"`
}

// runCluster is the cluster scenario (goals P8b–d). ClusterSize groups,
// each on a stream prefix of its own (placement is by stream prefix),
// join one coordinator, which is measured alone in closed loop
// (cluster-ref/closed). Coordinators−1 more coordinators then join the
// cluster and the members follow the groups' owners (cluster/closed, and
// the groups each coordinator owns from GET /cluster). Under the same
// closed loop every coordinator is restarted in turn (SIGTERM, start with
// the same id and port, /readyz; cluster/rolling), then one is SIGKILLed
// (cluster/kill).
func (r *Runner) runCluster(ctx context.Context) error {
	o := r.opts
	z := o.ClusterSize
	s, err := r.openSession(ctx, "cluster-"+o.Store, o.Store, true, z.Shards, r.setupTTL(z.Groups*z.Members))
	if err != nil {
		return err
	}
	defer s.close(ctx)
	s.prefixPerGroup = true
	if err := r.join(ctx, s, "cluster-ref/setup", z); err != nil {
		return err
	}
	if err := r.phase(s.settle(ctx, "cluster-ref/settle")); err != nil {
		return err
	}
	if err := r.phase(r.closed(ctx, s, "cluster-ref/closed", s.fire)); err != nil {
		return err
	}
	fig := &ClusterFigures{Coordinators: o.Coordinators, Groups: z.Groups, LeaseTTL: clusterLeaseTTL.Seconds()}
	r.report.Cluster = fig
	if err := s.startPeers(ctx, o.Coordinators-1, true); err != nil {
		return err
	}
	if err := r.phase(s.settle(ctx, "cluster/settle")); err != nil {
		return err
	}
	if err := r.phase(r.closed(ctx, s, "cluster/closed", s.fire)); err != nil {
		return err
	}
	if fig.Owned, err = s.owned(ctx); err != nil {
		return err
	}
	r.logf("cluster: groups owned %v", fig.Owned)
	if err := r.rolling(ctx, s, fig); err != nil {
		return err
	}
	return r.kill(ctx, s, fig)
}

// rolling restarts every coordinator in turn under the closed loop
// (phase cluster/rolling, goal P8c): SIGTERM, start with the same id and
// port, wait for /readyz 200, next. The loop goes on after the last
// restart until every member had an OK answer since (at most the settle
// timeout).
func (r *Runner) rolling(ctx context.Context, s *session, fig *ClusterFigures) error {
	return r.phase(s.underLoad(ctx, "cluster/rolling", &fig.Rolling, func() (time.Duration, error) {
		for i := range 1 + len(s.peers) {
			srv, _ := s.coordinator(i)
			r.logf("cluster/rolling: restarting %s", srv.ID)
			if err := s.stopCoordinator(i, false); err != nil {
				return 0, err
			}
			if err := s.startCoordinator(ctx, i); err != nil {
				return 0, err
			}
		}
		return r.now(), nil
	}))
}

// kill SIGKILLs the peer coordinator that owns the most groups under the
// closed loop (phase cluster/kill, goal P8d) and measures, for each group
// it owned, how long until the group answered OK again. The loop goes on
// until every member had an OK answer since the last of those (at most
// the settle timeout).
func (r *Runner) kill(ctx context.Context, s *session, fig *ClusterFigures) error {
	owners, err := s.groupOwners(ctx)
	if err != nil {
		return err
	}
	victim, watched := s.busiestPeer(owners)
	srv, _ := s.coordinator(victim)
	fig.Killed = srv.ID
	fig.KilledGroups = len(watched)
	return r.phase(s.underLoad(ctx, "cluster/kill", &fig.Kill, func() (time.Duration, error) {
		time.Sleep(r.opts.Interval) // the loop runs at full speed first
		r.logf("cluster/kill: SIGKILL %s (owner of %d groups)", fig.Killed, fig.KilledGroups)
		if err := s.stopCoordinator(victim, true); err != nil {
			return 0, err
		}
		at := r.now() // the process is gone: nothing sent since reached it
		for _, f := range watched {
			f.WatchOK(at)
		}
		deadline := time.Now().Add(r.settleTimeout(s.size()))
		var last time.Duration
		for {
			last, fig.Unrecovered = recovered(watched)
			if fig.Unrecovered == 0 || time.Now().After(deadline) || ctx.Err() != nil {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		fig.Recovery = max(last-at, 0).Seconds()
		return max(last, at), nil
	}))
}

// recovered returns the latest first OK of the watched fleets and how
// many have none yet.
func recovered(fleets []*Fleet) (last time.Duration, missing int) {
	for _, f := range fleets {
		at, ok := f.FirstOK()
		if !ok {
			missing++
			continue
		}
		last = max(last, at)
	}
	return last, missing
}

// underLoad runs change under the session's closed loop as phase name and
// fills step: change returns the time from which every member must have an
// OK answer before the loop stops (at most the settle timeout later).
func (s *session) underLoad(ctx context.Context, name string, step *ClusterStep, change func() (time.Duration, error)) (Phase, error) {
	o := s.r.opts
	movesBefore := s.moves()
	s.waits()
	var running atomic.Bool
	running.Store(true)
	p, err := s.measure(ctx, name, "closed", 0, func() (*Recorder, error) {
		done := make(chan *Recorder, 1)
		go func() {
			done <- closedLoopWhile(ctx, s.size(), o.Connections, running.Load, s.fireRetrying(running.Load))
		}()
		since, err := change()
		if err == nil {
			step.Done = true
			deadline := time.Now().Add(s.r.settleTimeout(s.size()))
			for !s.answeredSince(since) && time.Now().Before(deadline) && ctx.Err() == nil {
				time.Sleep(50 * time.Millisecond)
			}
		}
		running.Store(false)
		return <-done, err
	})
	step.Moves = s.moves() - movesBefore
	step.MaxWait = s.waits().Seconds()
	s.r.logf("%s: %d shard moves, longest wait for an OK %.2f s", name, step.Moves, step.MaxWait)
	return p, err
}

// fireRetrying is a fireFunc over the session's members (as fire) in
// which a member whose heartbeat was refused or failed tries again, as the
// Go client does, after a jittered backoff doubling from 100 ms up to the
// heartbeat interval, until it has an OK answer or running reports false.
// The worker driving it waits meanwhile.
func (s *session) fireRetrying(running func() bool) fireFunc {
	return func(ctx context.Context, i int, intended time.Time, rec *Recorder) {
		sim := s.fleets[i%len(s.fleets)].sims[i/len(s.fleets)]
		for n := 1; ; n++ {
			s.fire(ctx, i, intended, rec)
			if sim.waitFrom.Load() < 0 || !running() || !sleepUntil(ctx, time.Now().Add(retryBackoff(n, s.r.opts.Interval))) {
				return
			}
			intended = time.Now()
		}
	}
}

// retryBackoff is the pause before the n-th retry (n ≥ 1): 100 ms doubling
// up to interval, at a random point of its upper half.
func retryBackoff(n int, interval time.Duration) time.Duration {
	d := min(100*time.Millisecond<<min(n-1, 10), max(interval, 100*time.Millisecond))
	return d/2 + rand.N(d/2+1)
}

// moves sums the fleets' shard moves so far.
func (s *session) moves() int64 {
	var n int64
	for _, f := range s.fleets {
		n += f.Moves()
	}
	return n
}

// waits returns the longest wait for an OK over the fleets since the last
// call (see Fleet.Waits).
func (s *session) waits() time.Duration {
	var longest time.Duration
	for _, f := range s.fleets {
		longest = max(longest, f.Waits())
	}
	return longest
}

// answeredSince reports whether every member had an OK answer at or
// after t.
func (s *session) answeredSince(t time.Duration) bool {
	for _, f := range s.fleets {
		for _, sim := range f.sims {
			if time.Duration(sim.lastOK.Load()) < t {
				return false
			}
		}
	}
	return true
}

// view reads GET contract.ClusterTemplate from the session's coordinator.
func (s *session) view(ctx context.Context) (contract.ClusterView, error) {
	var v contract.ClusterView
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.api.Base+contract.ClusterTemplate, nil)
	if err != nil {
		return v, err
	}
	req.SetBasicAuth(s.api.User, s.api.Password)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return v, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return v, fmt.Errorf("GET /cluster: HTTP %d", res.StatusCode)
	}
	return v, json.NewDecoder(res.Body).Decode(&v)
}

// owned returns how many groups each live coordinator owns, by id.
func (s *session) owned(ctx context.Context) (map[string]int, error) {
	v, err := s.view(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	for _, c := range v.Coordinators {
		out[c.ID] = c.GroupsOwned
	}
	return out, nil
}

// groupOwners returns each group's owner id.
func (s *session) groupOwners(ctx context.Context) (map[group.Key]string, error) {
	v, err := s.view(ctx)
	if err != nil {
		return nil, err
	}
	out := map[group.Key]string{}
	for _, g := range v.Groups {
		out[group.Key{StreamPrefix: g.StreamPrefix, ConsumerGroup: g.ConsumerGroup}] = g.Owner
	}
	return out, nil
}

// busiestPeer returns the peer (coordinator index ≥ 1) owning the most
// groups by owners, and the fleets of its groups.
func (s *session) busiestPeer(owners map[group.Key]string) (int, []*Fleet) {
	victim := 1
	for i := 2; i <= len(s.peers); i++ {
		if countOwned(owners, s.peers[i-1].cfg.ID) > countOwned(owners, s.peers[victim-1].cfg.ID) {
			victim = i
		}
	}
	var fleets []*Fleet
	for _, f := range s.fleets {
		if owners[f.key] == s.peers[victim-1].cfg.ID {
			fleets = append(fleets, f)
		}
	}
	return victim, fleets
}

// countOwned counts the groups id owns.
func countOwned(owners map[group.Key]string, id string) int {
	n := 0
	for _, o := range owners {
		if o == id {
			n++
		}
	}
	return n
}

// ownedSpread is the largest distance of a coordinator's group count from
// groups ÷ coordinators (a coordinator absent from owned owns none), and
// the counts in id order.
func ownedSpread(owned map[string]int, coordinators, groups int) (float64, string) {
	ids := make([]string, 0, len(owned))
	for id := range owned {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	mean := float64(groups) / float64(max(coordinators, 1))
	worst, detail := 0.0, ""
	for _, id := range ids {
		worst = max(worst, abs(float64(owned[id])-mean))
		detail += fmt.Sprintf("%s %d, ", id, owned[id])
	}
	if missing := coordinators - len(ids); missing > 0 {
		worst = max(worst, mean)
		detail += fmt.Sprintf("%d owning none, ", missing)
	}
	if detail != "" {
		detail = detail[:len(detail)-2]
	}
	return worst, detail
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
