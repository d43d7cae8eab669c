package health_test

import (
	"testing"

	"github.com/redis-stream-coordinator/coordinator/internal/testkit/purity"
)

// The rules stay pure (docs/architecture.md §2): no actor system, Redis,
// Prometheus or HTTP below them, no clock read, goroutine, lock or
// context in them.
func TestHealthIsPure(t *testing.T) {
	purity.Deps(t, ".", "github.com/asynkron/protoactor-go", "github.com/redis/go-redis", "github.com/prometheus", "net/http")
	purity.Source(t, append(purity.Clock, "sync.", "context.")...)
}
