package actors

import (
	"fmt"
	"testing"

	"github.com/redis-stream-coordinator/coordinator/contract"
)

// A GET of a 1,000-member group: from the current snapshot (no mailbox),
// and with a commit before every read (one GetSnapshot round trip and one
// clone per read, the worst case).
func BenchmarkGroupRead(b *testing.B) {
	c := start(b, Options{Store: newTestStore(), GroupCommit: true})
	ctx := b.Context()
	shards := 64
	if _, err := c.CreateGroup(ctx, orders, contract.CreateRequest{RequestedBy: "bench", InitialShardCount: &shards}, false); err != nil {
		b.Fatal(err)
	}
	for i := range 1000 {
		if _, err := c.Heartbeat(ctx, orders, join(fmt.Sprintf("m-%04d", i))); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("snapshot", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := c.Group(ctx, orders); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("after-commit", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			b.StopTimer()
			if _, err := c.Heartbeat(ctx, orders, join("m-0000")); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			if _, err := c.Group(ctx, orders); err != nil {
				b.Fatal(err)
			}
		}
	})
}
