package member_test

import (
	"testing"

	"github.com/redis-stream-coordinator/coordinator/internal/testkit/purity"
)

// The member state machine stays pure: no actors, Redis, Prometheus or
// HTTP, even indirectly (package contract's URL builders bring net/url, which
// only parses text), and no clock reads or goroutines in its code.
func TestMemberIsPure(t *testing.T) {
	purity.Deps(t, ".", "github.com/asynkron/protoactor-go", "github.com/redis/go-redis", "github.com/prometheus", "net/http")
}

func TestMemberReadsNoClock(t *testing.T) {
	purity.Source(t, append(purity.Clock, "sync.")...)
}
