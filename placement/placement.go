package placement

import "github.com/cespare/xxhash/v2"

// Owner returns the id of the coordinator that owns groupKey among the live
// coordinator ids, and false when coordinators is empty. The answer does
// not depend on the order of coordinators; duplicate ids count once.
// groupKey is the unit placed (package cluster passes the stream prefix, so
// all groups of a stream share an owner); every coordinator must pass the
// same key for the same unit.
func Owner(groupKey string, coordinators []string) (string, bool) {
	if len(coordinators) == 0 {
		return "", false
	}
	g := hashKey(groupKey)
	best := coordinators[0]
	bestScore := score(g, best)
	for _, c := range coordinators[1:] {
		s := score(g, c)
		// Ties (a 2^-64 event, or a duplicate id) go to the smaller id, so
		// that the order of the slice never matters.
		if s > bestScore || (s == bestScore && c < best) {
			best, bestScore = c, s
		}
	}
	return best, true
}

// hashKey is the 64-bit hash of a group key that score takes.
func hashKey(groupKey string) uint64 { return xxhash.Sum64String(groupKey) }

// score is the rendezvous weight of coordinator id c for the group whose
// key hashes to g: the XXH64 hashes of key and id combined and put through
// the SplitMix64 finalizer, so that each group ranks the coordinators in an
// independent, uniformly random order.
func score(g uint64, c string) uint64 {
	return mix(g ^ xxhash.Sum64String(c))
}

// mix is the SplitMix64 finalizer (Steele, Lea, Flood 2014): a bijection of
// uint64 in which every input bit affects every output bit.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}
