package core_test

import (
	"testing"

	"github.com/redis-stream-coordinator/coordinator/internal/testkit/purity"
)

// The core stays pure (docs/architecture.md §2): it depends on no actor
// system, store driver, cluster node, metrics or HTTP, and its code reads
// no clock, starts no goroutine and takes no context. It leaves the store
// encoding to the runtime's commit path: it hands over records, never a
// persistence document or mutation.
func TestCoreIsPure(t *testing.T) {
	purity.Deps(t, ".", "github.com/asynkron/protoactor-go", "github.com/redis/go-redis", "github.com/prometheus",
		"net/http", "github.com/redis-stream-coordinator/coordinator/cluster",
		"github.com/redis-stream-coordinator/coordinator/persistence/redis",
		"github.com/redis-stream-coordinator/coordinator/persistence/sql",
		"github.com/redis-stream-coordinator/coordinator/persistence/memory",
		"github.com/redis-stream-coordinator/coordinator/persistence/breaker")
	purity.Source(t, append(purity.Clock, "context.", "sync.",
		"persistence.Encode", "persistence.MutationOf", "persistence.Rewrite", "persistence.Mutation", "persistence.Document")...)
}
