package actors

import (
	"context"
	"fmt"
	"sync"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
)

// groupCaps admits creates under Options.MaxGroups and MaxGroupsPerPrefix
// (defaults.max-groups, max-groups-per-stream).
//
// A create is admitted where it is decided: in its group's actor, after
// its checks and right before the core's insert (groupActor.create), by
// System.reserveGroup. Admissions run one at a time in the process
// (admit): each adds the creates this process admitted whose insert has
// not ended (the reservations) to the store's counts (Store.Count: the
// stored groups, without reading them), refuses GROUP_LIMIT_REACHED when
// the sum reaches a cap, and else reserves a slot, released once the
// insert has ended, stored or not. Creates running at once in this
// process, in whatever group actors, so see each other and cannot pass a
// cap together. The reservations are read before the counts: an insert
// that ends in between is counted twice (stored and reserved), never
// missed, so the check errs towards refusing at the cap's edge, never
// past it.
//
// In a cluster the groups of a stream prefix are placed on one
// coordinator, which serves all its creates, so the per-prefix cap holds
// there too; the total cap sees another coordinator's creates once they
// are stored, so creates running at once on several coordinators may pass
// it by the creates the others have in flight.
type groupCaps struct {
	// admit holds one token: the admissions' mutex, taken with a deadline.
	admit chan struct{}

	mu       sync.Mutex
	all      int            // reservations
	byPrefix map[string]int // reservations by stream prefix
}

func newGroupCaps() groupCaps {
	return groupCaps{admit: make(chan struct{}, 1), byPrefix: map[string]int{}}
}

// reserveGroup admits a create of key under the group caps (see
// groupCaps) and returns the release of its slot, to be called once its
// insert has ended; without caps it admits every create. It refuses with
// GROUP_LIMIT_REACHED, or fails when the counts cannot be read, or when
// the admissions before it keep it waiting longer than StoreTimeout.
func (c *System) reserveGroup(key group.Key) (release func(), err error) {
	maxAll, maxPrefix := c.opts.MaxGroups, c.opts.MaxGroupsPerPrefix
	if maxAll <= 0 && maxPrefix <= 0 {
		return func() {}, nil
	}
	caps, prefix := &c.caps, key.StreamPrefix
	wait, cancel := context.WithTimeout(context.Background(), c.opts.StoreTimeout)
	defer cancel()
	select {
	case caps.admit <- struct{}{}:
	case <-wait.Done():
		return nil, fmt.Errorf("admit the create of group %s: %w", key, wait.Err())
	}
	defer func() { <-caps.admit }()

	caps.mu.Lock()
	all, inPrefix := caps.all, caps.byPrefix[prefix]
	caps.mu.Unlock()
	ctx, cancelCount := context.WithTimeout(context.Background(), c.opts.StoreTimeout)
	defer cancelCount()
	storedAll, storedInPrefix, err := c.opts.Store.Count(ctx, prefix)
	if err != nil {
		return nil, fmt.Errorf("count groups: %w", err)
	}
	all, inPrefix = all+storedAll, inPrefix+storedInPrefix
	switch {
	case maxAll > 0 && all >= maxAll:
		return nil, group.Errorf(contract.CodeGroupLimitReached, "The coordinator already has %d groups (defaults.max-groups)", all)
	case maxPrefix > 0 && inPrefix >= maxPrefix:
		return nil, group.Errorf(contract.CodeGroupLimitReached, "Stream prefix '%s' already has %d groups (defaults.max-groups-per-stream)", prefix, inPrefix)
	}

	caps.mu.Lock()
	caps.all++
	caps.byPrefix[prefix]++
	caps.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			caps.mu.Lock()
			defer caps.mu.Unlock()
			caps.all--
			if caps.byPrefix[prefix]--; caps.byPrefix[prefix] == 0 {
				delete(caps.byPrefix, prefix)
			}
		})
	}, nil
}
