package client

// Held keys (ConsumerConfig.HoldFailedKeys): once an entry of a key fails,
// the later entries of that key on the shard wait behind it, in stream
// order, until it succeeds or is dead-lettered; the other keys flow on.

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"
)

// HeldKey is a key of a shard whose entries wait behind a failed one.
type HeldKey struct {
	Shard int
	Key   string
	// Head is the failed entry: pending in Redis, run again once idle for
	// ClaimMinIdle; the key is released when a run of it succeeds or it is
	// dead-lettered.
	Head string
	// Since is when the key was held; Held counts the entries waiting
	// behind the head, Spilled those of them kept in Redis.
	Since   time.Time
	Held    int
	Spilled int
}

// hold is one held key of a shard.
type hold struct {
	head    string
	since   time.Time
	queue   []Message // the next entries, in memory, in stream order
	spilled int       // the entries after queue, in the shard's spill list
}

// Held returns the keys held on the shards the consumer reads, by shard
// and key.
func (c *Consumer) Held() []HeldKey {
	var out []HeldKey
	for _, r := range c.readerList() {
		r.mu.Lock()
		for key, h := range r.holds {
			out = append(out, HeldKey{Shard: r.shard, Key: key, Head: h.head, Since: h.since, Held: len(h.queue) + h.spilled, Spilled: h.spilled})
		}
		r.mu.Unlock()
	}
	slices.SortFunc(out, func(a, b HeldKey) int {
		if a.Shard != b.Shard {
			return a.Shard - b.Shard
		}
		return strings.Compare(a.Key, b.Key)
	})
	return out
}

// spillKey is the Redis list of the shard's held entries beyond HeldMax:
// "key\x1fid\x1fdeliveries" items in the order they were held, in the hash
// slot of the shard's stream.
func (r *shardReader) spillKey() string {
	return "{" + r.key + "}:held:" + r.c.cfg.Member.Group + ":" + r.c.member.ID()
}

// holdsKeys reports whether the consumer holds failed keys (HoldFailedKeys,
// not Ordered).
func (c *Consumer) holdsKeys() bool { return c.cfg.HoldFailedKeys && !c.cfg.Ordered }

// holdBehind keeps msg back when its key is held and msg is not the held
// head, in memory or, beyond HeldMax held entries of the shard (or once
// the key spilled), in the spill list; it reports whether it did.
func (r *shardReader) holdBehind(msg Message) bool {
	r.mu.Lock()
	h := r.holds[msg.Key]
	if h == nil || h.head == msg.ID {
		r.mu.Unlock()
		return false
	}
	if h.spilled == 0 && r.heldMem < r.c.cfg.HeldMax {
		h.queue = append(h.queue, msg)
		r.heldMem++
		r.mu.Unlock()
		return true
	}
	h.spilled++
	r.spilledAll++
	r.mu.Unlock()
	ctx, cancel := context.WithTimeout(r.c.runCtx, redisTimeout)
	defer cancel()
	item := msg.Key + "\x1f" + msg.ID + "\x1f" + strconv.FormatInt(msg.Deliveries, 10)
	if err := r.c.cfg.Redis.RPush(ctx, r.spillKey(), item).Err(); err != nil {
		// Not kept: it stays pending and is claimed again once idle,
		// then held again.
		r.mu.Lock()
		h.spilled--
		r.spilledAll--
		r.mu.Unlock()
		r.c.member.log.Warn("a held entry could not be spilled; it is delivered again later", "stream", msg.Stream, "id", msg.ID, "err", err)
	}
	return true
}

// holdKey holds msg's key behind msg, which failed and stays pending.
func (r *shardReader) holdKey(msg Message) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.holds == nil {
		r.holds = map[string]*hold{}
	}
	if h := r.holds[msg.Key]; h != nil {
		h.head = msg.ID
		return
	}
	r.holds[msg.Key] = &hold{head: msg.ID, since: time.Now()}
}

// release ends the hold of msg's key when msg is its head (it succeeded
// or was dead-lettered) and returns the entries that waited behind it, in
// stream order (those in memory, then those read back from the spill
// list), as a batch of the shard's; nil when msg heads no hold or the
// shard stopped meanwhile. The entries count as the shard's (held, never
// claimed by its scans) from the hold through to the batch.
func (r *shardReader) release(msg Message) *batch {
	r.mu.Lock()
	h := r.holds[msg.Key]
	if h == nil || h.head != msg.ID {
		r.mu.Unlock()
		return nil
	}
	spilled := h.spilled
	r.mu.Unlock()
	var back []Message
	var items []string
	if spilled > 0 {
		back, items = r.readSpilled(msg.Key)
	}
	r.mu.Lock()
	if r.holds[msg.Key] != h { // the shard stopped: dropHolds took them
		r.mu.Unlock()
		return nil
	}
	delete(r.holds, msg.Key)
	r.heldMem -= len(h.queue)
	r.spilledAll -= h.spilled
	b := r.adoptLocked(append(h.queue, back...))
	r.mu.Unlock()
	if len(items) > 0 {
		ctx, cancel := context.WithTimeout(r.c.runCtx, redisTimeout)
		defer cancel()
		pipe := r.c.cfg.Redis.Pipeline()
		for _, it := range items {
			pipe.LRem(ctx, r.spillKey(), 1, it)
		}
		_, _ = pipe.Exec(ctx) // an item left behind names an entry no longer held: ignored, deleted with the list
	}
	return b
}

// readSpilled returns key's entries of the spill list, read back from the
// stream in the order they were spilled, and their list items. One that
// cannot be read back stays pending: it is claimed again once idle.
func (r *shardReader) readSpilled(key string) ([]Message, []string) {
	ctx, cancel := context.WithTimeout(r.c.runCtx, redisTimeout)
	defer cancel()
	all, err := r.c.cfg.Redis.LRange(ctx, r.spillKey(), 0, -1).Result()
	if err != nil {
		r.c.member.log.Warn("held entries could not be read back; they are delivered again later", "shard", r.shard, "key", key, "err", err)
		return nil, nil
	}
	var out []Message
	var items []string
	for _, it := range all {
		k, id, deliveries, ok := parseSpilled(it)
		if !ok || k != key {
			continue
		}
		items = append(items, it)
		entries, err := r.c.cfg.Redis.XRange(ctx, r.key, id, id).Result()
		if err != nil || len(entries) == 0 {
			continue
		}
		out = append(out, Message{Shard: r.shard, Stream: r.key, ID: id, Values: entries[0].Values, Key: key, Deliveries: deliveries,
			Fence: Fence{Shard: r.shard, Token: r.token, From: r.from}})
	}
	return out, items
}

// parseSpilled reads a spill list item.
func parseSpilled(item string) (key, id string, deliveries int64, ok bool) {
	parts := strings.Split(item, "\x1f")
	if len(parts) != 3 {
		return "", "", 0, false
	}
	n, err := strconv.ParseInt(parts[2], 10, 64)
	return parts[0], parts[1], n, err == nil
}

// spilledIDs returns the ids in the shard's spill list (nil when nothing
// spilled): the reclaim scans leave them alone.
func (r *shardReader) spilledIDs(ctx context.Context) map[string]bool {
	r.mu.Lock()
	n := r.spilledAll
	r.mu.Unlock()
	if n == 0 {
		return nil
	}
	items, err := r.c.cfg.Redis.LRange(ctx, r.spillKey(), 0, -1).Result()
	if err != nil {
		return nil
	}
	out := make(map[string]bool, len(items))
	for _, it := range items {
		if _, id, _, ok := parseSpilled(it); ok {
			out[id] = true
		}
	}
	return out
}

// dropHolds ends every hold of a stopped shard: the held entries join
// those whose delivery counters are set back (they stay pending; the next
// owner claims them, head first, and holds the key again if it fails), and
// the spill list is emptied. The caller holds r.mu.
func (r *shardReader) dropHolds() {
	if len(r.holds) == 0 {
		return
	}
	for _, h := range r.holds {
		r.unrun = append(r.unrun, h.queue...)
	}
	spilled := r.spilledAll
	r.holds, r.heldMem, r.spilledAll = nil, 0, 0
	if spilled == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(r.c.runCtx, redisTimeout)
	defer cancel()
	items, err := r.c.cfg.Redis.LRange(ctx, r.spillKey(), 0, -1).Result()
	if err == nil {
		err = r.c.cfg.Redis.Del(ctx, r.spillKey()).Err()
	}
	if err != nil {
		r.abandon("held entries' delivery counters not set back", spilled)
		return
	}
	for _, it := range items {
		if k, id, deliveries, ok := parseSpilled(it); ok {
			r.unrun = append(r.unrun, Message{Shard: r.shard, Stream: r.key, ID: id, Key: k, Deliveries: deliveries})
		}
	}
}
