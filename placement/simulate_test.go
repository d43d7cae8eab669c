package placement

import "testing"

// The simulation of docs/cluster.md (Placement) at full size: 100
// coordinators, 100,000 groups with Zipf-distributed member counts.
func TestSimulation(t *testing.T) {
	res := Simulate(SimConfig{Coordinators: 100, Groups: 100_000, MaxMembers: 10_000, ZipfS: 1.5, Changes: 2, Seed: 1})
	p := res.Rendezvous
	for _, mv := range append(p.Joins, p.Leaves...) {
		if mv.Moved != mv.Minimum || mv.Elsewhere != 0 {
			t.Errorf("change of %s moved %d groups (%d elsewhere), minimum %d", mv.Coordinator, mv.Moved, mv.Elsewhere, mv.Minimum)
		}
	}
	// Each coordinator's group count is Binomial(100,000, 1/100): mean
	// 1,000, standard deviation 31.5, so the largest of 100 lies near
	// +2.5 sd (1.08 × mean). 1.15 is +4.75 sd: only a hash that spreads
	// groups worse than uniformly at random exceeds it.
	if got := p.Groups.MaxOverMean(); got > 1.15 {
		t.Errorf("groups per coordinator: max/mean %.3f > 1.15 (%+v)", got, p.Groups)
	}
	t.Logf("groups %+v max/mean %.3f; members %+v max/mean %.3f", p.Groups, p.Groups.MaxOverMean(), p.Members, p.Members.MaxOverMean())
}

// Bounded loads keep every coordinator's members within the bound, at the
// price of moving groups between coordinators that did not change.
func TestSimulationBoundedLoad(t *testing.T) {
	res := Simulate(SimConfig{Coordinators: 10, Groups: 2_000, MaxMembers: 1_000, ZipfS: 1.5, Changes: 2, BoundedLoad: 0.1, Seed: 1})
	b := res.Bounded
	if limit := 1.1*b.Members.Mean + 1; float64(b.Members.Max) > limit {
		t.Errorf("bounded load: members max %d > %.0f", b.Members.Max, limit)
	}
	if b.Members.MaxOverMean() >= res.Rendezvous.Members.MaxOverMean() {
		t.Errorf("bounded load spreads members no better than rendezvous: %+v vs %+v", b.Members, res.Rendezvous.Members)
	}
	for _, mv := range append(b.Joins, b.Leaves...) {
		if mv.Moved < mv.Minimum {
			t.Errorf("change of %s moved %d groups, under the minimum %d", mv.Coordinator, mv.Moved, mv.Minimum)
		}
	}
}

// Bounding the group count evens out few groups on few coordinators, where
// rendezvous alone leaves Binomial(30, 1/3) groups on each.
func TestSimulationBoundedGroups(t *testing.T) {
	res := Simulate(SimConfig{Coordinators: 3, Groups: 30, MaxMembers: 1_000, ZipfS: 1.5, Changes: 3, BoundedLoad: 0.1, BoundGroups: true, Seed: 1})
	if g := res.Bounded.Groups; g.Max > 11 {
		t.Errorf("bounded groups: max %d > ⌈1.1 × 10⌉ (%+v)", g.Max, g)
	}
}
