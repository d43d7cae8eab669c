package bench

import (
	"fmt"
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
)

// multiGoals evaluates P8a (issue #18): three coordinators on one group,
// every heartbeat to one of them at random, against one coordinator in a
// phase of the same length (multi-ref/closed); and P8e (issue 34): the
// same with the members following the group's owner. A multi/settle that
// failed misses them all.
func (r *Report) multiGoals(perCore func(Phase) float64) []Goal {
	ref, okR := r.phase("multi-ref/closed")
	settle, okSettle := r.phase("multi/settle")
	multi, okM := r.phase("multi/closed")
	owner, okO := r.phase("multi-owner/closed")
	settleGoal := goal("P8a-settle", "multi/settle settles (s, within the settle timeout)", settle.Seconds,
		settleTimeout(r.Options, settle.Groups*settle.Members).Seconds(), true, okSettle, "settled")
	if settle.Failed != "" {
		settleGoal.Status, settleGoal.Detail = Miss, settle.Failed
	}
	crossing := "does not cross"
	if end := r.SetupLeasesEnd; end > 0 && multi.StartSeconds <= end && end <= multi.StartSeconds+multi.Seconds {
		crossing = "crosses"
	}
	phase := fmt.Sprintf("multi/closed %.0f–%.0f s of the run %s the setup leases' end at %.0f s; %d answers, %d errors",
		multi.StartSeconds, multi.StartSeconds+multi.Seconds, crossing, r.SetupLeasesEnd, multi.Requests, multi.Errors)
	goals := []Goal{
		goal("P8a-fenced", "FENCED answers after settle, 3 coordinators, random", count(multi, contract.StatusFencedMemberEpoch), 0, true, okM, phase),
		goal("P8a-retry", "RETRY answers after settle, 3 coordinators, random", count(multi, contract.StatusRetry), 0, true, okM, phase),
		goal("P8a-p99", "p99 over one coordinator's, closed loop", ratio(multi.Latency.P99, ref.Latency.P99), 2, true, okM && okR && ref.Latency.P99 > 0,
			fmt.Sprintf("multi/closed %.1f ms ÷ multi-ref/closed %.1f ms", multi.Latency.P99, ref.Latency.P99)),
		goal("P8a-core", fmt.Sprintf("%d coordinators on one group, heartbeats/s per core over one coordinator's", r.Options.Coordinators),
			ratio(perCore(multi), perCore(ref)), 0.7, false, okM && okR && perCore(ref) > 0,
			fmt.Sprintf("%.0f/s on %.2f cores vs multi-ref/closed %.0f/s on %.2f cores", multi.Throughput, multi.CPUCores, ref.Throughput, ref.CPUCores)),
		ownerGoal(owner, okO, ref, okR, perCore, r.Options.Coordinators),
	}
	for i, g := range goals {
		goals[i] = g.missIf(settle.Failed != "", "not measured: multi/settle failed, the phases after it did not run")
	}
	return append([]Goal{settleGoal}, goals...)
}

// ownerGoal is P8e: heartbeats/s per core of the coordinators with the
// members following the owner (phase owner) over one coordinator's in a
// phase of the same length (ref), and no FENCED answer in the phase.
func ownerGoal(owner Phase, okO bool, ref Phase, okR bool, perCore func(Phase) float64, coords int) Goal {
	fenced := count(owner, contract.StatusFencedMemberEpoch)
	g := goal("P8e", fmt.Sprintf("%d coordinators on one group of %d owner-directed members: heartbeats/s per core over one coordinator's, 0 FENCED", coords, owner.Groups*owner.Members),
		ratio(perCore(owner), perCore(ref)), 0.9, false, okO && okR && perCore(ref) > 0,
		fmt.Sprintf("multi-owner/closed %.0f/s on %.2f cores (p99 %.1f ms) vs multi-ref/closed %.0f/s on %.2f cores (p99 %.1f ms); FENCED %.0f, RETRY %.0f, errors %d of %d answers",
			owner.Throughput, owner.CPUCores, owner.Latency.P99, ref.Throughput, ref.CPUCores, ref.Latency.P99,
			fenced, count(owner, contract.StatusRetry), owner.Errors, owner.Requests))
	if g.Status == Pass && fenced > 0 {
		g.Status = Miss
	}
	return g
}

// clusterGoals evaluates P8b–d (issue #18) from the cluster scenario.
func (r *Report) clusterGoals(perCore func(Phase) float64) []Goal {
	c := r.Cluster
	ok := c != nil
	if c == nil {
		c = &ClusterFigures{}
	}
	ref, okRef := r.phase("cluster-ref/closed")
	cl, okCl := r.phase("cluster/closed")
	roll, okRoll := r.phase("cluster/rolling")
	kill, okKill := r.phase("cluster/kill")
	okRoll = okRoll && c.Rolling.Done
	okKill = okKill && c.Kill.Done && c.KilledGroups > 0
	spread, owned := ownedSpread(c.Owned, c.Coordinators, c.Groups)
	waitBound := r.Options.Interval + 2*time.Second
	recoveryBound := c.LeaseTTL + 2
	statuses := func(p Phase) string {
		return fmt.Sprintf("FENCED %.0f, RETRY %.0f, errors %d of %d answers; %d shard moves, longest wait for an OK %.2f s",
			count(p, contract.StatusFencedMemberEpoch), count(p, contract.StatusRetry), p.Errors, p.Requests, c.stepOf(p.Name).Moves, c.stepOf(p.Name).MaxWait)
	}
	recovery := goal("P8d-recovery", "SIGKILL: its groups answer OK again (s)", c.Recovery, recoveryBound, true, okKill,
		fmt.Sprintf("%s owned %d groups; cluster lease TTL %.0f s + 2 s; %d groups never answered OK", c.Killed, c.KilledGroups, c.LeaseTTL, c.Unrecovered))
	if okKill && c.Unrecovered > 0 {
		recovery.Status = Miss
	}
	return []Goal{
		goal("P8b-spread", fmt.Sprintf("groups owned per coordinator, largest distance from %d", c.Groups/max(c.Coordinators, 1)), spread, 2, true, ok && len(c.Owned) > 0,
			"GET /cluster: "+owned),
		goal("P8b-core", "heartbeats/s per core following owners over one coordinator's, same groups", ratio(perCore(cl), perCore(ref)), 0.9, false,
			okCl && okRef && perCore(ref) > 0,
			fmt.Sprintf("%d×%d: %.0f/s on %.2f cores (p99 %.1f ms) vs %.0f/s on %.2f cores (p99 %.1f ms)",
				cl.Groups, cl.Members, cl.Throughput, cl.CPUCores, cl.Latency.P99, ref.Throughput, ref.CPUCores, ref.Latency.P99)),
		goal("P8c-fenced", "rolling restart: FENCED answers", count(roll, contract.StatusFencedMemberEpoch), 0, true, okRoll, statuses(roll)),
		goal("P8c-moves", "rolling restart: shard moves", float64(c.Rolling.Moves), 0, true, okRoll, statuses(roll)),
		goal("P8c-readers", "rolling restart: double readers (oracle)", float64(roll.DoubleReaders), 0, true, okRoll, fmt.Sprintf("%d violations in the phase", roll.DoubleReaders)),
		goal("P8c-wait", "rolling restart: longest wait for an OK (s)", c.Rolling.MaxWait, waitBound.Seconds(), true, okRoll,
			fmt.Sprintf("bound: heartbeat interval %v + 2 s", r.Options.Interval)),
		recovery,
		goal("P8d-fenced", "SIGKILL: FENCED answers", count(kill, contract.StatusFencedMemberEpoch), 0, true, okKill, statuses(kill)),
		goal("P8d-readers", "SIGKILL: double readers (oracle)", float64(kill.DoubleReaders), 0, true, okKill, fmt.Sprintf("%d violations in the phase", kill.DoubleReaders)),
	}
}

// stepOf returns the step measured in phase name.
func (c *ClusterFigures) stepOf(name string) ClusterStep {
	switch name {
	case "cluster/rolling":
		return c.Rolling
	case "cluster/kill":
		return c.Kill
	}
	return ClusterStep{}
}

// count is how many answers of phase p had status st.
func count(p Phase, st contract.HeartbeatStatus) float64 { return float64(p.Statuses[string(st)]) }
