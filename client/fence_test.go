package client

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/eventually"
)

// Every message carries the fencing token of its shard's grant. A pause
// revokes the shard: the handler call running then has its context
// cancelled; the resume grants the shard again with a larger token.
func TestConsumerFenceAndRevocationCancelsHandler(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a coordinator process")
	}
	t.Parallel() // a coordinator of its own, a key prefix of its own on the shared Redis
	coord, rdb, prefix := sharedGroup(t, 1, "g")
	addEntries(t, rdb, prefix+":0", 1)
	var mu sync.Mutex
	var tokens []int64 // per handler call
	started := make(chan struct{}, 1)
	cancelled := make(chan error, 1)
	c, err := NewConsumer(ConsumerConfig{
		Member:       MemberConfig{Coordinator: coord, StreamPrefix: prefix, Group: "g", MemberID: "a"},
		Redis:        rdb,
		ClaimMinIdle: 50 * time.Millisecond,
		Handler: func(ctx context.Context, m Message) error {
			if m.Fence.Shard != m.Shard {
				t.Errorf("fence of shard %d on a message of shard %d", m.Fence.Shard, m.Shard)
			}
			mu.Lock()
			tokens = append(tokens, m.Fence.Token)
			first := len(tokens) == 1
			mu.Unlock()
			if first {
				started <- struct{}{}
				<-ctx.Done() // held until the revocation cancels it
				cancelled <- ctx.Err()
				return ctx.Err()
			}
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	runConsumer(t, c)
	<-started
	ctx := context.Background()
	shard0 := contract.PauseRequest{Shards: []int{0}, RequestedBy: "test", Reason: "revoke"}
	if _, err := coord.PauseShards(ctx, prefix, "g", shard0); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-cancelled:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("handler context ended with %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the revocation did not cancel the running handler call")
	}
	if _, err := coord.ResumeShards(ctx, prefix, "g", shard0); err != nil {
		t.Fatal(err)
	}
	eventually.True(t, "the entry handled again after the resume", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(tokens) >= 2
	})
	mu.Lock()
	defer mu.Unlock()
	if tokens[0] <= 0 || tokens[1] <= tokens[0] {
		t.Fatalf("tokens of the two grants: %v, want positive and growing", tokens)
	}
}

// An Ordered consumer runs a shard's entries one at a time in stream
// order, runs a failed entry again in place before any later one, and
// dead-letters it after MaxDeliveries runs; Fence.From is the group's
// position when the grant began. An entry id names an entry of one
// stream only: both shards' streams hold the ids 1-1 … 1-60 (as the ids
// that two streams written in the same millisecond generate may
// coincide), and the entry of shard 0 with the poison's id is handled as
// any other.
func TestOrderedConsumerKeepsStreamOrderThroughFailures(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a coordinator process")
	}
	t.Parallel()
	coord, rdb, prefix := sharedGroup(t, 2, "g")
	const n = 60
	ids := map[int][]string{}
	for s := range 2 {
		for i := range n {
			id, err := rdb.XAdd(context.Background(), &redis.XAddArgs{
				Stream: fmt.Sprintf("%s:%d", prefix, s), ID: fmt.Sprintf("1-%d", i+1), Values: []any{"key", fmt.Sprintf("k%d", i), "seq", i},
			}).Result()
			if err != nil {
				t.Fatal(err)
			}
			ids[s] = append(ids[s], id)
		}
	}
	var mu sync.Mutex
	order := map[int][]string{}
	fails := map[string]int{}
	poison := ids[1][7]
	c, err := NewConsumer(ConsumerConfig{
		Member:           MemberConfig{Coordinator: coord, StreamPrefix: prefix, Group: "g", MemberID: "o"},
		Redis:            rdb,
		Workers:          4,
		Ordered:          true,
		RetryBackoff:     time.Millisecond,
		MaxDeliveries:    3,
		DeadLetterStream: prefix + "-dead",
		Handler: func(_ context.Context, m Message) error {
			mu.Lock()
			defer mu.Unlock()
			if m.Fence.From == "" || m.Fence.Token <= 0 {
				t.Errorf("ordered message without a full fence: %+v", m.Fence)
			}
			// Entries 5, 15, 25, … of shard 0 fail twice, then succeed.
			if m.Shard == 0 && strings.HasSuffix(fmt.Sprint(m.Values["seq"]), "5") && fails[m.ID] < 2 {
				fails[m.ID]++
				return errors.New("transient")
			}
			if m.Shard == 1 && m.ID == poison {
				return errors.New("poison")
			}
			order[m.Shard] = append(order[m.Shard], m.ID)
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	runConsumer(t, c)
	eventually.True(t, "every entry handled", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(order[0]) == n && len(order[1]) == n-1
	})
	mu.Lock()
	defer mu.Unlock()
	for s := range 2 {
		want := ids[s]
		if s == 1 {
			want = append(append([]string{}, ids[1][:7]...), ids[1][8:]...)
		}
		if fmt.Sprint(order[s]) != fmt.Sprint(want) {
			t.Errorf("shard %d handled in order %v, want %v", s, order[s], want)
		}
	}
	retried := 0
	for _, k := range fails {
		retried += k
	}
	if retried == 0 {
		t.Error("no entry failed: the test exercised no retry")
	}
	eventually.True(t, "the poison entry dead-lettered", func() bool { return rdb.XLen(context.Background(), prefix+"-dead").Val() == 1 })
}
