package client

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/eventually"
)

// handling records every handler run of a set of consumers: which
// consumer ran it on which shard and when it started, and counts the runs
// that began while another consumer was in a handler of the same shard.
type handling struct {
	mu       sync.Mutex
	runs     []handled
	inside   map[int]map[string]int // shard → consumer → handlers running
	overlaps int
}

type handled struct {
	shard    int
	id       string
	consumer string
	at       time.Time
}

func newHandling() *handling { return &handling{inside: map[int]map[string]int{}} }

func (h *handling) handler(consumer string) Handler {
	return func(_ context.Context, m Message) error {
		h.mu.Lock()
		in := h.inside[m.Shard]
		if in == nil {
			in = map[string]int{}
			h.inside[m.Shard] = in
		}
		for other, n := range in {
			if other != consumer && n > 0 {
				h.overlaps++
			}
		}
		in[consumer]++
		h.runs = append(h.runs, handled{shard: m.Shard, id: m.ID, consumer: consumer, at: time.Now()})
		h.mu.Unlock()
		time.Sleep(time.Millisecond) // handler time: leaves room for an overlap to show
		h.mu.Lock()
		in[consumer]--
		h.mu.Unlock()
		return nil
	}
}

// runsAfter returns the runs that started at or after t, by shard, in
// order.
func (h *handling) runsAfter(t time.Time) map[int][]handled {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := map[int][]handled{}
	for _, r := range h.runs {
		if !r.at.Before(t) {
			out[r.shard] = append(out[r.shard], r)
		}
	}
	return out
}

func (h *handling) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.runs)
}

// idLess compares stream entry ids "<ms>-<seq>" ("0" is the smallest).
func idLess(a, b string) bool {
	parse := func(s string) (uint64, uint64) {
		ms, seq, _ := strings.Cut(s, "-")
		x, _ := strconv.ParseUint(ms, 10, 64)
		y, _ := strconv.ParseUint(seq, 10, 64)
		return x, y
	}
	am, as := parse(a)
	bm, bs := parse(b)
	return am < bm || am == bm && as < bs
}

// TestLiveResetWhileConsuming: two Consumers read a 4-shard group through a
// coordinator process while a producer writes; a live reset to EARLIEST,
// then one to LATEST, run on every shard. No entry is handled by two
// consumers at once, and no consumer reads a reset shard from its old
// position once the reset is APPLYING: the entry right after the id the
// reset set is handled after it (EARLIEST: the stream's first entry, it is
// all handled again), and none at or below that id (LATEST: what was
// written before is skipped, pending entries included).
func TestLiveResetWhileConsuming(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a coordinator process")
	}
	t.Setenv("COORDINATOR_STREAMS_PROVISIONING_ENABLED", "true") // Redis for the resets
	coord, rdb, prefix := sharedGroup(t, 4, "g")
	ctx := context.Background()
	h := newHandling()
	for _, id := range []string{"a", "b"} {
		c, err := NewConsumer(ConsumerConfig{
			Member:  MemberConfig{Coordinator: coord, StreamPrefix: prefix, Group: "g", MemberID: id},
			Redis:   rdb,
			Handler: h.handler(id),
		})
		if err != nil {
			t.Fatal(err)
		}
		runConsumer(t, c)
	}
	for s := range 4 {
		addEntries(t, rdb, prefix+":"+itoa(s), 25)
	}
	eventually.True(t, "the 100 entries handled", func() bool { return h.count() >= 100 })

	var written atomic.Int64
	stop := make(chan struct{})
	var producing sync.WaitGroup
	producing.Add(1)
	go func() {
		defer producing.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
			key := prefix + ":" + itoa(i%4)
			if rdb.XAdd(ctx, &redis.XAddArgs{Stream: key, Values: []any{"seq", i}}).Err() == nil {
				written.Add(1)
			}
		}
	}()
	for _, to := range []string{contract.ResetToEarliest, contract.ResetToLatest} {
		r, err := coord.LiveReset(ctx, prefix, "g", contract.OffsetReset{To: to, RequestedBy: "test", Reason: "replay"})
		if err != nil {
			t.Fatal(err)
		}
		r, err = coord.WaitReset(ctx, prefix, "g", r.ResetID, 20*time.Millisecond)
		if err != nil || r.State != contract.ResetDone {
			t.Fatalf("%s reset: %+v, %v", to, r, err)
		}
		t.Logf("%s: APPLYING after %v, DONE after %v (heartbeat interval 200ms)", to,
			r.ApplyingAt.Time().Sub(r.CreatedAt.Time()), r.UpdatedAt.Time().Sub(r.CreatedAt.Time()))
		applying := r.ApplyingAt.Time()
		for _, s := range r.Shards {
			setID := s.SetID
			key := prefix + ":" + itoa(s.ShardIndex)
			// Handlers run in parallel: the entry right after the id set is
			// among those handled after APPLYING, not necessarily the first
			// (after LATEST, once the producer wrote it).
			eventually.True(t, "shard "+itoa(s.ShardIndex)+" read from "+setID, func() bool {
				first, err := rdb.XRangeN(ctx, key, exclusiveAfter(setID), "+", 1).Result()
				return err == nil && len(first) == 1 && slices.ContainsFunc(h.runsAfter(applying)[s.ShardIndex], func(r handled) bool { return r.id == first[0].ID })
			})
			runs := h.runsAfter(applying)[s.ShardIndex]
			for _, run := range runs {
				if !idLess(setID, run.id) {
					t.Errorf("%s: shard %d: %s handled by %s after APPLYING, at or below the id set (%s)", to, s.ShardIndex, run.id, run.consumer, setID)
					break
				}
			}
		}
	}
	close(stop)
	producing.Wait()
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.overlaps != 0 {
		t.Errorf("%d handler runs started while another consumer was in a handler of the same shard", h.overlaps)
	}
	t.Logf("%d handler runs, %d entries written during the resets", len(h.runs), written.Load())
}

// exclusiveAfter is the XRANGE start just past id.
func exclusiveAfter(id string) string {
	if id == "0" {
		return "-"
	}
	return "(" + id
}
