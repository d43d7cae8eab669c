package redis

import (
	"syscall"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/redis-stream-coordinator/coordinator/internal/testkit/storetest"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/testredis"
	"github.com/redis-stream-coordinator/coordinator/persistence"
)

// BenchmarkRevisionConcurrent reads one group's revision from 100
// goroutines at once (the group actors of 100 groups, each reading once
// per batch), one HGET per call on the client as before the pipeliner
// ("direct") and through Store.Revision ("pipelined"), on a throwaway
// Redis. cpu-ns/op is this process's CPU time (user+system) per call.
func BenchmarkRevisionConcurrent(b *testing.B) {
	srv := testredis.Start(b)
	c := goredis.NewClient(&goredis.Options{Addr: srv.Addr, MaxRetries: -1})
	b.Cleanup(func() { _ = c.Close() })
	s, err := New(Options{Client: c, KeyPrefix: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	key := storetest.Key(b)
	if _, err := s.Create(b.Context(), key, persistence.Encode(storetest.Group(key))); err != nil {
		b.Fatal(err)
	}
	mk := s.metadataKey(key)
	run := func(b *testing.B, read func() error) {
		b.SetParallelism(50) // 100 goroutines on 2 cores
		before := cpuTime()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if err := read(); err != nil {
					b.Error(err)
					return
				}
			}
		})
		b.ReportMetric(float64(cpuTime()-before)/float64(b.N), "cpu-ns/op")
	}
	b.Run("direct", func(b *testing.B) {
		run(b, func() error { return c.HGet(b.Context(), mk, fieldRevision).Err() })
	})
	b.Run("pipelined", func(b *testing.B) {
		run(b, func() error { _, err := s.Revision(b.Context(), key); return err })
	})
}

// cpuTime is the process's user+system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
