package actors

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/faultstore"
	"github.com/redis-stream-coordinator/coordinator/persistence/memory"
)

// TestGroupCaps: creates beyond MaxGroupsPerPrefix or MaxGroups answer
// GROUP_LIMIT_REACHED, from the store's counts; a create of a stored group is refused as that, whatever the caps; a
// delete makes room again.
func TestGroupCaps(t *testing.T) {
	ctx := testCtx(t)
	c := start(t, Options{Store: newTestStore(), MaxGroups: 4, MaxGroupsPerPrefix: 2})
	for _, k := range []group.Key{{StreamPrefix: "a", ConsumerGroup: "g1"}, {StreamPrefix: "a", ConsumerGroup: "g2"}, {StreamPrefix: "b", ConsumerGroup: "g1"}} {
		createGroup(t, c, k)
	}
	create := func(k group.Key, streamLevel bool) error {
		_, err := c.CreateGroup(ctx, k, contract.CreateRequest{RequestedBy: "t"}, streamLevel)
		return err
	}
	err := create(group.Key{StreamPrefix: "a", ConsumerGroup: "g3"}, false)
	if want := "Stream prefix 'a' already has 2 groups (defaults.max-groups-per-stream)"; wantCode(t, err, contract.CodeGroupLimitReached).Message != want {
		t.Errorf("per-prefix refusal %q, want %q", err, want)
	}
	if err := create(group.Key{StreamPrefix: "b", ConsumerGroup: "g2"}, false); err != nil {
		t.Fatalf("second group of b: %v", err)
	}
	err = create(group.Key{StreamPrefix: "c"}, true)
	if want := "The coordinator already has 4 groups (defaults.max-groups)"; wantCode(t, err, contract.CodeGroupLimitReached).Message != want {
		t.Errorf("total refusal %q, want %q", err, want)
	}
	wantCode(t, create(group.Key{StreamPrefix: "a", ConsumerGroup: "g1"}, false), contract.CodeGroupAlreadyExists)

	if _, err := c.DeleteGroup(ctx, group.Key{StreamPrefix: "a", ConsumerGroup: "g1"}, contract.DeleteRequest{RequestedBy: "t", Reason: "t", Force: true}); err != nil {
		t.Fatal(err)
	}
	if err := create(group.Key{StreamPrefix: "a", ConsumerGroup: "g3"}, false); err != nil {
		t.Fatalf("create after a delete made room: %v", err)
	}
}

// slowCreates is a memory store whose inserts take a while, so that
// creates of many groups overlap (the test kit's fault-injecting store,
// internal/testkit/faultstore, delaying every Create).
func slowCreates() *faultstore.Store {
	s := faultstore.New(memory.New())
	s.Before(func(_ context.Context, op faultstore.Op) error {
		if op.Call == faultstore.CallCreate {
			time.Sleep(5 * time.Millisecond)
		}
		return nil
	})
	return s
}

// The caps hold under concurrent creates, in as many group actors: with
// the count and the insert two store calls, creates that all counted
// before any inserted would all pass; admission reserves a slot, so
// exactly the cap is created and every other create is refused.
func TestGroupCapsHoldUnderConcurrentCreates(t *testing.T) {
	for _, tc := range []struct {
		name      string
		o         Options
		keyOf     func(i int) group.Key
		wantCount int
	}{
		{"max-groups", Options{MaxGroups: 5}, func(i int) group.Key { return group.Key{StreamPrefix: fmt.Sprintf("p%d", i), ConsumerGroup: "g"} }, 5},
		{"max-groups-per-stream", Options{MaxGroupsPerPrefix: 3}, func(i int) group.Key { return group.Key{StreamPrefix: "p", ConsumerGroup: fmt.Sprintf("g%d", i)} }, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := slowCreates()
			o := tc.o
			o.Store = store
			c := start(t, o)
			const creates = 24
			var wg sync.WaitGroup
			var created, refused atomic.Int64
			for i := range creates {
				wg.Go(func() {
					_, err := c.CreateGroup(testCtx(t), tc.keyOf(i), contract.CreateRequest{RequestedBy: "t"}, false)
					switch de, ok := errors.AsType[*group.Error](err); {
					case err == nil:
						created.Add(1)
					case ok && de.Code == contract.CodeGroupLimitReached:
						refused.Add(1)
					default:
						t.Errorf("create %d: %v", i, err)
					}
				})
			}
			wg.Wait()
			all, _, err := store.Count(testCtx(t), "p")
			if err != nil {
				t.Fatal(err)
			}
			if created.Load() != int64(tc.wantCount) || refused.Load() != creates-int64(tc.wantCount) || all != tc.wantCount {
				t.Fatalf("%d created, %d refused, %d stored, want %d created and stored", created.Load(), refused.Load(), all, tc.wantCount)
			}
			if n := store.Calls(faultstore.CallCreate); n != tc.wantCount {
				t.Errorf("%d inserts, want %d: a refused create reached the store", n, tc.wantCount)
			}
		})
	}
}
