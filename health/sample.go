package health

import (
	"cmp"
	"strconv"
	"strings"
	"time"
)

// ID is a stream entry id, <Ms>-<Seq>: the group's position on a shard.
type ID struct{ Ms, Seq uint64 }

// ParseID parses "<ms>-<seq>" (or "<ms>", sequence 0); ok is false for
// anything else.
func ParseID(s string) (id ID, ok bool) {
	ms, seq, found := strings.Cut(s, "-")
	var err error
	if id.Ms, err = strconv.ParseUint(ms, 10, 64); err != nil {
		return ID{}, false
	}
	if found {
		if id.Seq, err = strconv.ParseUint(seq, 10, 64); err != nil {
			return ID{}, false
		}
	}
	return id, true
}

// Compare returns -1, 0 or +1 as a is before, equal to or after b.
func (a ID) Compare(b ID) int { return cmp.Or(cmp.Compare(a.Ms, b.Ms), cmp.Compare(a.Seq, b.Seq)) }

// String formats the id as Redis does.
func (a ID) String() string {
	return strconv.FormatUint(a.Ms, 10) + "-" + strconv.FormatUint(a.Seq, 10)
}

// Sample is one reading of one shard.
type Sample struct {
	// Lag is the entries not yet delivered to the group (the whole stream
	// where the consumer group does not exist yet: its consumers will read
	// it from the start); LagKnown is false when Redis could not tell.
	Lag      int64
	LagKnown bool
	// Position is the group's last-delivered id; HasPosition is false
	// where the consumer group does not exist on the shard.
	Position    ID
	HasPosition bool
	// Produced counts the entries ever added to the stream (XINFO STREAM's
	// entries-added, or its length where the server does not report it):
	// it grows while entries arrive and falls only when the stream is
	// deleted and written again.
	Produced int64
	// Holders is the number of live members whose current assignment
	// holds the shard.
	Holders int
	// Paused is set while no member may be granted the shard: an operator
	// paused it, or a live offset reset holds it.
	Paused bool
	// ResetMark identifies the last live reset that set the shard's
	// position (0: none): a move back between two samples whose marks
	// differ is the reset's, not a rewind.
	ResetMark int64
}

// point is a Sample as a window keeps it, with its time.
type point struct {
	at        int64 // Unix nanoseconds
	lag       int64
	produced  int64
	resetMark int64
	pos       ID
	holders   int32
	flags     uint8
}

const (
	lagKnown uint8 = 1 << iota
	hasPosition
	paused
)

func pointOf(at time.Time, s Sample) point {
	p := point{at: at.UnixNano(), lag: s.Lag, produced: s.Produced, resetMark: s.ResetMark, pos: s.Position,
		holders: int32(min(max(s.Holders, 0), 1<<30))} // #nosec G115 -- clamped to int32's range
	if s.LagKnown {
		p.flags |= lagKnown
	}
	if s.HasPosition {
		p.flags |= hasPosition
	} else {
		p.pos = ID{}
	}
	if s.Paused {
		p.flags |= paused
	}
	return p
}

func (p point) lagKnown() bool    { return p.flags&lagKnown != 0 }
func (p point) hasPosition() bool { return p.flags&hasPosition != 0 }
func (p point) paused() bool      { return p.flags&paused != 0 }
func (p point) time() time.Time   { return time.Unix(0, p.at) }

// backlog reports whether entries wait at p: a known lag above 0.
func (p point) backlog() bool { return p.lagKnown() && p.lag > 0 }

// window is a shard's last samples, oldest first, at most size.
type window struct {
	points []point
}

// add appends p, dropping the oldest points beyond size. A point not
// after the last one is dropped: a window is in time order.
func (w *window) add(p point, size int) {
	if n := len(w.points); n > 0 && p.at <= w.points[n-1].at {
		return
	}
	if len(w.points) >= size {
		drop := len(w.points) - size + 1
		w.points = append(w.points[:0], w.points[drop:]...)
	}
	w.points = append(w.points, p)
}
