package membersim

import (
	"fmt"
	"slices"
	"sync"

	"github.com/redis-stream-coordinator/coordinator/group"
)

// Oracle tracks which members read each shard and records every overlap:
// a member starting to read a shard another member still reads. It
// assumes every member stays live (its lease never expires and it is never
// fenced while it reads): a coordinator may legitimately hand the shards
// of an expired member to another while the expired process still reads
// them. It is safe for concurrent use.
type Oracle struct {
	mu       sync.Mutex
	readers  map[int][]string // shard → members reading it
	overlaps []string
}

// NewOracle returns an oracle in which nobody reads anything.
func NewOracle() *Oracle { return &Oracle{readers: map[int][]string{}} }

func (o *Oracle) start(member string, shards group.ShardSet) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, s := range shards {
		if others := o.readers[s]; len(others) > 0 {
			o.overlaps = append(o.overlaps, fmt.Sprintf("%s started reading shard %d while %v read it", member, s, others))
		}
		o.readers[s] = append(o.readers[s], member)
	}
}

func (o *Oracle) stop(member string, shards group.ShardSet) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, s := range shards {
		o.readers[s] = slices.DeleteFunc(o.readers[s], func(m string) bool { return m == member })
		if len(o.readers[s]) == 0 {
			delete(o.readers, s)
		}
	}
}

// Overlaps returns every overlap seen so far, in order.
func (o *Oracle) Overlaps() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.overlaps)
}

// Readers returns, for every shard someone reads, the members reading it.
func (o *Oracle) Readers() map[int][]string {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := make(map[int][]string, len(o.readers))
	for s, ms := range o.readers {
		out[s] = slices.Clone(ms)
	}
	return out
}
