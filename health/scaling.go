package health

import (
	"math"
	"slices"
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
	// IngestRate is the median, over the last ingestIntervals intervals
	// (between consecutive rounds), of the entries the group's shards
	// gained per second: a burst raises one interval's rate and the
	// backlog, not the ingest the members must keep up with afterwards,
	// while a step in the rate shows within two intervals. Backlog sums
	// the shards' last known lags.
	IngestRate float64
	Backlog    int64
	// ConsumeRatePerMember is what one member delivers per second, from
	// the intervals in which the members were busy: entries delivered,
	// divided by the members holding shards, in an interval that began
	// with at least as many entries waiting as were delivered during it
	// and ended with some still waiting (the members read as fast as they
	// can; a rate measured otherwise tells their load, not their
	// capacity). It is the median of the busy intervals in the window, or
	// the last such median once none is left in it; the latest interval's
	// rate when it is higher (the members got faster) or no busy interval
	// was seen yet; FallbackRatePerMember without any measure (Measured
	// false).
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

// ingestIntervals is the number of the latest intervals whose median is
// the ingest rate: three, so that one interval's burst is left out and a
// lasting change of rate counts from its second interval.
const ingestIntervals = 3

// inputs are a round's sums over the group's shards: the last known lags,
// the members holding shards, the shard count, and the interval since the
// previous round.
type inputs struct {
	backlog         int64
	members, shards int
	span            span
}

// span is the group's change over one interval between two rounds, summed
// over the shards sampled in both: entries added and delivered, the lags
// at its start and end. ok is false when it cannot be measured: no
// previous round, a stream written anew (its entries-added fell), or a
// lag Redis could not tell (then delivered is unknown).
type span struct {
	seconds                  float64
	added, delivered         int64
	lagStart, lagEnd         int64
	members                  int
	ok, lagsKnown, rewritten bool
}

// add folds one shard's change from prev to cur into the span.
func (iv *span) add(prev, cur point) {
	added := cur.produced - prev.produced
	if added < 0 {
		iv.rewritten = true
		return
	}
	iv.added += added
	if !prev.lagKnown() || !cur.lagKnown() {
		iv.lagsKnown = false
		return
	}
	iv.delivered += max(added-(cur.lag-prev.lag), 0)
	iv.lagStart += prev.lag
	iv.lagEnd += cur.lag
}

func (iv span) ingest() float64 { return float64(iv.added) / iv.seconds }

// busy reports whether the members read as fast as they could throughout
// the interval (see Signal.ConsumeRatePerMember).
func (iv span) busy() bool {
	return iv.lagsKnown && iv.members > 0 && iv.delivered > 0 && iv.lagStart >= iv.delivered && iv.lagEnd > 0
}

// perMember is the entries each member delivered per second.
func (iv span) perMember() float64 { return float64(iv.delivered) / iv.seconds / float64(iv.members) }

// median is the median of xs (0 for none); it sorts xs.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	slices.Sort(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
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
	// intervals are the spans of the window's last intervals (at most
	// Window − 1), oldest first.
	intervals []span
	// busyRate is the last median rate per member of busy intervals.
	busyRate float64
	busy     bool
}

// step computes the round's signal from in, keeping the last size
// intervals (at least 1), and moves the hysteresis.
func (s *scaler) step(at time.Time, in inputs, size int, c ScalingConfig) Signal {
	size = max(size, 1)
	if iv := in.span; iv.ok && !iv.rewritten && iv.seconds > 0 {
		if len(s.intervals) >= size {
			s.intervals = append(s.intervals[:0], s.intervals[len(s.intervals)-size+1:]...)
		}
		s.intervals = append(s.intervals, iv)
	}
	recent := s.intervals[max(len(s.intervals)-ingestIntervals, 0):]
	rates := make([]float64, len(recent))
	for i, iv := range recent {
		rates[i] = iv.ingest()
	}
	ingest := median(rates)
	sig := Signal{Members: in.members, ShardCount: in.shards, IngestRate: round2(ingest), Backlog: in.backlog,
		TargetDrain: c.TargetDrain, At: at}
	sig.ConsumeRatePerMember, sig.Measured = s.rate(in, c)
	need := ingest + float64(in.backlog)/c.TargetDrain.Seconds()
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
	var busy []float64
	for _, iv := range s.intervals {
		if iv.busy() {
			busy = append(busy, iv.perMember())
		}
	}
	if len(busy) > 0 {
		s.busyRate, s.busy = round2(median(busy)), true
	}
	var r float64
	if n := len(s.intervals); n > 0 && in.span.ok {
		if last := s.intervals[n-1]; last.lagsKnown && last.members > 0 {
			r = round2(last.perMember())
		}
	}
	switch {
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
