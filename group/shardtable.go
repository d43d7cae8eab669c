package group

import "iter"

// denseShards bounds the shard indexes a shardTable keeps in its slice:
// every index an assignment produces is far below it (MaxShardCount), so
// the map only ever holds what a corrupt stored record or a test could
// name, and such a record cannot make the table allocate without bound.
const denseShards = 1 << 17

// shardTable maps shard indexes to values (the zero V for none): a slice
// indexed by shard for 0 ≤ s < denseShards, a map beyond. It costs one V
// per shard up to the highest one set, against a map entry per shard, and
// copies with one slice copy.
type shardTable[V comparable] struct {
	dense  []V
	sparse map[int]V // shards outside [0, denseShards); nil when none
}

// get returns the value stored for s, the zero V for none.
func (t *shardTable[V]) get(s int) V {
	if s >= 0 && s < len(t.dense) {
		return t.dense[s]
	}
	var zero V
	if s >= 0 && s < denseShards {
		return zero
	}
	return t.sparse[s]
}

// set stores v for s; the zero V clears it.
func (t *shardTable[V]) set(s int, v V) {
	var zero V
	if s < 0 || s >= denseShards {
		if v == zero {
			delete(t.sparse, s)
			return
		}
		if t.sparse == nil {
			t.sparse = map[int]V{}
		}
		t.sparse[s] = v
		return
	}
	if s >= len(t.dense) {
		if v == zero {
			return
		}
		t.dense = append(t.dense, make([]V, s+1-len(t.dense))...)
	}
	t.dense[s] = v
}

// anyFrom reports whether some shard s ≥ n is set.
func (t *shardTable[V]) anyFrom(n int) bool {
	var zero V
	for s := max(n, 0); s < len(t.dense); s++ {
		if t.dense[s] != zero {
			return true
		}
	}
	for s := range t.sparse {
		if s >= n {
			return true
		}
	}
	return false
}

// all yields the shards that are set and their values: the dense ones in
// order, then the sparse ones in no particular order.
func (t *shardTable[V]) all() iter.Seq2[int, V] {
	return func(yield func(int, V) bool) {
		var zero V
		for s, v := range t.dense {
			if v != zero && !yield(s, v) {
				return
			}
		}
		for s, v := range t.sparse {
			if !yield(s, v) {
				return
			}
		}
	}
}

// holderTable lists the owners holding each shard. Nearly every shard has
// at most one holder (a second one exists only while the shard moves), so
// the first holder lives in a shardTable and the others in a map that is
// empty in a settled group.
type holderTable struct {
	first shardTable[string]
	more  map[int][]string // further holders of a shard whose first is set
}

// add records that id holds s.
func (h *holderTable) add(s int, id string) {
	if h.first.get(s) == "" {
		h.first.set(s, id)
		return
	}
	if h.more == nil {
		h.more = map[int][]string{}
	}
	h.more[s] = append(h.more[s], id)
}

// remove records that id no longer holds s.
func (h *holderTable) remove(s int, id string) {
	more := h.more[s]
	if h.first.get(s) == id {
		if len(more) == 0 {
			h.first.set(s, "")
			return
		}
		h.first.set(s, more[0])
		more = more[1:]
	} else {
		i := -1
		for j, x := range more {
			if x == id {
				i = j
				break
			}
		}
		if i < 0 {
			return
		}
		more = append(more[:i:i], more[i+1:]...)
	}
	if len(more) == 0 {
		delete(h.more, s)
	} else {
		h.more[s] = more
	}
}

// others counts the holders of s other than id.
func (h *holderTable) others(s int, id string) int {
	first := h.first.get(s)
	if first == "" {
		return 0
	}
	n := 0
	if first != id {
		n++
	}
	for _, x := range h.more[s] {
		if x != id {
			n++
		}
	}
	return n
}

// anyFrom reports whether some shard s ≥ n has a holder.
func (h *holderTable) anyFrom(n int) bool { return h.first.anyFrom(n) }
