package sink

import (
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/redis-stream-coordinator/coordinator/client"
)

// ID is a stream entry id: milliseconds and sequence number.
type ID struct{ Ms, Seq uint64 }

// ParseID parses "ms-seq" (or "ms", sequence 0).
func ParseID(s string) (ID, error) {
	ms, seq, found := strings.Cut(s, "-")
	var id ID
	var err error
	if id.Ms, err = strconv.ParseUint(ms, 10, 64); err != nil {
		return ID{}, fmt.Errorf("sink: entry id %q: %w", s, err)
	}
	if found {
		if id.Seq, err = strconv.ParseUint(seq, 10, 64); err != nil {
			return ID{}, fmt.Errorf("sink: entry id %q: %w", s, err)
		}
	}
	return id, nil
}

// String formats the id as Redis does.
func (id ID) String() string {
	return strconv.FormatUint(id.Ms, 10) + "-" + strconv.FormatUint(id.Seq, 10)
}

// Compare returns -1, 0 or +1 as id is before, equal to or after o.
func (id ID) Compare(o ID) int {
	switch {
	case id.Ms != o.Ms:
		return cmpUint(id.Ms, o.Ms)
	default:
		return cmpUint(id.Seq, o.Seq)
	}
}

func cmpUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// ErrNotOrdered is returned for a message of a consumer that is not
// Ordered, or that read its shard without a fencing token (a coordinator
// that sends none). It wraps client.ErrFenced: the entry can be neither
// applied under a fence nor dead-lettered, so the consumer stops handling
// the shard.
var ErrNotOrdered = fmt.Errorf("%w: sink: the message has no full fence: the consumer must be Ordered (client.ConsumerConfig.Ordered) and its coordinator send fencing tokens", client.ErrFenced)

// Check returns ErrNotOrdered unless msg carries a token and its grant's
// starting position.
func Check(msg *client.Message) error {
	if msg.Fence.Token <= 0 || msg.Fence.From == "" {
		return ErrNotOrdered
	}
	return nil
}

// Refused returns the error of a write refused by the fence: it wraps
// client.ErrFenced.
func Refused(msg *client.Message, fence int64) error {
	return fmt.Errorf("%w (shard %d, token %d, fence %d, entry %s)", client.ErrFenced, msg.Fence.Shard, msg.Fence.Token, fence, msg.ID)
}

// Outcome is what a sink's Apply did with an entry.
type Outcome int

const (
	// OutcomeRefused: nothing was applied: the fence holds a higher token
	// (the error wraps client.ErrFenced), or the write failed.
	OutcomeRefused Outcome = iota
	// OutcomeApplied: the entry's writes ran and the sink's position moved
	// under the fence.
	OutcomeApplied
	// OutcomeSkipped: the entry was applied already; nothing ran again.
	OutcomeSkipped
)

// Stats counts a sink's outcomes: entries applied, entries skipped as
// applied already, and writes refused by the fence (zombie writes).
type Stats struct {
	Applied, Skipped, Refused int64
}

// Counters are a sink's counters, safe for concurrent use.
type Counters struct{ applied, skipped, refused atomic.Int64 }

// Applied counts an entry applied.
func (c *Counters) Applied() { c.applied.Add(1) }

// Skipped counts an entry applied already.
func (c *Counters) Skipped() { c.skipped.Add(1) }

// Refused counts a write refused by the fence.
func (c *Counters) Refused() { c.refused.Add(1) }

// Stats returns the counts so far.
func (c *Counters) Stats() Stats {
	return Stats{Applied: c.applied.Load(), Skipped: c.skipped.Load(), Refused: c.refused.Load()}
}
