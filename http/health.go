package httpapi

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
)

// PartialOutage is an error of a probe's check that found its dependency
// answering in part: some of its nodes (Unreachable) did not answer while
// others did. The probe's state is then DEGRADED.
type PartialOutage interface {
	error
	Unreachable() []string
}

// ProbeOptions configure a Probe.
type ProbeOptions struct {
	// Check tests the dependency; nil means healthy. Required.
	Check func(context.Context) error
	// Timeout bounds one check; default 300ms.
	Timeout time.Duration
	// CacheTTL is how long a result is served; default 1s.
	CacheTTL time.Duration
	// Now is the clock; default time.Now.
	Now func() time.Time
}

// Probe caches the result of a dependency check that runs asynchronously.
// State never blocks: while the last result is fresh it is served;
// otherwise State starts one check (never two at once) and answers with
// the previous result, UNKNOWN before the first check ends.
type Probe struct {
	o ProbeOptions

	mu          sync.Mutex
	state       string
	unreachable []string
	checkedAt   time.Time
	probing     bool
}

// NewProbe returns a Probe whose state is UNKNOWN until the first check,
// which the first State call starts.
func NewProbe(o ProbeOptions) *Probe {
	if o.Timeout <= 0 {
		o.Timeout = 300 * time.Millisecond
	}
	if o.CacheTTL <= 0 {
		o.CacheTTL = time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Probe{o: o, state: contract.RedisUnknown}
}

// State returns "UP", "DEGRADED" (the check failed with a PartialOutage,
// whose unreachable nodes it returns too), "DOWN" (any other failure) or
// "UNKNOWN" (the Redis* and Store* values).
func (p *Probe) State() (state string, unreachable []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.probing && (p.checkedAt.IsZero() || p.o.Now().Sub(p.checkedAt) >= p.o.CacheTTL) {
		p.probing = true
		go p.run()
	}
	return p.state, p.unreachable
}

// run checks once and caches the result.
func (p *Probe) run() {
	ctx, cancel := context.WithTimeout(context.Background(), p.o.Timeout)
	err := p.o.Check(ctx)
	cancel()
	state, unreachable := contract.RedisUp, []string(nil)
	if partial, ok := errors.AsType[PartialOutage](err); ok {
		state, unreachable = contract.RedisDegraded, partial.Unreachable()
	} else if err != nil {
		state = contract.RedisDown
	}
	p.mu.Lock()
	p.state, p.unreachable, p.checkedAt, p.probing = state, unreachable, p.o.Now(), false
	p.mu.Unlock()
}

// PingHealthOptions configure a PingHealth.
type PingHealthOptions struct {
	CoordinatorID string
	// Ping checks Redis; required.
	Ping func(context.Context) error
	// Timeout bounds one ping (health.redis-timeout-ms); default 300ms.
	Timeout time.Duration
	// CacheTTL is how long a ping result is served (health.cache-ttl-ms);
	// default 1s.
	CacheTTL time.Duration
	// Now is the clock; default time.Now.
	Now func() time.Time
}

// PingHealth is the observe.HealthChecker used when Redis is a required
// dependency (docs/protocol.md §10.2): its Redis state is a Probe of Ping,
// so Check never blocks.
type PingHealth struct {
	id    string
	probe *Probe
}

// NewPingHealth returns a PingHealth whose Redis state is UNKNOWN until the
// first ping, which the first Check starts.
func NewPingHealth(o PingHealthOptions) *PingHealth {
	return &PingHealth{id: o.CoordinatorID, probe: NewProbe(ProbeOptions{Check: o.Ping, Timeout: o.Timeout, CacheTTL: o.CacheTTL, Now: o.Now})}
}

// Check returns the report: status DEGRADED iff Redis is DOWN or DEGRADED
// (a Ping that returned a PartialOutage: its nodes are listed in
// RedisUnreachable), loop UP.
func (h *PingHealth) Check(context.Context) contract.HealthReport {
	redis, unreachable := h.probe.State()
	status := statusUp
	if redis == contract.RedisDown || redis == contract.RedisDegraded {
		status = statusDegraded
	}
	return contract.HealthReport{Status: status, CoordinatorID: h.id, Redis: redis, RedisUnreachable: unreachable, Loop: "UP"}
}
