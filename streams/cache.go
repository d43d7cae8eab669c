package streams

import (
	"context"
	"sync"
	"time"
)

// Cache is a stale-while-refresh cache (the docs/protocol.md §2.7 offset cache, keyed by
// stream prefix and group). An entry is stored with a version (the group's
// shard count): a Get with another version is a miss. Every caller gets the
// same stored value, so values must be treated as immutable. It is safe for
// concurrent use.
type Cache[K comparable, V any] struct {
	ttl time.Duration
	now func() time.Time

	mu      sync.Mutex
	entries map[K]*cacheEntry[V]
}

type cacheEntry[V any] struct {
	// loading is a one-slot semaphore serialising the synchronous loads of
	// the key (a channel, so a waiter can give up when its context ends).
	loading chan struct{}

	// The fields below are guarded by Cache.mu.
	stored     bool
	version    int
	value      V
	expiresAt  time.Time
	refreshing bool
}

// NewCache returns a Cache whose values live for ttl, measured with now. A
// ttl ≤ 0 disables caching: every Get loads.
func NewCache[K comparable, V any](ttl time.Duration, now func() time.Time) *Cache[K, V] {
	return &Cache[K, V]{ttl: ttl, now: now, entries: map[K]*cacheEntry[V]{}}
}

// Get returns the value of key at version:
//
//   - a fresh stored value as is;
//   - an expired stored value as is, after starting a background refresh
//     unless one is already running for the key (at most one at a time); the
//     refresh runs load with ctx's values but without its cancellation, and
//     on failure leaves the stale value for the next Get to retry;
//   - otherwise (nothing stored, or stored with another version) the result
//     of load(ctx), stored on success. Concurrent misses of one key wait
//     (until ctx ends) for a single load.
func (c *Cache[K, V]) Get(ctx context.Context, key K, version int, load func(context.Context) (V, error)) (V, error) {
	if c.ttl <= 0 {
		return load(ctx)
	}
	entry := c.entry(key)
	if value, ok := c.cached(ctx, entry, version, load); ok {
		return value, nil
	}
	select {
	case entry.loading <- struct{}{}:
		defer func() { <-entry.loading }()
	case <-ctx.Done():
		var zero V
		return zero, ctx.Err()
	}
	if value, ok := c.cached(ctx, entry, version, load); ok {
		return value, nil
	}
	value, err := load(ctx)
	if err != nil {
		return value, err
	}
	c.mu.Lock()
	c.set(entry, version, value)
	c.mu.Unlock()
	return value, nil
}

// Update stores value() for key at version, fresh for the ttl, as a load
// would, but only when key already holds a value (a Get loaded one): a
// background refresher keeps the keys that readers use fresh without
// filling the cache with keys nobody reads, or building their values.
// value is called under the cache's lock, only when storing. Update
// reports whether it stored; with caching disabled it stores nothing.
func (c *Cache[K, V]) Update(key K, version int, value func() V) bool {
	if c.ttl <= 0 {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	entry, ok := c.entries[key]
	if !ok || !entry.stored {
		return false
	}
	c.set(entry, version, value())
	return true
}

// Forget drops the entries whose value expired before before, and those
// that never stored one, unless a load or refresh of theirs is under way:
// keys nobody reads any more (a deleted group) cost no memory for good. A
// Get racing with Forget at worst loads its key once more.
func (c *Cache[K, V]) Forget(before time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for key, entry := range c.entries {
		if entry.refreshing || len(entry.loading) > 0 {
			continue
		}
		if !entry.stored || entry.expiresAt.Before(before) {
			delete(c.entries, key)
		}
	}
}

func (c *Cache[K, V]) entry(key K) *cacheEntry[V] {
	c.mu.Lock()
	defer c.mu.Unlock()
	entry, ok := c.entries[key]
	if !ok {
		entry = &cacheEntry[V]{loading: make(chan struct{}, 1)}
		c.entries[key] = entry
	}
	return entry
}

// cached returns the stored value when it has version, starting a
// background refresh when it has expired and none is running.
func (c *Cache[K, V]) cached(ctx context.Context, entry *cacheEntry[V], version int, load func(context.Context) (V, error)) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !entry.stored || entry.version != version {
		var zero V
		return zero, false
	}
	if !c.now().Before(entry.expiresAt) && !entry.refreshing {
		entry.refreshing = true
		go c.refresh(context.WithoutCancel(ctx), entry, version, load)
	}
	return entry.value, true
}

// refresh reloads an expired entry; a result is dropped if the entry has
// meanwhile been stored with another version.
func (c *Cache[K, V]) refresh(ctx context.Context, entry *cacheEntry[V], version int, load func(context.Context) (V, error)) {
	value, err := load(ctx)
	c.mu.Lock()
	defer c.mu.Unlock()
	entry.refreshing = false
	if err == nil && entry.version == version {
		c.set(entry, version, value)
	}
}

// set stores value at version, fresh for the ttl; c.mu must be held.
func (c *Cache[K, V]) set(entry *cacheEntry[V], version int, value V) {
	entry.stored, entry.version, entry.value = true, version, value
	entry.expiresAt = c.now().Add(c.ttl)
}
