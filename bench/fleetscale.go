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

	"github.com/redis-stream-coordinator/coordinator/internal/coordproc"
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
	// at the end, by coordinator id.
	PeakRSS map[string]int64 `json:"peakRssBytes"`
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
// then P11d (idle cost on three coordinators) and P11c (peak RSS, without
// members). The goals that need members (P11a, P11b, P8e) are not run.
func (r *Runner) runFleet(ctx context.Context) error {
	o := r.opts
	f := &FleetFigures{Groups: o.FleetGroups, Shards: o.FleetShards, CreateParallel: fleetParallel,
		RefreshSeconds: fleetRefresh.Seconds(), PeakRSS: map[string]int64{}}
	r.report.Fleet = f
	s, err := r.openSession(ctx, "fleet", coordproc.StoreRedis, true, o.FleetShards, o.LeaseTTL, func(c *coordproc.ServerConfig) {
		c.MaxGroups, c.OffsetCacheTTL = o.FleetGroups, fleetRefresh
	})
	if err != nil {
		return err
	}
	defer s.close(ctx)
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
	for _, srv := range append([]*coordproc.Server{s.srv}, peerServers(s)...) {
		if pu, err := readProc(srv.Pid()); err == nil {
			f.PeakRSS[srv.ID] = pu.PeakRSS
		}
	}
	r.logf("fleet: idle %.0f s: Redis CPU %.2f s, %d commands, %d round trips; peak RSS %v", f.IdleSeconds, f.IdleCPUSeconds, f.IdleCommands, f.IdleRoundTrips, f.PeakRSS)
	return nil
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

// fleetGoals evaluates P11a–e (issue 34) from the fleet scenario.
// P11a and P11b need members, which the scenario does not run yet.
func (r *Report) fleetGoals() []Goal {
	f := r.Fleet
	ok := f != nil && f.IdleSeconds > 0
	if f == nil {
		f = &FleetFigures{}
	}
	notRun := "not measured: the fleet scenario runs no members yet"
	shards := float64(f.Groups * f.Shards)
	intervals := f.IdleSeconds / f.RefreshSeconds
	perHundred := 0.0
	if ok && shards > 0 && intervals > 0 {
		perHundred = float64(f.IdleRoundTrips) / intervals / (shards / 100)
	}
	var peak int64
	for _, b := range f.PeakRSS {
		peak = max(peak, b)
	}
	cpu := ratio(f.IdleCPUSeconds, f.IdleSeconds) * 100
	return []Goal{
		goal("P11a", "10,000 groups × 10 members settle on 3 coordinators (s)", 0, 60, true, false, notRun),
		goal("P11b", "SIGTERM of one of 3 coordinators: every group OK again (s over the cluster lease TTL)", 0, 2, true, false, notRun),
		goal("P11c", "peak RSS per coordinator (MiB), groups idle without members", float64(peak)/(1<<20), 300, true, ok && peak > 0,
			fmt.Sprintf("%s; %d groups × %d shards on 3 coordinators, all created through the first", fmtRSS(f.PeakRSS), f.Groups, f.Shards)),
		fleetIdleGoal(perHundred, cpu, ok, fmt.Sprintf("%d round trips (Redis read events), %d commands in %.0f s = %.1f refresh intervals of %.0f s, %.0f shards (%d groups × %d, no member, 3 coordinators); Redis CPU %.2f %% of a core (at most 5 %%)",
			f.IdleRoundTrips, f.IdleCommands, f.IdleSeconds, intervals, f.RefreshSeconds, shards, f.Groups, f.Shards, cpu)),
		goal("P11e", "creating 10,000 groups with max-groups set (s)", f.CreateSeconds, 60, true, f.CreateSeconds > 0 && f.CreateFailed == 0,
			fmt.Sprintf("%d groups of %d shards, %d at once, %d failed; one more refused with 409: %v", f.Groups, f.Shards, f.CreateParallel, f.CreateFailed, f.OverCapRefused)),
	}
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
}
