package placement

import (
	"fmt"
	"slices"
	"testing"
)

func TestOwnerEmpty(t *testing.T) {
	if id, ok := Owner("p:g", nil); ok || id != "" {
		t.Fatalf("Owner with no coordinators = %q, %v; want \"\", false", id, ok)
	}
}

func TestOwnerSingle(t *testing.T) {
	if id, ok := Owner("p:g", []string{"c1"}); !ok || id != "c1" {
		t.Fatalf("Owner with one coordinator = %q, %v; want c1, true", id, ok)
	}
}

// The owner does not depend on the order of the ids, and a duplicate id
// changes nothing.
func TestOwnerIgnoresOrderAndDuplicates(t *testing.T) {
	ids := coordinatorIDs(7)
	for g := range 1000 {
		key := fmt.Sprintf("orders:group-%d", g)
		want, _ := Owner(key, ids)
		rev := slices.Clone(ids)
		slices.Reverse(rev)
		dup := append(slices.Clone(ids), ids[3], ids[0])
		for _, list := range [][]string{rev, dup} {
			if got, _ := Owner(key, list); got != want {
				t.Fatalf("Owner(%q, %v) = %s, want %s", key, list, got, want)
			}
		}
	}
}

// Golden values pin the rule: every coordinator process, whatever its Go
// version or architecture, must compute the same owner, or groups would
// bounce between coordinators of mixed versions during a rolling upgrade.
func TestOwnerGolden(t *testing.T) {
	if got, want := score(hashKey("orders:billing"), "coordinator-0"), uint64(0x61539c6fde9cc01c); got != want {
		t.Errorf("score(orders:billing, coordinator-0) = %#x, want %#x", got, want)
	}
	ids := []string{"coordinator-0", "coordinator-1", "coordinator-2"}
	for _, c := range []struct{ key, want string }{
		{"orders:group-0", "coordinator-2"},
		{"orders:group-1", "coordinator-2"},
		{"orders:group-2", "coordinator-2"},
		{"orders:group-3", "coordinator-0"},
		{"orders:group-4", "coordinator-0"},
		{"orders:group-5", "coordinator-1"},
	} {
		if got, _ := Owner(c.key, ids); got != c.want {
			t.Errorf("Owner(%q) = %s, want %s", c.key, got, c.want)
		}
	}
}

func TestOwnerAllocatesNothing(t *testing.T) {
	ids := coordinatorIDs(100)
	if n := testing.AllocsPerRun(100, func() { Owner("orders:billing", ids) }); n != 0 {
		t.Fatalf("Owner allocates %.0f times per call, want 0", n)
	}
}

func BenchmarkOwner(b *testing.B) {
	for _, n := range []int{3, 100} {
		ids := coordinatorIDs(n)
		b.Run(fmt.Sprintf("coordinators=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Owner("orders:billing-consumers", ids)
			}
		})
	}
}

// coordinatorIDs returns n ids shaped like Kubernetes pod names.
func coordinatorIDs(n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("coordinator-7d9f8c6b5-%05d", i)
	}
	return ids
}

// A leaver's groups spread evenly over the survivors (each one's second
// choice is uniform), so no survivor takes a crashed coordinator's load alone.
func TestLeaverGroupsSpreadOverSurvivors(t *testing.T) {
	ids := coordinatorIDs(10)
	leaver, survivors := ids[0], ids[1:]
	took := map[string]int{}
	moved := 0
	for g := range 20_000 {
		key := fmt.Sprintf("orders:group-%d", g)
		if before, _ := Owner(key, ids); before == leaver {
			after, _ := Owner(key, survivors)
			took[after]++
			moved++
		}
	}
	// Each survivor takes Binomial(moved, 1/9): about 222 ± 14 for the
	// ~2,000 groups moved; ±25% is about ±4 standard deviations.
	mean := float64(moved) / float64(len(survivors))
	for _, s := range survivors {
		if n := float64(took[s]); n < 0.75*mean || n > 1.25*mean {
			t.Errorf("survivor %s took %d of %d groups, mean %.0f", s, took[s], moved, mean)
		}
	}
}
