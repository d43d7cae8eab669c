package redis

import (
	"context"
	"sync"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/testredis"
	"github.com/redis-stream-coordinator/coordinator/persistence"
	"github.com/redis-stream-coordinator/coordinator/persistence/storetest"
)

// loneCounter counts the commands sent alone and those sent in
// pipelines, by name.
type loneCounter struct {
	mu              sync.Mutex
	alone, pipeline map[string]int
}

func (c *loneCounter) DialHook(next goredis.DialHook) goredis.DialHook { return next }
func (c *loneCounter) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		c.mu.Lock()
		c.alone[cmd.Name()]++
		c.mu.Unlock()
		return next(ctx, cmd)
	}
}
func (c *loneCounter) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []goredis.Cmder) error {
		c.mu.Lock()
		for _, cmd := range cmds {
			c.pipeline[cmd.Name()]++
		}
		c.mu.Unlock()
		return next(ctx, cmds)
	}
}

// Acquire's registry read and ownership script and Release's script go
// through the store's pipeliner, so that the acquires and releases of many
// groups at once (a handover) share round trips: none is sent alone.
func TestHandoverCallsArePipelined(t *testing.T) {
	c := goredis.NewClient(&goredis.Options{Addr: testredis.Shared(t).Options().Addr})
	t.Cleanup(func() { _ = c.Close() })
	counter := &loneCounter{alone: map[string]int{}, pipeline: map[string]int{}}
	s := newStore(t, c)
	ctx := t.Context()
	self := persistence.Coordinator{ID: "c1", Token: "t1", URL: "http://c1"}
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
	c.AddHook(counter)
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
	counter.mu.Lock()
	defer counter.mu.Unlock()
	if counter.alone["evalsha"]+counter.alone["eval"] != 0 || counter.pipeline["evalsha"] < 3*len(keys) {
		t.Errorf("scripts sent alone %v, in pipelines %v; want all %d (registry read, acquire, release per group) in pipelines", counter.alone, counter.pipeline, 3*len(keys))
	}
}
