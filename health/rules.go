package health

import (
	"math"
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
)

// classify is the status of a shard whose window is w (at least one
// point), the first rule that holds, in this order:
//
//  1. PAUSED: the shard is paused at the last sample.
//  2. STOPPED: no live member held it in the last StoppedSamples samples
//     (all of them while the window holds fewer), and entries wait at the
//     last one or arrived during them.
//  3. STALLED: for the last MinSamples samples or more, a member held it,
//     the group's position stayed the same, and entries waited at each or
//     arrived during them.
//  4. REWOUND: the position moved back between two consecutive samples of
//     the window, neither paused, with the same reset mark (no live reset
//     set it in between) and the stream not written anew.
//  5. LAGGING: over the last MinSamples samples or more, the lag stayed
//     above LagThreshold and never shrank, and the last is above the
//     first (a lag that touches the threshold, 0 by default, is no trend).
//  6. OK.
func classify(w []point, c Config) contract.ConsumptionStatus {
	switch {
	case w[len(w)-1].paused():
		return contract.ConsumptionPaused
	case stopped(w, c):
		return contract.ConsumptionStopped
	case stalled(w, c):
		return contract.ConsumptionStalled
	case rewound(w):
		return contract.ConsumptionRewound
	case lagging(w, c):
		return contract.ConsumptionLagging
	}
	return contract.ConsumptionOK
}

// waiting reports whether entries waited at every point of run or arrived
// during it.
func waiting(run []point) bool {
	if run[len(run)-1].produced > run[0].produced {
		return true
	}
	for _, p := range run {
		if !p.backlog() {
			return false
		}
	}
	return true
}

func stopped(w []point, c Config) bool {
	run := w[max(0, len(w)-c.StoppedSamples):]
	for _, p := range run {
		if p.holders > 0 {
			return false
		}
	}
	last := run[len(run)-1]
	return last.backlog() || last.produced > run[0].produced
}

func stalled(w []point, c Config) bool {
	if len(w) < c.MinSamples {
		return false
	}
	run := w[len(w)-c.MinSamples:]
	last := run[len(run)-1]
	for _, p := range run {
		if p.holders == 0 || p.pos != last.pos || p.hasPosition() != last.hasPosition() {
			return false
		}
	}
	return waiting(run)
}

func rewound(w []point) bool {
	for i := 1; i < len(w); i++ {
		a, b := w[i-1], w[i]
		if a.hasPosition() && b.hasPosition() && b.pos.Compare(a.pos) < 0 &&
			!a.paused() && !b.paused() && a.resetMark == b.resetMark && b.produced >= a.produced {
			return true
		}
	}
	return false
}

func lagging(w []point, c Config) bool {
	last := w[len(w)-1]
	if !last.lagKnown() || last.lag <= c.LagThreshold {
		return false
	}
	start := len(w) - 1
	for start > 0 && w[start-1].lagKnown() && w[start-1].lag > c.LagThreshold && w[start-1].lag <= w[start].lag {
		start--
	}
	return len(w)-start >= c.MinSamples && last.lag > w[start].lag
}

// Evidence is what a shard's status was decided on.
type Evidence struct {
	// WindowStart and WindowEnd are the times of the window's first and
	// last samples, Samples how many it holds.
	WindowStart, WindowEnd time.Time
	Samples                int
	// LagStart and LagEnd are the lags at the first and last samples, nil
	// where unknown.
	LagStart, LagEnd *int64
	// IngestRate and ConsumeRate are entries added and delivered per
	// second over the window (see rates).
	IngestRate, ConsumeRate *float64
	// Position is the group's position at the last sample (HasPosition
	// false where the consumer group does not exist), Holders and Paused
	// the last sample's.
	Position    ID
	HasPosition bool
	Holders     int
	Paused      bool
}

// evidence describes w (at least one point).
func evidence(w []point) Evidence {
	first, last := w[0], w[len(w)-1]
	e := Evidence{WindowStart: first.time(), WindowEnd: last.time(), Samples: len(w),
		Position: last.pos, HasPosition: last.hasPosition(), Holders: int(last.holders), Paused: last.paused()}
	if first.lagKnown() {
		e.LagStart = &first.lag
	}
	if last.lagKnown() {
		e.LagEnd = &last.lag
	}
	e.IngestRate, e.ConsumeRate = rates(first, last)
	return e
}

// rates are the entries added per second from a to b and the entries
// delivered per second (added minus lag growth, at least 0). Both are nil
// when b is not after a or the stream was written anew in between
// (produced fell); the consume rate also when either lag is unknown.
func rates(a, b point) (ingest, consume *float64) {
	seconds := float64(b.at-a.at) / float64(time.Second)
	added := b.produced - a.produced
	if seconds <= 0 || added < 0 {
		return nil, nil
	}
	in := round2(float64(added) / seconds)
	if !a.lagKnown() || !b.lagKnown() {
		return &in, nil
	}
	out := round2(float64(max(added-(b.lag-a.lag), 0)) / seconds)
	return &in, &out
}

func round2(v float64) float64 { return math.Round(v*100) / 100 }
