package redis

import (
	"sync"
	"testing"
	"time"

	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/storetest"
	"github.com/redis-stream-coordinator/coordinator/persistence"
)

// Acquire's registry read and ownership script and Release's script go
// through the store's pipeliner, so that the acquires and releases of many
// groups at once (a handover) share round trips: none is sent alone.
func TestHandoverCallsArePipelined(t *testing.T) {
	c, counter := countedClient(t)
	s := newStore(t, c)
	ctx := t.Context()
	self := persistence.Peer{ID: "c1", Token: "t1", URL: "http://c1"}
	if err := s.Register(ctx, self, time.Minute); err != nil {
		t.Fatal(err)
	}
	keys := make([]group.Key, 40)
	for i := range keys {
		keys[i] = group.Key{StreamPrefix: "p", ConsumerGroup: "g" + string(rune('a'+i%26)) + string(rune('a'+i/26))}
		if _, err := s.Create(ctx, keys[i], persistence.Encode(storetest.Group(keys[i]))); err != nil {
			t.Fatal(err)
		}
	}
	counter.reset()
	var wg sync.WaitGroup
	for _, k := range keys {
		wg.Go(func() {
			if _, err := s.Acquire(ctx, k, self); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	for i, o := range storetest.ReleaseAtOnce(t, s, keys, self) {
		if o.Coordinator != "" || o.Epoch != 1 {
			t.Errorf("%s after acquire and release: %+v, want released at epoch 1", keys[i], o)
		}
	}
	if alone, piped := counter.sent(); alone["evalsha"]+alone["eval"] != 0 || piped["evalsha"] < 3*len(keys) {
		t.Errorf("scripts sent alone %v, in pipelines %v; want all %d (registry read, acquire, release per group) in pipelines", alone, piped, 3*len(keys))
	}
}
