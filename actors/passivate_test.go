package actors

import (
	"fmt"
	"sync"
	"testing"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/eventually"
)

func registered(c *System) int {
	n := 0
	c.registry.Range(func(any, any) bool { n++; return true })
	return n
}

// Requests for groups that do not exist leave no actor behind.
func TestUnknownGroupsDoNotKeepActors(t *testing.T) {
	c := start(t, Options{Store: newTestStore()})
	for i := range 50 {
		key := group.Key{StreamPrefix: "nowhere", ConsumerGroup: fmt.Sprintf("g%d", i)}
		wantStatus(t, heartbeat(t, c, key, join("m")), contract.StatusUnknownMemberID)
		_, err := c.Group(testCtx(t), key)
		wantCode(t, err, contract.CodeGroupNotFound)
	}
	eventually.True(t, "every actor of an unknown group passivated", func() bool { return registered(c) == 0 })

	// A deleted group's actor goes too; the group can be created again.
	createGroup(t, c, orders)
	if _, err := c.DeleteGroup(testCtx(t), orders, contract.DeleteRequest{RequestedBy: "t", Reason: "r"}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	eventually.True(t, "the deleted group's actor passivated", func() bool { return registered(c) == 0 })
	createGroup(t, c, orders)
	wantStatus(t, heartbeat(t, c, orders, join("m")), contract.StatusOK)
}

// Requests racing a passivation are all answered, and a group created while
// its actor retires is kept: the next actor loads it from the store.
func TestPassivationRacesAnswerEveryRequest(t *testing.T) {
	c := start(t, Options{Store: newTestStore()})
	for round := range 20 {
		key := group.Key{StreamPrefix: "race", ConsumerGroup: fmt.Sprintf("g%d", round)}
		var wg sync.WaitGroup
		errs := make(chan error, 64)
		for i := range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if i == 8 {
					if _, err := c.CreateGroup(testCtx(t), key, contract.CreateRequest{RequestedBy: "t"}, false); err != nil {
						errs <- fmt.Errorf("create: %w", err)
					}
					return
				}
				resp, err := c.Heartbeat(testCtx(t), key, join(fmt.Sprintf("m%d", i)))
				switch {
				case err != nil:
					errs <- fmt.Errorf("heartbeat: %w", err)
				case resp.Status != contract.StatusOK && resp.Status != contract.StatusUnknownMemberID:
					errs <- fmt.Errorf("heartbeat status %s", resp.Status)
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("round %d: %v", round, err)
		}
		if _, err := c.Group(testCtx(t), key); err != nil {
			t.Fatalf("round %d: the created group is gone: %v", round, err)
		}
	}
}
