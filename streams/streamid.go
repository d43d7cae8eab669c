package streams

import (
	"cmp"
	"errors"
	"fmt"
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

func (a entryID) compare(b entryID) int {
	if c := cmp.Compare(a.ms, b.ms); c != 0 {
		return c
	}
	return cmp.Compare(a.seq, b.seq)
}
