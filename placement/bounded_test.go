package placement

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
)

// randomCluster draws units unit keys (weight 1) and n coordinator ids.
func randomCluster(r *rand.Rand, units, n int) (map[string]int, []string) {
	u := make(map[string]int, units)
	for len(u) < units {
		u[fmt.Sprintf("stream-%x", r.Uint64())] = 1
	}
	ids := make([]string, n)
	for i := range ids {
		ids[i] = coordinatorID(r)
	}
	return u, ids
}

// loads counts the units each id holds.
func loads(owners map[string]string, units map[string]int) map[string]int {
	l := map[string]int{}
	for k, id := range owners {
		l[id] += units[k]
	}
	return l
}

func TestBoundedEmpty(t *testing.T) {
	if got := Bounded(map[string]int{"a": 1}, nil, DefaultEpsilon); len(got) != 0 {
		t.Fatalf("Bounded with no coordinators = %v, want empty", got)
	}
	if got := Bounded(nil, []string{"c1"}, DefaultEpsilon); len(got) != 0 {
		t.Fatalf("Bounded with no units = %v, want empty", got)
	}
}

// Every unit is placed, on a given coordinator, and none holds more than
// ⌈(1+ε) × mean⌉ units.
func TestBoundedCapacity(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 300 {
		units, ids := randomCluster(r, 1+r.IntN(500), 1+r.IntN(20))
		eps := []float64{0, 0.05, DefaultEpsilon, 0.5}[r.IntN(4)]
		owners := Bounded(units, ids, eps)
		if len(owners) != len(units) {
			t.Fatalf("%d units on %d ids: %d placed", len(units), len(ids), len(owners))
		}
		for k, id := range owners {
			if _, ok := units[k]; !ok || !slices.Contains(ids, id) {
				t.Fatalf("unit %q placed on %q: not a unit or not a coordinator", k, id)
			}
		}
		limit := capacity(len(units), len(ids), eps)
		for id, l := range loads(owners, units) {
			if l > limit {
				t.Fatalf("%d units on %d ids, eps %.2f: %s holds %d > capacity %d", len(units), len(ids), eps, id, l, limit)
			}
		}
	}
}

// The goal of the cluster (issue 18, P8b): 30 groups, each on a stream
// prefix of its own, on 3 coordinators are owned 10 ± 2 each, whatever the
// names. With DefaultEpsilon the capacity is ⌈1.1 × 10⌉ = 11, so the
// other two hold at most 22 and each holds at least 8.
func TestBoundedThirtyOnThree(t *testing.T) {
	if c := capacity(30, 3, DefaultEpsilon); c != 11 {
		t.Fatalf("capacity for 30 units on 3 = %d, want 11", c)
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		units, ids := randomCluster(r, 30, 3)
		for id, l := range loads(Bounded(units, ids, DefaultEpsilon), units) {
			if l < 8 || l > 12 {
				t.Fatalf("30 units on %v: %s holds %d", ids, id, l)
			}
		}
	}
}

// The map depends on the set of ids only: not on their order, nor on
// duplicates.
func TestBoundedIgnoresOrderAndDuplicates(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 100 {
		units, ids := randomCluster(r, 200, 7)
		want := Bounded(units, ids, DefaultEpsilon)
		shuffled := slices.Clone(ids)
		r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		dup := append(slices.Clone(shuffled), ids[2], ids[0])
		for _, list := range [][]string{shuffled, dup} {
			if got := Bounded(maps.Clone(units), list, DefaultEpsilon); !maps.Equal(got, want) {
				t.Fatalf("Bounded depends on the order of %v", list)
			}
		}
	}
}

// A bound that never binds gives Owner's placement.
func TestBoundedLooseIsOwner(t *testing.T) {
	units, ids := randomCluster(rand.New(rand.NewPCG(7, 8)), 1000, 10)
	for k, id := range Bounded(units, ids, 100) {
		if want, _ := Owner(k, ids); id != want {
			t.Fatalf("unit %s: Bounded %s, Owner %s", k, id, want)
		}
	}
}

// A unit heavier than any room left goes to the least loaded coordinator
// (alone, to its first choice), and the others still fit the capacity.
func TestBoundedHeavyUnit(t *testing.T) {
	ids := []string{"c1", "c2", "c3"}
	want, _ := Owner("huge", ids)
	if got := Bounded(map[string]int{"huge": 30}, ids, DefaultEpsilon); got["huge"] != want {
		t.Fatalf("a unit alone went to %s, its first choice is %s", got["huge"], want)
	}
	units := map[string]int{"huge": 30}
	for i := range 6 {
		units[fmt.Sprintf("small-%d", i)] = 1
	}
	owners := Bounded(units, ids, DefaultEpsilon)
	if len(owners) != len(units) {
		t.Fatalf("%d of %d units placed", len(owners), len(units))
	}
	// Capacity ⌈1.1 × 36 / 3⌉ = 14.
	for id, n := range loads(owners, units) {
		if id != owners["huge"] && n > 14 {
			t.Fatalf("%s holds %d > 14 (%v)", id, n, owners)
		}
	}
}

// Golden values pin the rule, as TestOwnerGolden does for Owner: the
// coordinators of a rolling upgrade must compute the same map.
func TestBoundedGolden(t *testing.T) {
	units := map[string]int{}
	for i := range 9 {
		units[fmt.Sprintf("orders-%d", i)] = 1
	}
	got := Bounded(units, []string{"coordinator-0", "coordinator-1", "coordinator-2"}, DefaultEpsilon)
	// Capacity ⌈1.1 × 3⌉ = 4 binds: Owner puts 7 of the 9 on coordinator-2.
	want := map[string]string{
		"orders-0": "coordinator-2", "orders-1": "coordinator-0", "orders-2": "coordinator-0",
		"orders-3": "coordinator-1", "orders-4": "coordinator-1", "orders-5": "coordinator-2",
		"orders-6": "coordinator-2", "orders-7": "coordinator-0", "orders-8": "coordinator-2",
	}
	if !maps.Equal(got, want) {
		t.Errorf("Bounded = %#v", got)
	}
}

func BenchmarkBounded(b *testing.B) {
	for _, c := range []struct{ units, n int }{{30, 3}, {10_000, 3}, {10_000, 100}} {
		units, ids := randomCluster(rand.New(rand.NewPCG(1, 1)), c.units, c.n)
		b.Run(fmt.Sprintf("units=%d/coordinators=%d", c.units, c.n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Bounded(units, ids, DefaultEpsilon)
			}
		})
	}
}
