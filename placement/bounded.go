package placement

import (
	"cmp"
	"math"
	"slices"

	"github.com/cespare/xxhash/v2"
)

// DefaultEpsilon is the load bound of Bounded that package cluster uses:
// no coordinator holds more than ⌈1.1 × the mean⌉ units. It is the largest
// ε for which 30 units on 3 coordinators are always placed 10 ± 2 per
// coordinator (capacity ⌈1.1 × 10⌉ = 11, so each holds at least
// 30 − 2 × 11 = 8), and it is slack enough that at 100 coordinators and
// 100,000 units the bound hardly ever binds, so Bounded then moves almost
// only what Owner moves (docs/cluster.md, Placement).
const DefaultEpsilon = 0.1

// Bounded places units on coordinators by rendezvous hashing with bounded
// loads (Mirrokni, Thorup and Zadimoghaddam, "Consistent Hashing with
// Bounded Loads", SODA 2018). units maps each unit's key to its weight
// (≥ 1; package cluster passes each stream prefix with its number of
// consumer groups); the result maps each key to the id of its coordinator,
// and is empty when coordinators is.
//
// The capacity of each coordinator is ⌈(1+eps) × total weight ÷ the number
// of distinct ids⌉ (eps ≥ 0, rounded to thousandths so that the capacity
// is computed exactly). The units are taken in a fixed order, by the hash
// of their key (ties by key); each goes to the coordinator it ranks
// highest, as Owner ranks them, among those it fits in under the capacity.
// A unit that fits nowhere (possible only with weights above 1) goes to
// the least loaded coordinator (ties by rank). With weights of 1 no
// coordinator therefore exceeds the capacity.
//
// The result is a function of the unit keys and weights, the set of ids
// and eps only: it depends on no order, and every process computes the same
// map from the same inputs. A unit whose first choice has room goes where
// Owner puts it, so with a loose bound few units differ from Owner.
func Bounded(units map[string]int, coordinators []string, eps float64) map[string]string {
	out := make(map[string]string, len(units))
	ids := slices.Compact(slices.Sorted(slices.Values(coordinators)))
	if len(ids) == 0 {
		return out
	}
	type unit struct {
		key    string
		hash   uint64
		weight int
	}
	order := make([]unit, 0, len(units))
	total := 0
	for k, w := range units {
		order = append(order, unit{key: k, hash: hashKey(k), weight: w})
		total += w
	}
	slices.SortFunc(order, func(a, b unit) int {
		return cmp.Or(cmp.Compare(a.hash, b.hash), cmp.Compare(a.key, b.key))
	})
	capacity := capacity(total, len(ids), eps)
	idHash := make([]uint64, len(ids))
	for j, id := range ids {
		idHash[j] = xxhash.Sum64String(id)
	}
	load := make([]int, len(ids))
	for _, u := range order {
		// ids is sorted, so on equal scores the first (smaller) id wins,
		// as in Owner.
		best, fallback := -1, 0
		var bestScore, fallbackScore uint64
		for j := range ids {
			s := mix(u.hash ^ idHash[j])
			if load[j]+u.weight <= capacity && (best < 0 || s > bestScore) {
				best, bestScore = j, s
			}
			if j == 0 || load[j] < load[fallback] || (load[j] == load[fallback] && s > fallbackScore) {
				fallback, fallbackScore = j, s
			}
		}
		if best < 0 {
			best = fallback
		}
		load[best] += u.weight
		out[u.key] = ids[best]
	}
	return out
}

// capacity is ⌈(1+eps) × total ÷ n⌉ with eps rounded to thousandths, in
// integers: with eps 0.1, 30 units on 3 coordinators get exactly 11 (in
// floating point, 1.1 × 30 ÷ 3 is a little above 11).
func capacity(total, n int, eps float64) int {
	num, den := total*(1000+int(math.Round(eps*1000))), 1000*n
	return (num + den - 1) / den
}
