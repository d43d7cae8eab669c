package health

import (
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/redis-stream-coordinator/coordinator/internal/testkit/fakeclock"
)

// group is a test's group of equal shards sampled every interval on a
// fake clock.
type group struct {
	clock *fakeclock.Clock
	tr    *Tracker
}

func newGroup(c Config) *group {
	return &group{clock: fakeclock.New(time.Date(2026, 12, 8, 2, 0, 0, 0, time.UTC)), tr: NewTracker(c)}
}

// round samples shards shards, each at lag lag with produced entries
// added so far, held by members members, after d.
func (g *group) round(d time.Duration, shards int, produced, lag int64, members int) Signal {
	g.clock.Advance(d)
	samples := make([]Sample, shards)
	for i := range samples {
		samples[i] = Sample{Lag: lag, LagKnown: true, Produced: produced, Position: ID{Ms: uint64(produced - lag)}, HasPosition: true, Holders: 1}
	}
	return g.tr.Observe(Round{At: g.clock.Now(), Shards: samples, Members: members}).Scaling
}

// The worked example of docs/observability.md ("Scaling signal"): 16
// shards, 400 entries/s arriving, 4 members delivering 600/s together
// while 36,000 entries wait: ceil((400 + 36000/60) / 150) = 7 members,
// which drain it in 36000 / (7 × 150 − 400) ≈ 55.4 s.
func TestWorkedExample(t *testing.T) {
	g := newGroup(DefaultConfig())
	// Per shard over 10 s: 250 entries added (25/s), 375 delivered.
	first := g.round(0, 16, 1000, 2375, 4)
	if first.Measured || first.ConsumeRatePerMember != 100 || first.Recommended != 7 {
		t.Fatalf("first round: %+v", first) // ceil(38000/60/100) = 7 on the fallback rate
	}
	s := g.round(10*time.Second, 16, 1250, 2250, 4)
	if s.IngestRate != 400 || s.Backlog != 36000 || s.ConsumeRatePerMember != 150 || !s.Measured {
		t.Fatalf("inputs %+v", s)
	}
	if s.Recommended != 7 || s.Desired != 7 || s.PredictedDrain == nil || *s.PredictedDrain != 55385*time.Millisecond {
		t.Fatalf("signal %+v (drain %v)", s, s.PredictedDrain)
	}
}

// The signal is bounded by the shard count (which wins over the
// minimum), the configured maximum and minimum; a group with nothing to
// read wants the minimum.
func TestSignalBounds(t *testing.T) {
	c := DefaultConfig()
	if got := newGroup(c).round(0, 4, 1e6, 1e6, 0).Desired; got != 4 {
		t.Errorf("a huge backlog on 4 shards: %d members, want 4", got)
	}
	c.Scaling.MaxMembers = 3
	if got := newGroup(c).round(0, 4, 1e6, 1e6, 0).Desired; got != 3 {
		t.Errorf("max 3: %d", got)
	}
	c.Scaling.MinMembers = 2
	if got := newGroup(c).round(0, 4, 0, 0, 0).Desired; got != 2 {
		t.Errorf("idle, min 2: %d", got)
	}
	c.Scaling.MinMembers = 8
	c.Scaling.MaxMembers = 0
	if got := newGroup(c).round(0, 4, 0, 0, 0).Desired; got != 4 {
		t.Errorf("min 8 on 4 shards: %d", got)
	}
	c.Scaling.MinMembers = 0
	if s := newGroup(c).round(0, 4, 0, 0, 0); s.Desired != 0 || s.PredictedDrain == nil || *s.PredictedDrain != 0 {
		t.Errorf("idle, min 0: %+v", s)
	}
	if u := Unevaluated(DefaultConfig().Scaling, 0, 4); u.Desired != 1 || u.Members != 0 {
		t.Errorf("unevaluated: %+v", u)
	}
}

// A higher recommendation raises the signal at once; a lower one lowers
// it only after it held for the scale-down delay, to the highest of the
// lower ones.
func TestHysteresis(t *testing.T) {
	c := DefaultConfig()
	c.Scaling.ScaleDownDelay = time.Minute
	c.Scaling.MinMembers = 0
	g := newGroup(c)
	// Fallback 100/s per member and a 60 s target: a backlog of 6000 per
	// shard on 10 shards wants 10 members, 3000 wants 5.
	want := func(s Signal, desired, recommended int) {
		t.Helper()
		if s.Desired != desired || s.Recommended != recommended {
			t.Fatalf("desired %d recommended %d, want %d and %d", s.Desired, s.Recommended, desired, recommended)
		}
	}
	// Nothing arrives (produced stays), only the backlog changes.
	want(g.round(0, 10, 10000, 3000, 0), 5, 5)
	want(g.round(15*time.Second, 10, 10000, 6000, 0), 10, 10) // up at once
	start := g.clock.Now()
	want(g.round(15*time.Second, 10, 10000, 3000, 0), 10, 5) // lower from start+15s
	want(g.round(15*time.Second, 10, 10000, 3600, 0), 10, 6)
	want(g.round(15*time.Second, 10, 10000, 3000, 0), 10, 5)
	want(g.round(15*time.Second, 10, 10000, 3000, 0), 10, 5)
	s := g.round(15*time.Second, 10, 10000, 3000, 0) // lower for a minute
	want(s, 6, 5)
	if !s.Since.Equal(start.Add(75 * time.Second)) {
		t.Errorf("since %v, want %v", s.Since, start.Add(75*time.Second))
	}
	want(g.round(15*time.Second, 10, 10000, 3000, 0), 6, 5)
	want(g.round(15*time.Second, 10, 10000, 6000, 0), 10, 10)
}

// The rate per member measured while entries waited (the members were
// busy) is kept when they are not: a group that caught up does not take
// its members' light load for their capacity.
func TestBusyRateIsKept(t *testing.T) {
	c := DefaultConfig()
	c.Scaling.ScaleDownDelay = 0
	c.Window = 2
	g := newGroup(c)
	// One shard, 2 members: 300 delivered in 10 s while 1000 and 800 wait
	// (busy): 15/s each.
	g.round(0, 1, 1000, 1000, 2)
	s := g.round(10*time.Second, 1, 1100, 800, 2)
	if s.ConsumeRatePerMember != 15 || !s.Measured {
		t.Fatalf("busy rate %+v", s)
	}
	g.round(10*time.Second, 1, 1110, 0, 2) // drained
	// Caught up: 10 added and 10 delivered in 10 s, 0.5/s each.
	s = g.round(10*time.Second, 1, 1120, 0, 2)
	if s.ConsumeRatePerMember != 15 || !s.Measured {
		t.Fatalf("rate after catching up %+v", s)
	}
}

// A burst is backlog, not ingest: the entries added at once in one
// interval raise that interval's rate only, and the median of the window's
// intervals stays the steady rate (the bench's P13 step: 3,600 entries at
// once on 16 shards over a steady 180/s).
func TestBurstIsBacklogNotIngest(t *testing.T) {
	g := newGroup(DefaultConfig())
	var produced, lag int64 = 0, 0
	var s Signal
	for range 6 { // 180/s over 16 shards, read as it arrives
		produced += 180 * 10 / 16
		s = g.round(10*time.Second, 16, produced, lag, 4)
	}
	produced += 3600/16 + 180*10/16
	lag += 3600 / 16
	s = g.round(10*time.Second, 16, produced, lag, 4)
	if s.IngestRate > 180 || s.IngestRate < 176 {
		t.Fatalf("ingest after the burst %v, want the steady ~180/s", s.IngestRate)
	}
	if s.Backlog != 3600 {
		t.Fatalf("backlog %d, want 3600", s.Backlog)
	}
}

// A lasting change of the ingest rate counts from its second interval.
func TestIngestFollowsAStep(t *testing.T) {
	g := newGroup(DefaultConfig())
	var produced int64
	for range 6 {
		produced += 100 * 10
		g.round(10*time.Second, 1, produced, 0, 1)
	}
	produced += 200 * 10
	if s := g.round(10*time.Second, 1, produced, 0, 1); s.IngestRate != 100 {
		t.Fatalf("first interval at 200/s: ingest %v, want 100 still", s.IngestRate)
	}
	produced += 200 * 10
	if s := g.round(10*time.Second, 1, produced, 0, 1); s.IngestRate != 200 {
		t.Fatalf("second interval at 200/s: ingest %v, want 200", s.IngestRate)
	}
}

// Members that keep up with a few entries left waiting are not busy: their
// rate is their load, planned with (a lower bound of their capacity) only
// until they are seen busy, and never kept as their capacity.
func TestLightLoadIsNotCapacity(t *testing.T) {
	g := newGroup(DefaultConfig())
	var produced int64
	var s Signal
	for range 4 { // 4 members read 25/s each, 3 entries per shard left over
		produced += 100
		s = g.round(10*time.Second, 1, produced, 3, 4)
	}
	if s.ConsumeRatePerMember != 2.5 || !s.Measured {
		t.Fatalf("light load %+v, want the measured 2.5/s of the last interval", s)
	}
	// Busy: 1,000 waiting, 4 members deliver 400 in 10 s (10/s each).
	produced += 100
	s = g.round(10*time.Second, 1, produced, 1000, 4)
	produced += 100
	s = g.round(10*time.Second, 1, produced, 700, 4)
	if s.ConsumeRatePerMember != 10 || !s.Measured {
		t.Fatalf("busy %+v, want 10/s per member", s)
	}
}

// Properties of the signal over random rounds: it stays within its
// bounds, never below the recommendation, and falls only once the
// recommendations stayed below it for the scale-down delay.
func TestSignalProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := DefaultConfig()
		c.Scaling.MinMembers = rapid.IntRange(0, 5).Draw(t, "min")
		c.Scaling.MaxMembers = rapid.IntRange(0, 20).Draw(t, "max")
		c.Scaling.ScaleDownDelay = time.Duration(rapid.IntRange(0, 8).Draw(t, "delaySteps")) * 15 * time.Second
		shards := rapid.IntRange(0, 16).Draw(t, "shards")
		g := newGroup(c)
		var produced int64
		type rec struct {
			at          time.Time
			recommended int
		}
		var history []rec
		last := -1
		for i := range rapid.IntRange(1, 40).Draw(t, "rounds") {
			produced += rapid.Int64Range(0, 5000).Draw(t, "added")
			lag := rapid.Int64Range(0, produced).Draw(t, "lag")
			s := g.round(15*time.Second, shards, produced, lag, rapid.IntRange(0, 10).Draw(t, "members"))
			history = append(history, rec{s.At, s.Recommended})
			upper := shards
			if c.Scaling.MaxMembers > 0 {
				upper = min(upper, c.Scaling.MaxMembers)
			}
			lower := min(c.Scaling.MinMembers, upper)
			if s.Desired < lower || s.Desired > upper || s.Recommended < lower || s.Recommended > upper {
				t.Fatalf("round %d: desired %d recommended %d outside [%d, %d]", i, s.Desired, s.Recommended, lower, upper)
			}
			if s.Desired < s.Recommended {
				t.Fatalf("round %d: desired %d below the recommendation %d", i, s.Desired, s.Recommended)
			}
			if last >= 0 && s.Desired < last {
				for _, h := range history {
					if !h.at.Before(s.At.Add(-c.Scaling.ScaleDownDelay)) && h.recommended >= last {
						t.Fatalf("round %d: fell from %d to %d though %d was recommended at %v", i, last, s.Desired, h.recommended, h.at)
					}
				}
			}
			last = s.Desired
		}
	})
}
