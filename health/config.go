package health

import "time"

// Config holds the window, the thresholds and the scaling bounds. The
// coordinator's are the `status` and `scaling` keys of its configuration
// (package config, which validates them); DefaultConfig is theirs.
type Config struct {
	// Window is the number of samples kept per shard: a status is decided
	// on at most that many (status.window).
	Window int
	// MinSamples is the number of consecutive samples a trend needs:
	// LAGGING (lag above LagThreshold and never shrinking) and STALLED
	// (position not moving) are decided on at least that many
	// (status.min-samples, at most Window).
	MinSamples int
	// StoppedSamples is the number of consecutive samples without a
	// holder after which a shard with waiting entries is STOPPED, or all
	// of them while the window holds fewer (status.stopped-samples, at
	// most Window): one sample between two holders during a handover is
	// no stop.
	StoppedSamples int
	// LagThreshold: a run of samples in which the lag is at or below it
	// at least once is no LAGGING trend (status.lag-threshold).
	LagThreshold int64
	Scaling      ScalingConfig
}

// ScalingConfig bounds and smooths desiredMembers.
type ScalingConfig struct {
	// TargetDrain is the time in which the backlog should drain
	// (scaling.target-drain-time).
	TargetDrain time.Duration
	// MinMembers and MaxMembers bound the signal (scaling.min-members,
	// scaling.max-members; MaxMembers 0: only the shard count bounds it).
	// The shard count bounds it too, and wins over MinMembers.
	MinMembers, MaxMembers int
	// ScaleDownDelay is how long a lower recommendation must hold before
	// the signal falls (scaling.scale-down-delay); a rise is at once.
	ScaleDownDelay time.Duration
	// FallbackRatePerMember is the entries per second one member is
	// assumed to consume before any was measured
	// (scaling.fallback-rate-per-member).
	FallbackRatePerMember float64
}

// DefaultConfig is the configuration's defaults: a window of 10 samples,
// trends over 5, a stop after 2 samples without a holder, no lag
// threshold; a 60 s target drain time, at least 1 member, no maximum but
// the shard count, a 5 minute scale-down delay, 100 entries per second
// per member until measured.
func DefaultConfig() Config {
	return Config{Window: 10, MinSamples: 5, StoppedSamples: 2,
		Scaling: ScalingConfig{TargetDrain: time.Minute, MinMembers: 1, ScaleDownDelay: 5 * time.Minute, FallbackRatePerMember: 100}}
}

// normalized returns c with its unset (non-positive) Window, MinSamples,
// StoppedSamples, TargetDrain and FallbackRatePerMember set to
// DefaultConfig's, MinSamples and StoppedSamples capped at Window, and
// negative bounds and delays as 0.
func (c Config) normalized() Config {
	d := DefaultConfig()
	if c.Window <= 0 {
		c.Window = d.Window
	}
	if c.MinSamples <= 0 {
		c.MinSamples = d.MinSamples
	}
	if c.StoppedSamples <= 0 {
		c.StoppedSamples = d.StoppedSamples
	}
	c.MinSamples, c.StoppedSamples = min(c.MinSamples, c.Window), min(c.StoppedSamples, c.Window)
	s := &c.Scaling
	if s.TargetDrain <= 0 {
		s.TargetDrain = d.Scaling.TargetDrain
	}
	if s.FallbackRatePerMember <= 0 {
		s.FallbackRatePerMember = d.Scaling.FallbackRatePerMember
	}
	s.MinMembers, s.MaxMembers, s.ScaleDownDelay = max(s.MinMembers, 0), max(s.MaxMembers, 0), max(s.ScaleDownDelay, 0)
	return c
}
