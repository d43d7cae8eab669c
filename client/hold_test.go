package client

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-stream-coordinator/coordinator/internal/testkit/eventually"
)

// With HoldFailedKeys, entries that fail twice before succeeding (every
// third of key k1) hold their
// key's later entries back, and a poison entry holds its key until it is
// dead-lettered: every key's entries succeed in stream order, once each,
// the poison's key going on after it; with HeldMax 3 most held entries
// wait in the spill list, and Held shows the held keys meanwhile.
func TestHeldKeysKeepOrderThroughFailures(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a coordinator process")
	}
	t.Parallel()
	coord, rdb, prefix := sharedGroup(t, 1, "g")
	ctx := context.Background()
	key := prefix + ":0"
	const n = 60
	byKey := map[string][]string{}
	var poison string
	for i := range n {
		k := fmt.Sprintf("k%d", i%4)
		id, err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: key, Values: []any{"key", k, "seq", i}}).Result()
		if err != nil {
			t.Fatal(err)
		}
		byKey[k] = append(byKey[k], id)
		if i == 22 { // a k2 entry
			poison = id
		}
	}
	flaky := map[string]bool{}
	for i, id := range byKey["k1"] {
		flaky[id] = i%3 == 0
	}
	var mu sync.Mutex
	order := map[string][]string{}
	runs := map[string]int{}
	c, err := NewConsumer(ConsumerConfig{
		Member:  MemberConfig{Coordinator: coord, StreamPrefix: prefix, Group: "g", MemberID: "h"},
		Redis:   rdb,
		Workers: 2, BatchSize: 10,
		ClaimMinIdle: 30 * time.Millisecond, ClaimInterval: 10 * time.Millisecond, MaxDeliveries: 3,
		HoldFailedKeys: true, HeldMax: 3,
		DeadLetterStream: prefix + "-dead",
		Handler: func(_ context.Context, m Message) error {
			mu.Lock()
			defer mu.Unlock()
			runs[m.ID]++
			switch {
			case m.ID == poison:
				return errors.New("poison")
			case flaky[m.ID] && runs[m.ID] <= 2:
				return errors.New("transient")
			}
			order[m.Key] = append(order[m.Key], m.ID)
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	var held sync.Map // "held", "spilled" → seen
	watch, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	go func() {
		for watch.Err() == nil {
			for _, h := range c.Held() {
				held.Store("held", true)
				if h.Spilled > 0 {
					held.Store("spilled", true)
				}
			}
			time.Sleep(time.Millisecond)
		}
	}()
	runConsumer(t, c)
	eventually.True(t, "every entry handled or dead-lettered", func() bool {
		mu.Lock()
		defer mu.Unlock()
		total := 0
		for _, ids := range order {
			total += len(ids)
		}
		return total == n-1 && rdb.XLen(ctx, prefix+"-dead").Val() == 1
	})
	stopWatch()
	mu.Lock()
	defer mu.Unlock()
	for k, want := range byKey {
		if k == "k2" {
			want = slices.DeleteFunc(slices.Clone(want), func(id string) bool { return id == poison })
		}
		if fmt.Sprint(order[k]) != fmt.Sprint(want) {
			t.Errorf("key %s succeeded in order %v, want %v", k, order[k], want)
		}
	}
	for _, id := range byKey["k1"] {
		if want := map[bool]int{true: 3, false: 1}[flaky[id]]; runs[id] != want {
			t.Errorf("k1 entry %s ran %d times, want %d", id, runs[id], want)
		}
	}
	if _, ok := held.Load("held"); !ok {
		t.Error("Held never showed a held key")
	}
	if _, ok := held.Load("spilled"); !ok {
		t.Error("no held entry was spilled")
	}
	if got := c.Held(); len(got) != 0 {
		t.Errorf("keys still held at the end: %+v", got)
	}
	if n := rdb.Exists(ctx, "{"+key+"}:held:g:h").Val(); n != 0 {
		t.Error("the spill list is not empty at the end")
	}
}
