package bench

import (
	"context"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/coordproc"
)

// Fleet members (goals P11a, P11b): every member heartbeats once per
// fleetBeat, the members' phases spread evenly over it, so the three
// coordinators share groups × members ÷ 10 s heartbeats a second (10,000/s
// for 100,000 members, about half of what one coordinator answers on this
// 2-core machine, which also runs the members). The member lease TTL is
// three intervals: a member late by up to two is not expired. fleetWorkers
// drive the members (a retrying member holds one during its backoff);
// fleetSettleTimeout bounds the wait for the groups to settle and, after
// the SIGTERM, for every member to have an OK answer again.
const (
	fleetBeat          = 10 * time.Second
	fleetMemberTTL     = 3 * fleetBeat
	fleetWorkers       = 2048
	fleetSettleTimeout = 3 * time.Minute
)

// FleetMembers is what the fleet scenario's members saw: MembersPerGroup
// members of every group heartbeating every IntervalSeconds to the groups'
// owners (they follow X-Coordinator-Owner, as the Go client does), and
// retrying a refused or failed heartbeat as the Go client does.
type FleetMembers struct {
	MembersPerGroup int     `json:"membersPerGroup"`
	IntervalSeconds float64 `json:"heartbeatIntervalSeconds"`
	LeaseTTLSeconds float64 `json:"memberLeaseTtlSeconds"`
	// SettleSeconds is the time from the first heartbeat until every group
	// was settled (every shard read by one member, every member's last
	// answer OK with nothing pending: they agree); Unsettled counts the
	// groups not settled after fleetSettleTimeout (SettleSeconds is then 0).
	SettleSeconds float64 `json:"settleSeconds"`
	Unsettled     int     `json:"unsettledGroups"`
	// PeakRSS is each coordinator's resident set high-water mark (bytes)
	// with the members: read before the SIGTERM, and again at the end for
	// the coordinators still running.
	PeakRSS map[string]int64 `json:"peakRssBytes"`
	Leave   FleetLeave       `json:"leave"`
	// Statuses counts every heartbeat's outcome over the members' run.
	Statuses map[string]int64 `json:"statuses"`
	Latency  Latency          `json:"latency"`
}

// FleetLeave is the SIGTERM of one coordinator under the members (P11b).
type FleetLeave struct {
	Coordinator string `json:"coordinator"`
	// Groups is how many groups it owned then, of Total.
	Groups int `json:"groups"`
	Total  int `json:"totalGroups"`
	// StopSeconds is the time from the SIGTERM until the process exited;
	// Stopped is false when it did not exit within coordproc's bound and
	// was killed.
	StopSeconds float64 `json:"stopSeconds"`
	Stopped     bool    `json:"stopped"`
	// MaxWait is the longest any member waited for an OK answer (see
	// Sim.wait) from the SIGTERM until every member had an OK answer to a
	// heartbeat sent after the exit: how long a group answered no OK.
	MaxWait float64 `json:"maxWaitSeconds"`
	// Fenced and Retry count the FENCED_MEMBER_EPOCH and RETRY answers in
	// that window, Moves the shards members started or stopped reading.
	Fenced int64 `json:"fenced"`
	Retry  int64 `json:"retry"`
	Moves  int64 `json:"shardMoves"`
	// NeverOK counts the coordinator's groups without an OK answer to a
	// heartbeat sent after its exit by the end of the window.
	NeverOK int `json:"groupsNeverOk"`
	// ClusterLeaseTTL is the cluster lease TTL (seconds): the goal's bound
	// is it plus 2 s.
	ClusterLeaseTTL float64 `json:"clusterLeaseTtlSeconds"`
}

// runFleetMembers is the members' part of the fleet scenario, on the
// three coordinators of s whose groups were created and left idle: it
// starts members members in every group, measures the time until every
// group is settled (P11a), then SIGTERMs the peer coordinator owning the
// most groups and measures what the members see until each has an OK
// answer again (P11b).
func (r *Runner) runFleetMembers(ctx context.Context, s *session, members int) (*FleetMembers, error) {
	m := &FleetMembers{MembersPerGroup: members, IntervalSeconds: fleetBeat.Seconds(), LeaseTTLSeconds: fleetMemberTTL.Seconds(),
		PeakRSS: map[string]int64{}, Leave: FleetLeave{ClusterLeaseTTL: clusterLeaseTTL.Seconds()}}
	s.fleets, s.members = make([]*Fleet, s.groups), members
	for g := range s.fleets {
		s.fleets[g] = NewFleet(s.api, streamGroupKey(g), members, s.shards, fleetMemberTTL, r.oracle, r.epoch)
		s.fleets[g].coords = s.coords
	}
	rate := float64(s.size()) / fleetBeat.Seconds()
	r.logf("fleet: %d members (%d per group), %.0f heartbeats/s to the owners", s.size(), members, rate)
	rec := NewRecorder()
	var running atomic.Bool
	running.Store(true)
	done := make(chan struct{})
	first := r.now()
	go func() {
		defer close(done)
		openLoopPool(ctx, s.size(), rate, fleetWorkers, running.Load, s.fireRetrying(running.Load), rec)
	}()
	defer func() {
		running.Store(false)
		<-done
		m.Statuses, m.Latency = rec.Statuses(), rec.Latency.Summary()
		r.logf("fleet: members' heartbeats %v, latency p99 %.1f ms", m.Statuses, m.Latency.P99)
	}()

	m.SettleSeconds, m.Unsettled = s.waitSettled(ctx, first)
	r.logf("fleet: settled %.1f s after the first heartbeat (%d groups not settled)", m.SettleSeconds, m.Unsettled)
	if err := sleepCtx(ctx, fleetBeat); err != nil { // one quiet round
		return m, err
	}
	readPeakRSS(m.PeakRSS, s)
	return m, r.fleetLeave(ctx, s, &m.Leave, rec, m.PeakRSS)
}

// waitSettled waits until every group of s is settled (see
// session.settled) since first, at most fleetSettleTimeout: it returns the
// seconds from first, or 0 and the groups not settled then.
func (s *session) waitSettled(ctx context.Context, first time.Duration) (float64, int) {
	deadline := time.Now().Add(fleetSettleTimeout)
	for !s.settled(s.size(), first) {
		if time.Now().After(deadline) || ctx.Err() != nil {
			unsettled := 0
			for _, f := range s.fleets {
				if !f.Settled(f.sims, first) {
					unsettled++
				}
			}
			return 0, unsettled
		}
		time.Sleep(200 * time.Millisecond)
	}
	return (s.r.now() - first).Seconds(), 0
}

// fleetLeave SIGTERMs the peer coordinator owning the most groups while
// the members run, fills lv from the members' view until every member had
// an OK answer since its exit (at most fleetSettleTimeout), and raises
// rss with the survivors' peak resident sets.
func (r *Runner) fleetLeave(ctx context.Context, s *session, lv *FleetLeave, rec *Recorder, rss map[string]int64) error {
	owners, err := s.groupOwners(ctx)
	if err != nil {
		return err
	}
	victim, watched := s.busiestPeer(owners)
	srv, _ := s.coordinator(victim)
	lv.Coordinator, lv.Groups, lv.Total = srv.ID, len(watched), len(owners)
	movesBefore, before := s.moves(), rec.Statuses()
	s.waits()
	r.logf("fleet: SIGTERM %s (owner of %d of %d groups)", lv.Coordinator, lv.Groups, lv.Total)
	sent := time.Now()
	if err := s.stopCoordinator(victim, false); err != nil {
		r.logf("fleet: stopping %s: %v", lv.Coordinator, err)
	} else {
		lv.Stopped = true
	}
	lv.StopSeconds = time.Since(sent).Seconds()
	s.peers[victim-1].srv = nil // exited: neither sampled nor stopped again
	exited := r.now()
	for _, f := range watched {
		f.WatchOK(exited)
	}
	deadline := time.Now().Add(fleetSettleTimeout)
	for !s.answeredSince(exited) && time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(200 * time.Millisecond)
	}
	_, lv.NeverOK = recovered(watched)
	lv.MaxWait, lv.Moves = s.waits().Seconds(), s.moves()-movesBefore
	for st, n := range rec.Statuses() {
		switch d := n - before[st]; {
		case strings.HasPrefix(st, "FENCED"):
			lv.Fenced += d
		case st == string(contract.StatusRetry):
			lv.Retry += d
		}
	}
	readPeakRSS(rss, s)
	r.logf("fleet: %s stopped in %.1f s; longest wait for an OK %.2f s, %d FENCED, %d RETRY, %d shard moves, %d groups never OK",
		lv.Coordinator, lv.StopSeconds, lv.MaxWait, lv.Fenced, lv.Retry, lv.Moves, lv.NeverOK)
	return nil
}

// readPeakRSS raises rss to the peak resident set of each running
// coordinator of s.
func readPeakRSS(rss map[string]int64, s *session) {
	for _, srv := range append([]*coordproc.Server{s.srv}, peerServers(s)...) {
		if pu, err := readProc(srv.Pid()); err == nil {
			rss[srv.ID] = max(rss[srv.ID], pu.PeakRSS)
		}
	}
}
