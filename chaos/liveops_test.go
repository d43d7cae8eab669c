package chaos

import (
	"testing"
	"time"
)

// TestLiveOpFaults: every pause is resumed by the end, on a shard every
// scale keeps; resets name a real shard.
func TestLiveOpFaults(t *testing.T) {
	o := Defaults()
	for seed := range int64(5) {
		o.Seed = seed
		paused := map[int]int{}
		for _, f := range Schedule(o) {
			switch f.Kind {
			case ShardPause:
				if f.Target >= max(1, o.Shards/2) {
					t.Fatalf("seed %d: %v beyond the smallest shard count", seed, f)
				}
				paused[f.Target]++
			case ShardResume:
				paused[f.Target]--
			case LiveReset:
				if f.Target >= realShards {
					t.Fatalf("seed %d: %v", seed, f)
				}
			}
		}
		for s, n := range paused {
			if n != 0 {
				t.Fatalf("seed %d: shard %d paused %d more times than resumed", seed, s, n)
			}
		}
	}
}

// TestFleetOracleAfterRewind: first deliveries that start over after a
// live reset moved the shard back are not an order break.
func TestFleetOracleAfterRewind(t *testing.T) {
	f := &fleet{r: &run{start: time.Now()}, handled: map[string][]handling{}, written: map[string]bool{}}
	add := func(id string, from, to time.Duration) {
		f.handled["p:0/"+id] = append(f.handled["p:0/"+id], handling{proc: "a", key: "k", stream: "p:0", id: id, deliveries: 1, start: from, end: to, complete: true})
		f.written["p:0/"+id] = true
	}
	add("1-0", 0, 10)
	add("2-0", 10, 20)
	f.r.live.add("p:0", 25, 40)
	add("1-0", 45, 50)
	if vs, figures := f.check(); len(vs) != 0 {
		t.Fatalf("violations %v (%s)", vs, figures)
	}
}
