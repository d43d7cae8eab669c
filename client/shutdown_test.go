package client

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis-stream-coordinator/coordinator/internal/testkit/eventually"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/testredis"
)

// handlings records, per entry, who handled it, and counts the entries
// whose handler calls in two consumers overlapped.
type handlings struct {
	mu         sync.Mutex
	by         map[string][]string // stream/id → consumers that finished handling it
	active     map[string][]string // stream/id → consumers handling it now
	concurrent map[string]bool     // stream/id handled by two consumers at once
	per        map[string]int      // consumer → entries handled
}

func newHandlings() *handlings {
	return &handlings{by: map[string][]string{}, active: map[string][]string{}, concurrent: map[string]bool{}, per: map[string]int{}}
}

// handler returns a Handler for consumer that takes work per entry.
func (h *handlings) handler(consumer string, work time.Duration) Handler {
	return func(ctx context.Context, m Message) error {
		id := m.Stream + "/" + m.ID
		h.mu.Lock()
		for _, c := range h.active[id] {
			if c != consumer {
				h.concurrent[id] = true
			}
		}
		h.active[id] = append(h.active[id], consumer)
		h.mu.Unlock()
		defer func() {
			h.mu.Lock()
			defer h.mu.Unlock()
			i := slices.Index(h.active[id], consumer)
			h.active[id] = slices.Delete(h.active[id], i, i+1)
		}()
		t := time.NewTimer(work) // the handler's work
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return ctx.Err()
		}
		h.mu.Lock()
		defer h.mu.Unlock()
		h.by[id] = append(h.by[id], consumer)
		h.per[consumer]++
		return nil
	}
}

// stats returns the entries handled, those handled more than once, and
// those handled by two consumers at overlapping times.
func (h *handlings) stats() (handled, twice, concurrent int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, cs := range h.by {
		handled++
		if len(cs) > 1 {
			twice++
		}
	}
	return handled, twice, len(h.concurrent)
}

func (h *handlings) count(consumer string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.per[consumer]
}

// The shutdown of issue 19: a consumer with a slow handler and a deep
// queue on a 2-shard group, a producer writing, a second consumer
// waiting; the first is stopped (SIGINT). It drops what it fetched but
// did not start, heartbeats while its running handler calls finish, and
// leaves: no entry is handled by two consumers at the same time, the
// leave is answered OK, and every entry is handled.
func TestShutdownUnderLiveLease(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a coordinator process")
	}
	t.Parallel() // a Redis and a coordinator of its own
	rs := testredis.Start(t)
	srv := startCoordinator(t, "redis", rs.Addr, "shutdown", 3*time.Second, provisioning)
	coord := NewCoordinator(srv.Base, WithBasicAuth("admin", "password"))
	ctx := context.Background()
	if _, err := coord.CreateGroup(ctx, "sd", "g", 2, "test"); err != nil {
		t.Fatal(err)
	}
	rdb := redisClient(t, rs.Addr)
	p, _ := NewProducer(ProducerConfig{Coordinator: coord, Redis: rdb, StreamPrefix: "sd", Group: "g"})
	written := 0
	send := func(n int) {
		for range n {
			key := fmt.Sprintf("k%d", written%20)
			if _, _, err := p.Send(ctx, key, map[string]any{"key": key, "seq": written}); err != nil {
				t.Fatal(err)
			}
			written++
		}
	}
	send(120) // the queue is deep from the start

	h := newHandlings()
	var leaveMu sync.Mutex
	var leaveStatus Status
	start := func(id string) (context.CancelFunc, chan error) {
		c, err := NewConsumer(ConsumerConfig{
			Member: MemberConfig{Coordinator: coord, StreamPrefix: "sd", Group: "g", MemberID: id,
				Hooks: Hooks{OnLeft: func(s Status) {
					if id == "first" {
						leaveMu.Lock()
						leaveStatus = s
						leaveMu.Unlock()
					}
				}}},
			Redis: rdb, Workers: 2, BatchSize: 100, ClaimMinIdle: 500 * time.Millisecond,
			Handler: h.handler(id, 50*time.Millisecond),
		})
		if err != nil {
			t.Fatal(err)
		}
		cctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- c.Run(cctx) }()
		return cancel, done
	}
	stopFirst, firstDone := start("first")
	eventually.True(t, "the first consumer handles entries", func() bool { return h.count("first") >= 10 })
	stopSecond, secondDone := start("second")
	eventually.True(t, "the second consumer handles entries", func() bool { return h.count("second") >= 5 })
	send(30)
	stopFirst()
	if err := <-firstDone; err != nil {
		t.Fatalf("first consumer: %v", err)
	}
	send(30)
	eventually.True(t, "every entry handled", func() bool {
		handled, _, _ := h.stats()
		return handled == written
	})
	stopSecond()
	if err := <-secondDone; err != nil {
		t.Fatalf("second consumer: %v", err)
	}
	handled, twice, concurrent := h.stats()
	leaveMu.Lock()
	defer leaveMu.Unlock()
	t.Logf("entries %d handled %d (first %d, second %d), handled twice %d, handled concurrently by two consumers %d; the first's leave was answered %s",
		written, handled, h.count("first"), h.count("second"), twice, concurrent, leaveStatus)
	if concurrent != 0 {
		t.Errorf("%d entries handled by two consumers at the same time", concurrent)
	}
	if leaveStatus != StatusOK {
		t.Errorf("the first consumer's leave was answered %q, want OK", leaveStatus)
	}
}
