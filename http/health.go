package httpapi

import (
	"context"
	"sync"
	"time"
)

// Redis states of the health report (§10.2).
const (
	RedisNotConfigured = "NOT_CONFIGURED"
	RedisUp            = "UP"
	RedisDown          = "DOWN"
	RedisUnknown       = "UNKNOWN"
)

// StoreHealth is the "store" member of the health report: the metadata
// store's type (memory, redis, jdbc) and its circuit breaker's state
// (closed, half-open, open). It never changes the report's status.
type StoreHealth struct {
	Type    string `json:"type"`
	Breaker string `json:"breaker"`
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

// PingHealth is the HealthChecker used when Redis is a required dependency
// (§10.2). Check never blocks: while the last result is fresh it is
// served; otherwise Check starts one asynchronous ping (never two at once)
// and answers with the previous result, UNKNOWN before the first one ends.
type PingHealth struct {
	o PingHealthOptions

	mu        sync.Mutex
	redis     string
	checkedAt time.Time
	probing   bool
}

// NewPingHealth returns a PingHealth whose Redis state is UNKNOWN until the
// first ping, which the first Check starts.
func NewPingHealth(o PingHealthOptions) *PingHealth {
	if o.Timeout <= 0 {
		o.Timeout = 300 * time.Millisecond
	}
	if o.CacheTTL <= 0 {
		o.CacheTTL = time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &PingHealth{o: o, redis: RedisUnknown}
}

// Check returns the report: status DEGRADED iff Redis is DOWN, loop UP.
func (h *PingHealth) Check(context.Context) HealthReport {
	h.mu.Lock()
	if !h.probing && (h.checkedAt.IsZero() || h.o.Now().Sub(h.checkedAt) >= h.o.CacheTTL) {
		h.probing = true
		go h.probe()
	}
	redis := h.redis
	h.mu.Unlock()
	status := "UP"
	if redis == RedisDown {
		status = "DEGRADED"
	}
	return HealthReport{Status: status, CoordinatorID: h.o.CoordinatorID, Redis: redis, Loop: "UP"}
}

// probe pings once and caches the result.
func (h *PingHealth) probe() {
	ctx, cancel := context.WithTimeout(context.Background(), h.o.Timeout)
	err := h.o.Ping(ctx)
	cancel()
	state := RedisUp
	if err != nil {
		state = RedisDown
	}
	h.mu.Lock()
	h.redis, h.checkedAt, h.probing = state, h.o.Now(), false
	h.mu.Unlock()
}
