package storetest

import (
	"sync"
	"testing"

	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/persistence"
)

// ReleaseAtOnce releases keys as self, each from a goroutine of its own
// (as a coordinator handing its groups over does), and returns their
// ownership records afterwards.
func ReleaseAtOnce(t *testing.T, s persistence.Cluster, keys []group.Key, self persistence.Peer) []persistence.Owner {
	t.Helper()
	var wg sync.WaitGroup
	for _, k := range keys {
		wg.Go(func() {
			if err := s.Release(t.Context(), k, self); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	owners, err := s.Owners(t.Context(), keys)
	if err != nil {
		t.Fatal(err)
	}
	return owners
}
