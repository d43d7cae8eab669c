package placement

import "testing"

// The simulation of docs/cluster.md (Placement) at full size: 100
// coordinators, 100,000 groups with Zipf-distributed member counts, one
// join, one leave and one create (each a full placement of every group;
// cmd/coord-placement-sim runs more).
func TestSimulation(t *testing.T) {
	res := Simulate(SimConfig{Coordinators: 100, Groups: 100_000, MaxMembers: 10_000, ZipfS: 1.5, Changes: 1, Creates: 1, BoundedLoad: DefaultEpsilon, Seed: 1})
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
	// At this size the bound of package cluster (⌈1.1 × 1,000⌉) is above
	// what rendezvous gives any coordinator, before and after each change:
	// Bounded places every group where Owner does.
	b := res.Bounded
	for _, mv := range append(append(b.Joins, b.Leaves...), b.Creates...) {
		if mv.Moved != mv.Minimum || mv.Elsewhere != 0 {
			t.Errorf("bounded: change %s moved %d groups (%d elsewhere), minimum %d", mv.Coordinator, mv.Moved, mv.Elsewhere, mv.Minimum)
		}
	}
	if b.Groups != p.Groups {
		t.Errorf("bounded: groups per coordinator %+v, rendezvous %+v", b.Groups, p.Groups)
	}
}

// Bounded loads in members keep every coordinator's members within the
// bound, at the price of moving groups between coordinators that did not
// change.
func TestSimulationBoundedMembers(t *testing.T) {
	res := Simulate(SimConfig{Coordinators: 10, Groups: 2_000, MaxMembers: 1_000, ZipfS: 1.5, Changes: 2, BoundedLoad: 0.1, BoundMembers: true, Seed: 1})
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

// Bounding the group count (what package cluster does) evens out few
// groups on few coordinators, where rendezvous alone leaves Binomial(30,
// 1/3) groups on each, and moves few groups besides the minimum. Over 200
// namings: the figures of docs/cluster.md (Placement).
func TestSimulationBoundedGroups(t *testing.T) {
	var moved, minimum, created, creates, worstCreate int
	for seed := range uint64(200) {
		res := Simulate(SimConfig{Coordinators: 3, Groups: 30, MaxMembers: 1_000, ZipfS: 1.5, Changes: 3, Creates: 3, BoundedLoad: DefaultEpsilon, Seed: seed})
		b := res.Bounded
		if b.Groups.Min < 8 || b.Groups.Max > 11 {
			t.Errorf("seed %d: groups per coordinator %+v, want 8..11", seed, b.Groups)
		}
		for _, mv := range append(b.Joins, b.Leaves...) {
			moved += mv.Moved
			minimum += mv.Minimum
		}
		for _, mv := range b.Creates {
			created += mv.Moved
			creates++
			worstCreate = max(worstCreate, mv.Moved)
		}
	}
	if float64(moved) > 1.25*float64(minimum) {
		t.Errorf("joins and leaves moved %d groups, minimum %d", moved, minimum)
	}
	t.Logf("joins and leaves moved %d groups, minimum %d (%.3f×); a creation moved %.2f other groups on average, %d at most",
		moved, minimum, float64(moved)/float64(minimum), float64(created)/float64(creates), worstCreate)
}
