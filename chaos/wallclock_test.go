package chaos

import (
	"testing"
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/membersim"
)

// A run's offsets are monotonic and the coordinators stamp history
// entries with the wall clock. In the Redis run of seed 1 the machine was
// suspended for about 51 s at offset 23.5 s: the monotonic clock stood
// still, the wall clock stepped ahead, and the check, which took start's
// wall clock plus the read's offset, found all 11 moves after the step
// recorded "after" their reads. The members' marks map those offsets to
// the wall clock the entries are on.
func TestHistoryAcrossWallClockStep(t *testing.T) {
	start := time.UnixMilli(1_796_699_336_300)
	step := 51400 * time.Millisecond
	c := newWallClock(start)
	c.add(wallMark{1 * time.Second, start.Add(time.Second)})
	// Marked by reads after the step, out of order (members race).
	c.add(wallMark{48905 * time.Millisecond, start.Add(48905*time.Millisecond + step)})
	c.add(wallMark{42006 * time.Millisecond, start.Add(42006*time.Millisecond + step)})
	wall := func(d time.Duration) contract.Instant { return contract.InstantOf(start.Add(d)) }
	entries := []contract.HistoryEntry{
		{At: wall(300 * time.Millisecond), Shard: 0, ToMember: "m-01", Cause: contract.MoveJoin},
		// Decided 50 ms before m-07's heartbeat at 42.006 s was answered.
		{At: wall(41956*time.Millisecond + step), Shard: 0, FromMember: "m-01", ToMember: "m-07", Cause: contract.MoveLeaseExpired},
		// Decided at 48.8 s; m-01 read it at 48.902 s (no mark there).
		{At: wall(48800*time.Millisecond + step), Shard: 22, FromMember: "m-08", ToMember: "m-01", Cause: contract.MoveJoin},
	}
	moves := []membersim.Handoff{
		{Shard: 0, To: "m-01", At: 400 * time.Millisecond},
		{Shard: 0, From: "m-01", To: "m-07", At: 42006 * time.Millisecond},
		{Shard: 22, From: "m-08", To: "m-01", At: 48902 * time.Millisecond},
	}
	if vs, explained := historyViolations(entries, moves, c.instant); explained != 3 || len(vs) != 0 {
		t.Errorf("with the marks: explained %d, violations %v; want all 3", explained, vs)
	}
	// start plus the offset, what the check did: the moves after the step
	// look unexplained.
	if _, explained := historyViolations(entries, moves, wall); explained != 1 {
		t.Errorf("start plus offset explains %d moves; the test no longer shows the step", explained)
	}
	// A move recorded after its read is still a violation across the step.
	late := []contract.HistoryEntry{entries[0], {At: wall(42100*time.Millisecond + step), Shard: 0, ToMember: "m-07", Cause: contract.MoveLeaseExpired}}
	if vs, explained := historyViolations(late, moves[:2], c.instant); explained != 1 || len(vs) != 1 {
		t.Errorf("an entry after the read: explained %d, violations %v; want 1 and 1", explained, vs)
	}
}

// Without a step, a mark is the start's wall clock plus its offset.
func TestWallClockMark(t *testing.T) {
	start := time.Now()
	c := newWallClock(start)
	time.Sleep(5 * time.Millisecond)
	at := time.Since(start)
	time.Sleep(5 * time.Millisecond)
	c.mark(at)
	want := contract.InstantOf(start.Add(at + time.Second))
	if got := c.instant(at + time.Second); got < want-2 || got > want+2 {
		t.Errorf("instant %d, want %d ± 2 ms", got, want)
	}
	if got, want := c.instant(0), contract.InstantOf(start); got != want {
		t.Errorf("instant(0) %d, want %d", got, want)
	}
}
