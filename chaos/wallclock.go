package chaos

import (
	"cmp"
	"slices"
	"sync"
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
)

// wallClock maps offsets of a run to the wall-clock instants the
// coordinators stamp on what they record (the assignment history's
// entries). Offsets are monotonic (time.Since(start)), and the wall clock
// is not: it may step, as it did when a Redis run's machine was paused
// for about 51 s (the monotonic clock stood still, the wall clock jumped
// ahead), so start's wall clock plus an offset is not the wall clock at
// that offset. The members mark the wall clock at the offsets
// they start reading (sim.track), and instant maps an offset from the
// latest mark at or before it. It is safe for concurrent use.
type wallClock struct {
	start time.Time // with its monotonic reading

	mu    sync.Mutex
	marks []wallMark // by offset; the first at offset 0
}

// wallMark is the wall clock (no monotonic reading) at offset at.
type wallMark struct {
	at   time.Duration
	wall time.Time
}

// newWallClock returns the clock of a run started at start.
func newWallClock(start time.Time) *wallClock {
	return &wallClock{start: start, marks: []wallMark{{0, start.Round(0)}}}
}

// mark records the wall clock at offset at, a moment ago: the wall clock
// now less the monotonic time since at.
func (c *wallClock) mark(at time.Duration) {
	now := time.Now()
	c.add(wallMark{at, now.Round(0).Add(at - now.Sub(c.start))})
}

// add records m in offset order.
func (c *wallClock) add(m wallMark) {
	c.mu.Lock()
	defer c.mu.Unlock()
	i, _ := slices.BinarySearchFunc(c.marks, m.at, func(x wallMark, at time.Duration) int { return cmp.Compare(x.at, at) })
	c.marks = slices.Insert(c.marks, i, m)
}

// instant is the wall-clock instant at offset d: the latest mark at or
// before d plus the time since it.
func (c *wallClock) instant(d time.Duration) contract.Instant {
	c.mu.Lock()
	defer c.mu.Unlock()
	i, found := slices.BinarySearchFunc(c.marks, d, func(x wallMark, at time.Duration) int { return cmp.Compare(x.at, at) })
	if !found {
		i = max(i-1, 0)
	}
	m := c.marks[i]
	return contract.InstantOf(m.wall.Add(d - m.at))
}
