package observe

import (
	"context"

	"github.com/redis-stream-coordinator/coordinator/contract"
)

// HealthChecker produces the health report the edge serves (package http)
// and package metrics reads (metrics.Health). Check must not block on
// Redis (docs/protocol.md §10.2: it answers from a cache and refreshes
// asynchronously).
type HealthChecker interface {
	Check(ctx context.Context) contract.HealthReport
}
