// Command coord-placement-sim prints how the coordinator placement rule
// (package placement) spreads consumer groups over coordinators and how many
// groups a coordinator joining or leaving moves, against the minimum; and
// the same for rendezvous with bounded loads (placement.Bounded, the rule
// package cluster uses), with the other groups a group's creation moves.
// The figures in docs/cluster.md (Placement) come from its defaults.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/redis-stream-coordinator/coordinator/placement"
)

func main() {
	cfg := placement.SimConfig{}
	flag.IntVar(&cfg.Coordinators, "coordinators", 100, "live coordinators")
	flag.IntVar(&cfg.Groups, "groups", 100_000, "consumer groups")
	flag.IntVar(&cfg.MaxMembers, "max-members", 10_000, "members of the largest possible group")
	flag.Float64Var(&cfg.ZipfS, "zipf", 1.5, "Zipf exponent (> 1) of the member counts; smaller is more skewed towards large groups")
	flag.IntVar(&cfg.Changes, "changes", 5, "joins, and leaves, to replay")
	flag.Float64Var(&cfg.BoundedLoad, "bounded-load", placement.DefaultEpsilon, "also simulate rendezvous with bounded loads (placement.Bounded), at most ⌈(1+this) × the mean load⌉ per coordinator; 0 skips it")
	flag.BoolVar(&cfg.BoundMembers, "bound-members", false, "bound the load in members rather than in groups (comparison only: package cluster bounds groups)")
	flag.IntVar(&cfg.Creates, "creates", 5, "groups created, each against the initial cluster")
	flag.Uint64Var(&cfg.Seed, "seed", 1, "random seed")
	flag.Parse()
	if cfg.Coordinators < 1 || cfg.Groups < 1 || cfg.MaxMembers < 2 || cfg.ZipfS <= 1 || cfg.Changes < 0 || cfg.Changes > cfg.Coordinators || cfg.BoundedLoad < 0 || cfg.Creates < 0 {
		fmt.Fprintln(os.Stderr, "coord-placement-sim: need coordinators ≥ 1, groups ≥ 1, max-members ≥ 2, zipf > 1, 0 ≤ changes ≤ coordinators, bounded-load ≥ 0, creates ≥ 0")
		os.Exit(2)
	}
	res := placement.Simulate(cfg)
	fmt.Printf("%d coordinators, %d groups, %d members (Zipf s=%.2f over 1..%d: mean %.1f per group, largest %d), seed %d\n",
		cfg.Coordinators, cfg.Groups, res.TotalMembers, cfg.ZipfS, cfg.MaxMembers,
		float64(res.TotalMembers)/float64(cfg.Groups), res.LargestGroup, cfg.Seed)
	print("rendezvous (placement.Owner: the fallback for a group not yet listed)", res.Rendezvous)
	if cfg.BoundedLoad > 0 {
		title := fmt.Sprintf("rendezvous with bounded loads (placement.Bounded), groups ≤ ⌈%.3f × mean⌉", 1+cfg.BoundedLoad)
		if cfg.BoundMembers {
			title = fmt.Sprintf("rendezvous with bounded loads (placement.Bounded), members ≤ ⌈%.3f × mean⌉ (comparison only)", 1+cfg.BoundedLoad)
		}
		print(title, res.Bounded)
	}
}

func print(title string, p placement.Placement) {
	fmt.Printf("\n%s\n", title)
	fmt.Printf("  load       min      max     mean  max/mean\n")
	for _, l := range []struct {
		name string
		load placement.Load
	}{{"groups", p.Groups}, {"members", p.Members}} {
		fmt.Printf("  %-7s %7d  %7d  %7.0f  %8.3f\n", l.name, l.load.Min, l.load.Max, l.load.Mean, l.load.MaxOverMean())
	}
	fmt.Printf("  change  coordinator           groups moved  minimum  moved/min  elsewhere  members moved  minimum  moved/min\n")
	for _, c := range []struct {
		name  string
		moves []placement.Move
	}{{"join", p.Joins}, {"leave", p.Leaves}, {"create", p.Creates}} {
		for _, mv := range c.moves {
			fmt.Printf("  %-6s  %-20s  %12d  %7d  %9.3f  %9d  %13d  %7d  %9.3f\n", c.name, mv.Coordinator,
				mv.Moved, mv.Minimum, ratio(mv.Moved, mv.Minimum), mv.Elsewhere,
				mv.MovedMembers, mv.MinimumMembers, ratio(mv.MovedMembers, mv.MinimumMembers))
		}
	}
}

func ratio(a, b int) float64 { return float64(a) / float64(max(b, 1)) }
