package sql

import (
	"testing"
	"time"

	"github.com/redis-stream-coordinator/coordinator/internal/testkit/storetest"
	"github.com/redis-stream-coordinator/coordinator/persistence"
)

// BenchmarkAcquireAtOnce acquires 10,000 groups at once (a coordinator
// taking over the groups of one that left); calls/key is uses of a pooled
// connection (a transaction or a lone statement) per group.
func BenchmarkAcquireAtOnce(b *testing.B) {
	s := newStore(b)
	self := persistence.Peer{ID: "c1", Token: "t1", URL: "http://c1"}
	if err := s.Register(b.Context(), self, time.Hour); err != nil {
		b.Fatal(err)
	}
	storetest.BenchAcquireAtOnce(b, s, self, 10_000, func() int64 { return s.pool.Stat().AcquireCount() })
}
