package health

import (
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/fakeclock"
)

// shard is a test's one-shard group: each step samples it one interval
// after the last, on a fake clock.
type shard struct {
	t     *testing.T
	clock *fakeclock.Clock
	tr    *Tracker
}

const interval = 15 * time.Second

// testConfig is DefaultConfig with trends over 3 samples.
func testConfig() Config {
	c := DefaultConfig()
	c.MinSamples = 3
	return c
}

func newShard(t *testing.T, c Config) *shard {
	return &shard{t: t, clock: fakeclock.New(time.Date(2026, 12, 8, 2, 0, 0, 0, time.UTC)), tr: NewTracker(c)}
}

// step samples s and returns its status.
func (s *shard) step(sample Sample) ShardReport {
	s.clock.Advance(interval)
	members := 0
	if sample.Holders > 0 {
		members = 1
	}
	return s.tr.Observe(Round{At: s.clock.Now(), Shards: []Sample{sample}, Members: members}).Shards[0]
}

// expect steps through samples and checks each status.
func (s *shard) expect(samples []Sample, want []contract.ConsumptionStatus) {
	s.t.Helper()
	for i, sample := range samples {
		if got := s.step(sample).Status; got != want[i] {
			s.t.Fatalf("sample %d (%+v): status %s, want %s", i, sample, got, want[i])
		}
	}
}

// at is a sample of a held shard whose group is at position pos (its
// entries 1..pos read) of produced entries.
func at(pos, produced int64) Sample {
	return Sample{Lag: produced - pos, LagKnown: true, Position: ID{Ms: uint64(pos)}, HasPosition: true, Produced: produced, Holders: 1}
}

func unheld(s Sample) Sample { s.Holders = 0; return s }

const (
	stOK      = contract.ConsumptionOK
	stLagging = contract.ConsumptionLagging
	stStalled = contract.ConsumptionStalled
	stStopped = contract.ConsumptionStopped
	stRewound = contract.ConsumptionRewound
	stPaused  = contract.ConsumptionPaused
)

func TestStatusRules(t *testing.T) {
	for _, tc := range []struct {
		name    string
		samples []Sample
		want    []contract.ConsumptionStatus
		cfg     func(*Config)
	}{
		{"idle, held", []Sample{at(0, 0), at(0, 0), at(0, 0), at(0, 0)}, []contract.ConsumptionStatus{stOK, stOK, stOK, stOK}, nil},
		{"idle, nobody holds it", []Sample{unheld(at(5, 5)), unheld(at(5, 5))}, []contract.ConsumptionStatus{stOK, stOK}, nil},
		{"keeping up", []Sample{at(10, 10), at(20, 20), at(30, 30), at(40, 41)}, []contract.ConsumptionStatus{stOK, stOK, stOK, stOK}, nil},
		{"lag grows over 3 samples, then shrinks", []Sample{at(10, 20), at(15, 30), at(20, 40), at(30, 45), at(45, 45)},
			[]contract.ConsumptionStatus{stOK, stOK, stLagging, stOK, stOK}, nil},
		{"lag grows above the threshold", []Sample{at(0, 1), at(1, 3), at(2, 5)}, []contract.ConsumptionStatus{stOK, stOK, stLagging}, nil},
		{"lag grows but stays at the threshold", []Sample{at(0, 1), at(1, 3), at(2, 5)}, []contract.ConsumptionStatus{stOK, stOK, stOK},
			func(c *Config) { c.LagThreshold = 3 }},
		{"position stands while entries arrive", []Sample{at(10, 10), at(10, 20), at(10, 30), at(10, 40), at(20, 40)},
			[]contract.ConsumptionStatus{stOK, stOK, stStalled, stStalled, stOK}, nil},
		{"position stands on a backlog nothing adds to", []Sample{at(10, 20), at(10, 20), at(10, 20)}, []contract.ConsumptionStatus{stOK, stOK, stStalled}, nil},
		{"entries wait and nobody holds it", []Sample{unheld(at(0, 50))}, []contract.ConsumptionStatus{stStopped}, nil},
		{"members gone while entries arrive", []Sample{at(10, 10), unheld(at(10, 12)), unheld(at(10, 14))},
			[]contract.ConsumptionStatus{stOK, stOK, stStopped}, nil},
		{"one sample without a holder during a handover", []Sample{at(10, 10), unheld(at(10, 12)), at(14, 14)},
			[]contract.ConsumptionStatus{stOK, stOK, stOK}, nil},
		{"position moves back", []Sample{at(30, 30), at(10, 30), at(30, 30), at(30, 30)},
			[]contract.ConsumptionStatus{stOK, stRewound, stRewound, stRewound}, nil},
		{"paused", []Sample{at(10, 10), {Paused: true, LagKnown: true, Lag: 5, Produced: 15}, {Paused: true, LagKnown: true, Lag: 9, Produced: 19}},
			[]contract.ConsumptionStatus{stOK, stPaused, stPaused}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := testConfig()
			if tc.cfg != nil {
				tc.cfg(&c)
			}
			newShard(t, c).expect(tc.samples, tc.want)
		})
	}
}

// A group that never started: no consumer group on the shard (no
// position), its lag the whole stream, nobody holding it: STOPPED from its
// first sample, OK once its stream is empty.
func TestNeverStartedGroupIsStopped(t *testing.T) {
	s := newShard(t, testConfig())
	s.expect([]Sample{{Lag: 50, LagKnown: true, Produced: 50}, {Lag: 50, LagKnown: true, Produced: 50}}, []contract.ConsumptionStatus{stStopped, stStopped})
	s2 := newShard(t, testConfig())
	s2.expect([]Sample{{LagKnown: true}}, []contract.ConsumptionStatus{stOK})
}

// A move back is no rewind when a live reset set the position (its mark
// changed) or the shard was paused around it (a live reset applies its
// positions while it holds the shard), nor when the stream was written
// anew; the rewind leaves the status once it leaves the window.
func TestRewindRules(t *testing.T) {
	reset := at(10, 30)
	reset.ResetMark = 7
	paused := at(30, 30)
	paused.Paused = true
	afterPause := at(10, 30)
	newShard(t, testConfig()).expect([]Sample{at(30, 30), reset, at(12, 30)}, []contract.ConsumptionStatus{stOK, stOK, stOK})
	newShard(t, testConfig()).expect([]Sample{at(30, 30), paused, afterPause, at(12, 30)}, []contract.ConsumptionStatus{stOK, stPaused, stOK, stOK})
	newShard(t, testConfig()).expect([]Sample{at(30, 30), at(2, 2), at(4, 4)}, []contract.ConsumptionStatus{stOK, stOK, stOK})

	c := testConfig()
	c.Window = 3
	newShard(t, c).expect([]Sample{at(30, 30), at(10, 30), at(12, 32), at(14, 34), at(16, 36)},
		[]contract.ConsumptionStatus{stOK, stRewound, stRewound, stOK, stOK})
}

// Since is the time of the round at which a shard, and the group, took
// their status; evidence is the window's.
func TestSinceAndEvidence(t *testing.T) {
	s := newShard(t, testConfig())
	start := s.clock.Now()
	s.step(at(10, 20))
	s.step(at(15, 30))
	r := s.step(at(20, 40))
	if r.Status != stLagging || !r.Since.Equal(start.Add(3*interval)) {
		t.Fatalf("%s since %v, want LAGGING since %v", r.Status, r.Since, start.Add(3*interval))
	}
	r = s.step(at(25, 50))
	if !r.Since.Equal(start.Add(3 * interval)) {
		t.Errorf("since moved to %v while LAGGING held", r.Since)
	}
	e := r.Evidence
	if e.Samples != 4 || *e.LagStart != 10 || *e.LagEnd != 25 || !e.WindowStart.Equal(start.Add(interval)) || !e.WindowEnd.Equal(start.Add(4*interval)) {
		t.Errorf("evidence %+v", e)
	}
	// 30 entries added, lag up by 15: 15 delivered, over 45 s.
	if *e.IngestRate != 0.67 || *e.ConsumeRate != 0.33 || e.Position != (ID{Ms: 25}) || !e.HasPosition || e.Holders != 1 {
		t.Errorf("rates %v %v, position %v", *e.IngestRate, *e.ConsumeRate, e.Position)
	}
	rep, _ := s.tr.Last()
	if rep.Status != stLagging || !rep.Since.Equal(start.Add(3*interval)) {
		t.Errorf("group %s since %v", rep.Status, rep.Since)
	}
}

// The group's status is its most severe shard's; counts cover every
// status; a shard count change keeps the remaining shards' windows.
func TestRollup(t *testing.T) {
	clock := fakeclock.New(time.Date(2026, 12, 8, 2, 0, 0, 0, time.UTC))
	tr := NewTracker(testConfig())
	observe := func(shards ...Sample) Report {
		clock.Advance(interval)
		return tr.Observe(Round{At: clock.Now(), Shards: shards, Members: 1})
	}
	observe(at(0, 0), at(10, 10), at(0, 0))
	r := observe(at(0, 0), at(10, 20), Sample{Paused: true, LagKnown: true})
	if r.Status != stPaused || r.Counts[stOK] != 2 || r.Counts[stPaused] != 1 || len(r.Counts) != len(contract.ConsumptionStatuses) {
		t.Fatalf("rollup %s %v", r.Status, r.Counts)
	}
	r = observe(at(0, 0), at(10, 30), Sample{Paused: true, LagKnown: true})
	if r.Status != stStalled || r.Counts[stStalled] != 1 {
		t.Fatalf("rollup %s %v", r.Status, r.Counts)
	}
	r = observe(at(0, 0), at(10, 40))
	if len(r.Shards) != 2 || r.Status != stStalled || r.Shards[1].Evidence.Samples != 4 {
		t.Fatalf("after a scale-in: %s, %d shards, %d samples", r.Status, len(r.Shards), r.Shards[1].Evidence.Samples)
	}
	if again := tr.Observe(Round{At: clock.Now(), Shards: []Sample{at(0, 0)}}); !again.At.Equal(r.At) || len(again.Shards) != 2 {
		t.Error("a round not after the last one changed the report")
	}
	if r := NewTracker(testConfig()).Observe(Round{At: clock.Now()}); r.Status != stOK || len(r.Shards) != 0 {
		t.Errorf("no shards: %s", r.Status)
	}
}

func TestParseID(t *testing.T) {
	for in, want := range map[string]ID{"0-0": {}, "1700000000000-3": {1700000000000, 3}, "42": {42, 0}} {
		if got, ok := ParseID(in); !ok || got != want || (in != "42" && got.String() != in) {
			t.Errorf("ParseID(%q) = %v, %v", in, got, ok)
		}
	}
	for _, in := range []string{"", "a-1", "1-b", "-1", "1-"} {
		if _, ok := ParseID(in); ok {
			t.Errorf("ParseID(%q) ok", in)
		}
	}
	if (ID{1, 2}).Compare(ID{1, 3}) != -1 || (ID{2, 0}).Compare(ID{1, 9}) != 1 || (ID{1, 1}).Compare(ID{1, 1}) != 0 {
		t.Error("Compare")
	}
}

// Properties of the statuses over random rounds: a shard is PAUSED
// exactly when its last sample is paused, never STOPPED while a member
// holds it, its window holds at most Window samples; the group's status
// is its most severe shard's and the counts add up to the shards.
func TestStatusProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := Config{Window: rapid.IntRange(1, 12).Draw(t, "window"), MinSamples: rapid.IntRange(1, 6).Draw(t, "min"),
			StoppedSamples: rapid.IntRange(1, 4).Draw(t, "stopped"), LagThreshold: rapid.Int64Range(0, 3).Draw(t, "threshold")}
		shards := rapid.IntRange(1, 5).Draw(t, "shards")
		tr := NewTracker(c)
		clock := fakeclock.New(time.Date(2026, 12, 8, 2, 0, 0, 0, time.UTC))
		produced := make([]int64, shards)
		pos := make([]uint64, shards)
		for range rapid.IntRange(1, 30).Draw(t, "rounds") {
			clock.Advance(time.Duration(rapid.IntRange(1, 30).Draw(t, "seconds")) * time.Second)
			samples := make([]Sample, shards)
			for i := range samples {
				produced[i] += rapid.Int64Range(0, 5).Draw(t, "added")
				pos[i] = uint64(rapid.Int64Range(0, produced[i]).Draw(t, "position"))
				samples[i] = Sample{Produced: produced[i], Lag: produced[i] - int64(pos[i]), LagKnown: rapid.Bool().Draw(t, "lagKnown"),
					Position: ID{Ms: pos[i]}, HasPosition: rapid.Bool().Draw(t, "hasPosition"),
					Holders: rapid.IntRange(0, 2).Draw(t, "holders"), Paused: rapid.IntRange(0, 4).Draw(t, "paused") == 0}
			}
			r := tr.Observe(Round{At: clock.Now(), Shards: samples, Members: 1})
			worst, total := contract.ConsumptionOK, 0
			for i, s := range r.Shards {
				if (s.Status == stPaused) != samples[i].Paused {
					t.Fatalf("shard %d: %s, paused %v", i, s.Status, samples[i].Paused)
				}
				if s.Status == stStopped && samples[i].Holders > 0 {
					t.Fatalf("shard %d STOPPED with %d holders", i, samples[i].Holders)
				}
				if s.Evidence.Samples > c.Window {
					t.Fatalf("shard %d: %d samples in a window of %d", i, s.Evidence.Samples, c.Window)
				}
				if s.Status.Severity() > worst.Severity() {
					worst = s.Status
				}
			}
			for _, n := range r.Counts {
				total += n
			}
			if r.Status != worst || total != shards {
				t.Fatalf("group %s (worst %s), counts %v", r.Status, worst, r.Counts)
			}
		}
	})
}
