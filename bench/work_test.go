package bench

import (
	"math"
	"testing"
	"time"
)

// TestWorkFinish: loads come from the produced rates and the last target
// owners, per unit of each member's capacity; moves count after the drain
// only; a group that never drained reports the run's length.
func TestWorkFinish(t *testing.T) {
	start := time.Date(2026, 12, 5, 13, 0, 0, 0, time.UTC)
	run := &WorkRun{Assignor: "work", Capacities: []int{1, 3}}
	g := &workGroup{run: run, name: "w", owners: map[int]string{}, drained: start.Add(10 * time.Second)}
	// Member 0 (capacity 1) owns hot shard 3 (200/s); member 1 (capacity
	// 3) owns 30 cold shards (600/s): 200 and 200 per unit of capacity.
	g.owners[3] = "w-0"
	for s := 20; s < 50; s++ {
		if s != 45 {
			g.owners[s] = "w-1"
		}
	}
	g.owners[0] = "w-1"
	g.moves = []time.Time{start.Add(5 * time.Second), start.Add(40 * time.Second)}
	g.finish(start, start.Add(70*time.Second))
	if !run.Drained || run.DrainSeconds != 10 || run.MovesAfterDrain != 1 || run.Moves != 2 || math.Abs(run.MovesPerMinute-1) > 1e-9 {
		t.Fatalf("run %+v", run)
	}
	if math.Abs(run.BusiestOverMean-1) > 1e-9 || run.Loads["w-0"] != 200 || run.Loads["w-1"] != 600 {
		t.Fatalf("busiest ÷ mean %v, loads %v", run.BusiestOverMean, run.Loads)
	}

	never := &workGroup{run: &WorkRun{Capacities: []int{1}}, name: "c", owners: map[int]string{1: "c-0"}}
	never.finish(start, start.Add(time.Minute))
	if never.run.Drained || never.run.DrainSeconds != 60 || never.run.MovesPerMinute != 0 {
		t.Fatalf("never drained: %+v", never.run)
	}
}
