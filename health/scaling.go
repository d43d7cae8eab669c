package health

import (
	"math"
	"time"
)

// Signal is a group's scaling signal: the members it needs so that its
// backlog drains within the target drain time while it keeps up with its
// ingest, and the inputs it was computed from.
type Signal struct {
	// Desired is Recommended after hysteresis: it rises to a higher
	// recommendation at once and falls only once the recommendations
	// stayed lower for ScaleDownDelay (then to the highest of them), so
	// it does not flap. Since is when it took its value.
	Desired int
	Since   time.Time
	// Recommended is ceil((IngestRate + Backlog / TargetDrain) /
	// ConsumeRatePerMember), bounded (Config.Bound): 0 (then the minimum)
	// when nothing arrives and nothing waits.
	Recommended int
	// Members holding shards and the shard count at the round.
	Members, ShardCount int
	// IngestRate sums the shards' ingest rates over their windows; Backlog
	// their last known lags.
	IngestRate float64
	Backlog    int64
	// ConsumeRatePerMember is the group's consume rate over the window
	// divided by Members: Measured while members hold shards and consume.
	// A measure taken while entries waited at both ends of the window (the
	// members read as fast as they can) is kept: when the members are not
	// that busy (a rate measured then tells their load, not their
	// capacity) or consume nothing, the higher of it and the current
	// measure is used; without any measure it is FallbackRatePerMember.
	ConsumeRatePerMember float64
	Measured             bool
	// PredictedDrain is the time Desired members take to drain Backlog
	// while entries keep arriving at IngestRate: Backlog / (Desired ×
	// ConsumeRatePerMember − IngestRate); 0 without backlog; nil when they
	// cannot catch up.
	PredictedDrain *time.Duration
	TargetDrain    time.Duration
	At             time.Time
}

// inputs are the group's sums over its shards' evidence.
type inputs struct {
	ingest, consume         float64
	backlog, backlogAtStart int64
	members, shards         int
}

func (in *inputs) add(e Evidence) {
	if e.IngestRate != nil {
		in.ingest += *e.IngestRate
	}
	if e.ConsumeRate != nil {
		in.consume += *e.ConsumeRate
	}
	if e.LagEnd != nil {
		in.backlog += *e.LagEnd
	}
	if e.LagStart != nil && e.Samples > 1 {
		in.backlogAtStart += *e.LagStart
	}
}

// Bound bounds a member count n by c's MinMembers and MaxMembers (when
// set) and by shardCount, which wins.
func (c ScalingConfig) Bound(n, shardCount int) int {
	n = max(n, c.MinMembers)
	if c.MaxMembers > 0 {
		n = min(n, c.MaxMembers)
	}
	return max(min(n, shardCount), 0)
}

// scaler is a group's signal between rounds.
type scaler struct {
	desired int
	since   time.Time
	set     bool
	// lowering is set while the recommendations stay below desired, since
	// lowerSince; lowerPeak is the highest of them.
	lowering   bool
	lowerSince time.Time
	lowerPeak  int
	// busyRate is the last rate per member measured while entries waited.
	busyRate float64
	busy     bool
}

// step computes the round's signal and moves the hysteresis.
func (s *scaler) step(at time.Time, in inputs, c ScalingConfig) Signal {
	sig := Signal{Members: in.members, ShardCount: in.shards, IngestRate: round2(in.ingest), Backlog: in.backlog,
		TargetDrain: c.TargetDrain, At: at}
	sig.ConsumeRatePerMember, sig.Measured = s.rate(in, c)
	need := in.ingest + float64(in.backlog)/c.TargetDrain.Seconds()
	raw := 0
	if need > 0 {
		raw = int(min(math.Ceil(need/sig.ConsumeRatePerMember-1e-9), math.MaxInt32))
	}
	sig.Recommended = c.Bound(raw, in.shards)
	s.hysteresis(at, sig.Recommended, c.ScaleDownDelay)
	sig.Desired, sig.Since = s.desired, s.since
	sig.PredictedDrain = predictedDrain(sig)
	return sig
}

// rate is the consume rate per member to plan with, and whether it was
// measured (see Signal.ConsumeRatePerMember).
func (s *scaler) rate(in inputs, c ScalingConfig) (float64, bool) {
	var r float64
	if in.members > 0 {
		r = round2(in.consume / float64(in.members))
	}
	switch {
	case r > 0 && in.backlog > 0 && in.backlogAtStart > 0:
		s.busyRate, s.busy = r, true
		return r, true
	case s.busy:
		return max(r, s.busyRate), true
	case r > 0:
		return r, true
	}
	return c.FallbackRatePerMember, false
}

func (s *scaler) hysteresis(at time.Time, rec int, delay time.Duration) {
	switch {
	case !s.set || rec > s.desired:
		s.desired, s.since, s.set, s.lowering = rec, at, true, false
	case rec == s.desired:
		s.lowering = false
	default:
		if !s.lowering {
			s.lowering, s.lowerSince, s.lowerPeak = true, at, rec
		}
		s.lowerPeak = max(s.lowerPeak, rec)
		if at.Sub(s.lowerSince) >= delay {
			s.desired, s.since, s.lowering = s.lowerPeak, at, false
		}
	}
}

// predictedDrain is Signal.PredictedDrain of sig.
func predictedDrain(sig Signal) *time.Duration {
	if sig.Backlog == 0 {
		d := time.Duration(0)
		return &d
	}
	spare := float64(sig.Desired)*sig.ConsumeRatePerMember - sig.IngestRate
	if spare <= 0 {
		return nil
	}
	d := time.Duration(float64(sig.Backlog) / spare * float64(time.Second)).Round(time.Millisecond)
	return &d
}
