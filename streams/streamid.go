package streams

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ErrInvalidID is matched by errors about a malformed stream entry id given
// by a caller (a cursor or a record id); the HTTP layer maps it to 400.
var ErrInvalidID = errors.New("invalid stream entry id")

// entryID is a parsed Redis Stream entry id "<ms>-<seq>".
type entryID struct {
	ms, seq uint64
}

// parseID parses "<ms>-<seq>" or "<ms>" (sequence 0), the forms Redis
// accepts as XRANGE bounds.
func parseID(s string) (entryID, error) {
	msPart, seqPart, hasSeq := strings.Cut(s, "-")
	ms, err := strconv.ParseUint(msPart, 10, 64)
	if err != nil {
		return entryID{}, fmt.Errorf("%w: %q", ErrInvalidID, s)
	}
	var seq uint64
	if hasSeq {
		if seq, err = strconv.ParseUint(seqPart, 10, 64); err != nil {
			return entryID{}, fmt.Errorf("%w: %q", ErrInvalidID, s)
		}
	}
	return entryID{ms: ms, seq: seq}, nil
}

// timestampMs is the id's millisecond part, MaxInt64 for the ids above it
// that Redis accepts (up to 2^64-1).
func (a entryID) timestampMs() int64 {
	if a.ms > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(a.ms)
}

func (a entryID) compare(b entryID) int {
	if c := cmp.Compare(a.ms, b.ms); c != 0 {
		return c
	}
	return cmp.Compare(a.seq, b.seq)
}
