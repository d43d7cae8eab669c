package bench

// Owners maps a shard to the member reading it; unread shards are absent.
type Owners map[int]string

// Moved counts the shards of 0..shards-1 whose owner differs between
// before and after (a shard that gains or loses its only reader counts).
func Moved(shards int, before, after Owners) int {
	n := 0
	for s := range shards {
		if before[s] != after[s] {
			n++
		}
	}
	return n
}

// MinimumMoves is the fewest shard moves that take the ownership before to
// a balanced assignment of shards over live (each member ⌊S/n⌋ or ⌈S/n⌉
// shards): every member keeps as many of its shards as its quota allows,
// and the S mod n larger quotas go to members that hold more than ⌊S/n⌋.
// Shards of members that are not live, and unread shards, always move.
func MinimumMoves(shards int, before Owners, live []string) int {
	if len(live) == 0 {
		return 0
	}
	held := make(map[string]int, len(live))
	for _, m := range before {
		held[m]++
	}
	floor, larger := shards/len(live), shards%len(live)
	kept, above := 0, 0
	for _, m := range live {
		kept += min(held[m], floor)
		if held[m] > floor {
			above++
		}
	}
	return shards - kept - min(larger, above)
}
