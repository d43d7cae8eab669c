package group_test

import (
	"testing"

	"github.com/redis-stream-coordinator/coordinator/internal/testkit/purity"
)

// The domain stays pure: nothing under group/ may depend, even indirectly,
// on the actor system, Redis, Prometheus or HTTP (docs/architecture.md §2).
func TestDomainImportsNoRuntime(t *testing.T) {
	purity.Deps(t, "./...", "github.com/asynkron/protoactor-go", "github.com/redis/go-redis", "github.com/prometheus",
		"net/http")
}
