package placement

import (
	"math/rand/v2"
	"slices"
	"strconv"
)

// SimConfig describes a simulated cluster: Coordinators live coordinators
// holding Groups groups whose member counts follow a Zipf law of exponent
// ZipfS over 1..MaxMembers (most groups small, a few very large).
type SimConfig struct {
	Coordinators int
	Groups       int
	MaxMembers   int
	ZipfS        float64 // > 1
	// Changes is how many single-coordinator joins and, separately, how
	// many leaves are replayed, each against the initial cluster.
	Changes int
	// BoundedLoad, when > 0, also simulates Bounded with eps BoundedLoad
	// (the rule package cluster uses, with DefaultEpsilon): no coordinator
	// takes a group past ⌈(1+BoundedLoad) × the mean load⌉, in groups, or
	// in members when BoundMembers is set.
	BoundedLoad  float64
	BoundMembers bool
	// Creates is how many groups are created, each against the initial
	// cluster, to count the other groups a creation moves.
	Creates int
	Seed    uint64
}

// SimResult is what Simulate measured.
type SimResult struct {
	Config       SimConfig
	TotalMembers int
	LargestGroup int // members of the largest group
	Rendezvous   Placement
	Bounded      Placement // zero unless Config.BoundedLoad > 0
}

// Placement is how one placement rule spread the groups of the initial
// cluster and what each join or leave moved.
type Placement struct {
	Groups  Load // groups per coordinator
	Members Load // members per coordinator
	Joins   []Move
	Leaves  []Move
	// Creates are the groups created: Coordinator is the new group's key,
	// Moved (= Elsewhere) the other groups whose owner changed, Minimum 0.
	Creates []Move
}

// Load is the spread of a quantity over the coordinators.
type Load struct {
	Min, Max int
	Mean     float64
}

// MaxOverMean is Max ÷ Mean: 1 is a perfect spread.
func (l Load) MaxOverMean() float64 { return float64(l.Max) / l.Mean }

// Move is the effect of one coordinator joining or leaving.
type Move struct {
	Coordinator string
	// Moved counts the groups whose owner changed.
	Moved int
	// Minimum is the fewest groups any placement could move: the groups the
	// leaver owned, or the groups the joiner owns afterwards.
	Minimum int
	// Elsewhere counts moved groups that went neither from the leaver nor
	// to the joiner (0 for a placement that moves only what it must).
	Elsewhere int
	// MovedMembers and MinimumMembers are the members of those groups.
	MovedMembers, MinimumMembers int
}

// Simulate builds the cluster of cfg, places every group, then replays
// cfg.Changes joins and cfg.Changes leaves and compares the owner of every
// group before and after each. It is deterministic for a given cfg.
func Simulate(cfg SimConfig) SimResult {
	// #nosec G404 -- a seeded PRNG on purpose: the simulation is deterministic for a given cfg
	r := rand.New(rand.NewPCG(cfg.Seed, 0x9e3779b97f4a7c15))
	zipf := rand.NewZipf(r, cfg.ZipfS, 1, uint64(max(cfg.MaxMembers, 2)-1))
	groups := make([]simGroup, cfg.Groups)
	res := SimResult{Config: cfg}
	for i := range groups {
		groups[i] = simGroup{
			key:     "stream-" + strconv.FormatUint(r.Uint64()%1000, 10) + ":group-" + strconv.Itoa(i),
			members: int(zipf.Uint64()) + 1, // #nosec G115 -- zipf draws at most MaxMembers-1, an int
		}
		res.TotalMembers += groups[i].members
		res.LargestGroup = max(res.LargestGroup, groups[i].members)
	}
	ids := make([]string, cfg.Coordinators)
	for i := range ids {
		ids[i] = coordinatorID(r)
	}
	var joiners []string
	for range cfg.Changes {
		joiners = append(joiners, coordinatorID(r))
	}
	var created []simGroup
	for i := range cfg.Creates {
		created = append(created, simGroup{key: "created-" + strconv.Itoa(i) + ":group", members: 1})
	}
	res.Rendezvous = replay(groups, ids, joiners, created, rendezvous)
	if cfg.BoundedLoad > 0 {
		weight := func(simGroup) int { return 1 }
		if cfg.BoundMembers {
			weight = func(g simGroup) int { return g.members }
		}
		res.Bounded = replay(groups, ids, joiners, created, func(groups []simGroup, ids []string) []string {
			units := make(map[string]int, len(groups))
			for _, g := range groups {
				units[g.key] = weight(g)
			}
			owners := Bounded(units, ids, cfg.BoundedLoad)
			out := make([]string, len(groups))
			for i, g := range groups {
				out[i] = owners[g.key]
			}
			return out
		})
	}
	return res
}

type simGroup struct {
	key     string
	members int
}

// coordinatorID draws an id shaped like a Kubernetes pod name.
func coordinatorID(r *rand.Rand) string {
	return "coordinator-" + strconv.FormatUint(r.Uint64()%(1<<40), 36)
}

// replay places groups on ids with rule, then on ids without each of the
// first len(joiners) ids, then on ids plus each joiner, then with each of
// created added to groups.
func replay(groups []simGroup, ids, joiners []string, created []simGroup, rule func([]simGroup, []string) []string) Placement {
	before := rule(groups, ids)
	p := Placement{
		Groups:  spread(ids, before, groups, func(simGroup) int { return 1 }),
		Members: spread(ids, before, groups, func(g simGroup) int { return g.members }),
	}
	for _, leaver := range ids[:min(len(joiners), len(ids))] {
		rest := slices.DeleteFunc(slices.Clone(ids), func(id string) bool { return id == leaver })
		p.Leaves = append(p.Leaves, compare(leaver, before, rule(groups, rest), groups))
	}
	for _, joiner := range joiners {
		p.Joins = append(p.Joins, compare(joiner, before, rule(groups, append(slices.Clone(ids), joiner)), groups))
	}
	for _, g := range created {
		after := rule(append(slices.Clone(groups), g), ids)
		p.Creates = append(p.Creates, compare(g.key, before, after[:len(groups)], groups))
	}
	return p
}

// rendezvous is the rule of Owner.
func rendezvous(groups []simGroup, ids []string) []string {
	out := make([]string, len(groups))
	for i, g := range groups {
		out[i], _ = Owner(g.key, ids)
	}
	return out
}

// spread is the Min, Max and Mean over ids of the sum of weight over the
// groups each owns.
func spread(ids, owner []string, groups []simGroup, weight func(simGroup) int) Load {
	per := make(map[string]int, len(ids))
	total := 0
	for i, o := range owner {
		per[o] += weight(groups[i])
		total += weight(groups[i])
	}
	vals := make([]int, len(ids))
	for i, id := range ids {
		vals[i] = per[id]
	}
	return Load{Min: slices.Min(vals), Max: slices.Max(vals), Mean: float64(total) / float64(len(ids))}
}

// compare counts what changed between two placements of the same groups
// when coordinator changed joined or left.
func compare(changed string, before, after []string, groups []simGroup) Move {
	mv := Move{Coordinator: changed}
	for i := range before {
		if before[i] == changed || after[i] == changed {
			mv.Minimum++
			mv.MinimumMembers += groups[i].members
		}
		if before[i] == after[i] {
			continue
		}
		mv.Moved++
		mv.MovedMembers += groups[i].members
		if before[i] != changed && after[i] != changed {
			mv.Elsewhere++
		}
	}
	return mv
}
