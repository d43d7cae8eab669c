package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis-stream-coordinator/coordinator/internal/testkit/coordproc"
)

// FleetFigures are the fleet scenario's measures (issue 34): FleetGroups
// groups of FleetShards shards, each on a stream prefix of its own,
// created on one coordinator with defaults.max-groups set to their number,
// then left idle on three coordinators.
type FleetFigures struct {
	Groups int `json:"groups"`
	Shards int `json:"shards"`
	// CreateSeconds is how long the creates took (CreateParallel at
	// once); CreateFailed counts the creates that failed, OverCapRefused
	// whether one more create past max-groups was refused with 409.
	CreateSeconds  float64 `json:"createSeconds"`
	CreateParallel int     `json:"createParallel"`
	CreateFailed   int64   `json:"createFailed"`
	OverCapRefused bool    `json:"overCapRefused"`
	// IdleSeconds is the idle window measured, RefreshSeconds the lag
	// refresher's interval (monitoring.offset-cache-ttl).
	IdleSeconds    float64 `json:"idleSeconds"`
	RefreshSeconds float64 `json:"refreshSeconds"`
	// Idle are the Redis server's counters over the idle window: its CPU
	// time, commands and read events (round trips).
	IdleCPUSeconds float64          `json:"idleRedisCpuSeconds"`
	IdleCommands   int64            `json:"idleCommands"`
	IdleRoundTrips int64            `json:"idleRoundTrips"`
	IdleByCommand  map[string]int64 `json:"idleByCommand,omitempty"`
	// PeakRSS is each coordinator's resident set high-water mark (bytes)
	// at the end of the idle window, by coordinator id.
	PeakRSS map[string]int64 `json:"peakRssBytes"`
	// Members is what the members started after the idle window saw
	// (P11a, P11b), nil when they did not run.
	Members *FleetMembers `json:"members,omitempty"`
}

// Fleet scenario defaults: a refresh every 15 s (the default
// offset-cache-ttl), creates 16 at a time, an idle window of four refresh
// intervals after two to let the three coordinators' first rounds pass.
const (
	fleetRefresh  = 15 * time.Second
	fleetParallel = 16
	fleetWarmup   = 2 * fleetRefresh
	fleetIdle     = 4 * fleetRefresh
)

// runFleet runs the fleet scenario: P11e (creates with max-groups set),
// then P11d (idle cost on three coordinators, no member) and the peak RSS
// idle, then FleetMembers members in every group (see runFleetMembers:
// P11a, P11b and the peak RSS with members, P11c).
func (r *Runner) runFleet(ctx context.Context) error {
	o := r.opts
	f := &FleetFigures{Groups: o.FleetGroups, Shards: o.FleetShards, CreateParallel: fleetParallel,
		RefreshSeconds: fleetRefresh.Seconds(), PeakRSS: map[string]int64{}}
	r.report.Fleet = f
	s, err := r.openSession(ctx, "fleet", coordproc.StoreRedis, true, o.FleetShards, fleetMemberTTL, func(c *coordproc.ServerConfig) {
		c.MaxGroups, c.OffsetCacheTTL, c.Interval = o.FleetGroups, fleetRefresh, fleetBeat
	})
	if err != nil {
		return err
	}
	defer s.close(ctx)
	s.groups = o.FleetGroups
	start := time.Now()
	var next, failed atomic.Int64
	var wg sync.WaitGroup
	for range fleetParallel {
		wg.Go(func() {
			for g := next.Add(1) - 1; g < int64(o.FleetGroups) && ctx.Err() == nil; g = next.Add(1) - 1 {
				if err := s.api.CreateGroup(ctx, streamGroupKey(int(g)), o.FleetShards); err != nil {
					if failed.Add(1) <= 3 {
						r.logf("fleet: %v", err)
					}
				}
			}
		})
	}
	wg.Wait()
	f.CreateSeconds, f.CreateFailed = time.Since(start).Seconds(), failed.Load()
	var refused *adminError
	err = s.api.CreateGroup(ctx, streamGroupKey(o.FleetGroups), o.FleetShards)
	f.OverCapRefused = errors.As(err, &refused) && refused.status == http.StatusConflict
	r.logf("fleet: %d groups of %d shards created in %.1f s (%d failed); one more: %v", o.FleetGroups, o.FleetShards, f.CreateSeconds, f.CreateFailed, err)

	if err := s.startPeers(ctx, 2, true); err != nil {
		return err
	}
	r.logf("fleet: 3 coordinators; idle for %v, then measured for %v", fleetWarmup, fleetIdle)
	if err := sleepCtx(ctx, fleetWarmup); err != nil {
		return err
	}
	before, err := s.probe.Sample(ctx)
	if err != nil {
		return err
	}
	if err := sleepCtx(ctx, fleetIdle); err != nil {
		return err
	}
	after, err := s.probe.Sample(ctx)
	if err != nil {
		return err
	}
	d := after.Sub(before)
	f.IdleSeconds, f.IdleCPUSeconds, f.IdleCommands, f.IdleRoundTrips, f.IdleByCommand =
		fleetIdle.Seconds(), d.CPU.Seconds(), d.Commands, d.Reads, d.ByCommand
	readPeakRSS(f.PeakRSS, s)
	r.logf("fleet: idle %.0f s: Redis CPU %.2f s, %d commands, %d round trips; peak RSS %v", f.IdleSeconds, f.IdleCPUSeconds, f.IdleCommands, f.IdleRoundTrips, f.PeakRSS)
	f.Members, err = r.runFleetMembers(ctx, s, o.FleetMembers)
	return err
}

// peerServers are the running processes of s's peers.
func peerServers(s *session) []*coordproc.Server {
	var out []*coordproc.Server
	for _, p := range s.peers {
		if p.srv != nil {
			out = append(out, p.srv)
		}
	}
	return out
}

// sleepCtx waits d, or until ctx ends (its error).
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// fleetGoals evaluates P11a–e (issue 34) from the fleet scenario. P11c
// is the peak RSS with members when they ran (the idle peak is in its
// detail), else the idle peak.
func (r *Report) fleetGoals() []Goal {
	f := r.Fleet
	ok := f != nil && f.IdleSeconds > 0
	if f == nil {
		f = &FleetFigures{}
	}
	shards := float64(f.Groups * f.Shards)
	intervals := f.IdleSeconds / f.RefreshSeconds
	perHundred := 0.0
	if ok && shards > 0 && intervals > 0 {
		perHundred = float64(f.IdleRoundTrips) / intervals / (shards / 100)
	}
	cpu := ratio(f.IdleCPUSeconds, f.IdleSeconds) * 100
	settle, leave := fleetMemberGoals(f)
	return []Goal{
		settle,
		leave,
		fleetRSSGoal(f, ok),
		fleetIdleGoal(perHundred, cpu, ok, fmt.Sprintf("%d round trips (Redis read events), %d commands in %.0f s = %.1f refresh intervals of %.0f s, %.0f shards (%d groups × %d, no member, 3 coordinators); Redis CPU %.2f %% of a core (at most 5 %%)",
			f.IdleRoundTrips, f.IdleCommands, f.IdleSeconds, intervals, f.RefreshSeconds, shards, f.Groups, f.Shards, cpu)),
		createGoal(f),
	}
}

// createGoal is P11e: the creates of the fleet's groups with max-groups
// set take at most 60 s, none fails, and one more create past max-groups
// is refused with 409.
func createGoal(f *FleetFigures) Goal {
	return goal("P11e", "creating 10,000 groups with max-groups set (s; 0 failed, one more refused with 409)", f.CreateSeconds, 60, true, f.CreateSeconds > 0,
		fmt.Sprintf("%d groups of %d shards, %d at once, %d failed; one more refused with 409: %v", f.Groups, f.Shards, f.CreateParallel, f.CreateFailed, f.OverCapRefused)).
		missIf(f.CreateFailed > 0, fmt.Sprintf("%d creates failed", f.CreateFailed)).
		missIf(f.CreateSeconds > 0 && !f.OverCapRefused, "the create past max-groups was not refused with 409")
}

// fleetMemberGoals are P11a (the groups settle within 60 s of the
// members' first heartbeat) and P11b (after the SIGTERM of one of the
// three coordinators no member waits longer than the cluster lease TTL +
// 2 s for an OK answer, with 0 FENCED answers, 0 shard moves and every
// group of the coordinator OK again), not measured without members (MISS
// when the fleet scenario ran, see scenarioGoals).
func fleetMemberGoals(f *FleetFigures) (settle, leave Goal) {
	m := f.Members
	if m == nil {
		none := "the fleet scenario ran no members"
		return goal("P11a", "10,000 groups × 10 members settle on 3 coordinators (s)", 0, 60, true, false, none),
			goal("P11b", "SIGTERM of one of 3 coordinators: longest wait of a member for an OK (s; 0 FENCED, 0 shard moves)", 0, clusterLeaseTTL.Seconds()+2, true, false, none)
	}
	load := fmt.Sprintf("%d groups × %d members (%d shards each) heartbeating every %.0f s to the owners, member lease TTL %.0f s",
		f.Groups, m.MembersPerGroup, f.Shards, m.IntervalSeconds, m.LeaseTTLSeconds)
	measured, detail := m.SettleSeconds, "from the first heartbeat until every group's shards are read, once each, and every member's last answer is OK with nothing pending; "+load
	if m.Unsettled > 0 {
		measured, detail = fleetSettleTimeout.Seconds(), fmt.Sprintf("%d groups not settled after %.0f s; %s", m.Unsettled, fleetSettleTimeout.Seconds(), load)
	}
	settle = goal("P11a", "10,000 groups × 10 members settle on 3 coordinators (s)", measured, 60, true, true, detail)
	lv := m.Leave
	bound := lv.ClusterLeaseTTL + 2
	leave = goal("P11b", "SIGTERM of one of 3 coordinators: longest wait of a member for an OK (s; 0 FENCED, 0 shard moves)", lv.MaxWait, bound, true, lv.Coordinator != "",
		fmt.Sprintf("%s owned %d of %d groups, stopped in %.1f s (exited by itself: %v); %d FENCED, %d RETRY, %d shard moves, %d of its groups never OK again; at most the cluster lease TTL %.0f s + 2 s",
			lv.Coordinator, lv.Groups, lv.Total, lv.StopSeconds, lv.Stopped, lv.Fenced, lv.Retry, lv.Moves, lv.NeverOK, lv.ClusterLeaseTTL))
	if leave.Status == Pass && (lv.Fenced > 0 || lv.Moves > 0 || lv.NeverOK > 0 || !lv.Stopped) {
		leave.Status = Miss
	}
	return settle, leave
}

// fleetRSSGoal is P11c: every coordinator's peak RSS at most 300 MiB,
// with the members when they ran.
func fleetRSSGoal(f *FleetFigures, ok bool) Goal {
	rss, detail := f.PeakRSS, fmt.Sprintf("groups idle without members; %d groups × %d shards on 3 coordinators, all created through the first", f.Groups, f.Shards)
	if m := f.Members; m != nil {
		rss = m.PeakRSS
		detail = fmt.Sprintf("with %d members per group; idle before them: %s", m.MembersPerGroup, fmtRSS(f.PeakRSS))
	}
	var peak int64
	for _, b := range rss {
		peak = max(peak, b)
	}
	return goal("P11c", "peak RSS per coordinator (MiB)", float64(peak)/(1<<20), 300, true, ok && peak > 0, fmtRSS(rss)+"; "+detail)
}

// fleetIdleGoal is P11d: at most one store round trip per 100 shards per
// refresh interval and at most 5 % of a core of Redis CPU, idle.
func fleetIdleGoal(perHundred, cpu float64, ok bool, detail string) Goal {
	g := goal("P11d", "idle groups: store round trips per 100 shards per refresh interval (and Redis CPU ≤ 5 % of a core)", perHundred, 1, true, ok, detail)
	if g.Status == Pass && cpu > 5 {
		g.Status = Miss
	}
	return g
}

// fmtRSS lists peak resident sets in MiB by coordinator.
func fmtRSS(rss map[string]int64) string {
	out := "peak RSS"
	for _, id := range []string{"c1", "c2", "c3"} {
		if b, ok := rss[id]; ok {
			out += fmt.Sprintf(" %s %.0f MiB", id, float64(b)/(1<<20))
		}
	}
	return out
}

// printFleet writes the fleet scenario's figures, if any.
func (r *Report) printFleet(w io.Writer) {
	f := r.Fleet
	if f == nil || f.IdleSeconds == 0 {
		return
	}
	fmt.Fprintf(w, "\nfleet: %d groups × %d shards created in %.1f s (max-groups set; one more refused: %v); idle %.0f s on 3 coordinators: Redis CPU %.2f s, %d commands, %d round trips; %s\n",
		f.Groups, f.Shards, f.CreateSeconds, f.OverCapRefused, f.IdleSeconds, f.IdleCPUSeconds, f.IdleCommands, f.IdleRoundTrips, fmtRSS(f.PeakRSS))
	if m := f.Members; m != nil {
		lv := m.Leave
		fmt.Fprintf(w, "fleet members: %d per group every %.0f s, settled in %.1f s (%d groups not); SIGTERM %s (%d groups): stopped in %.1f s, longest wait for an OK %.2f s, %d FENCED, %d RETRY, %d moves, %d groups never OK; %s; heartbeats %v, p99 %.1f ms\n",
			m.MembersPerGroup, m.IntervalSeconds, m.SettleSeconds, m.Unsettled, lv.Coordinator, lv.Groups, lv.StopSeconds, lv.MaxWait, lv.Fenced, lv.Retry, lv.Moves, lv.NeverOK, fmtRSS(m.PeakRSS), m.Statuses, m.Latency.P99)
	}
}
