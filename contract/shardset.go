package contract

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
)

// ShardSet is a sorted set of shard indexes without duplicates.
//
// Contract: a ShardSet is immutable once built. Every operation returns a new
// slice (or one of its operands unchanged), so sets may be shared between the
// committed and the working copy of a group without copying.
// On the wire a set is an ascending array of {"shardIndex": n} objects.
type ShardSet []int

// NewShardSet builds a set from indexes in any order, dropping duplicates.
func NewShardSet(indexes ...int) ShardSet {
	if len(indexes) == 0 {
		return nil
	}
	if len(indexes) == 1 {
		if one, ok := single(indexes[0]); ok {
			return one
		}
	}
	s := slices.Clone(indexes)
	slices.Sort(s)
	return ShardSet(slices.Compact(s))
}

// singletons backs every one-shard set of a shard below its length, so the
// many members that own a single shard share its storage (sets are
// immutable, and a singleton's capacity is 1, so append copies).
var singletons = func() []int {
	s := make([]int, 4096)
	for i := range s {
		s[i] = i
	}
	return s
}()

// single returns the shared set {shard}, or false when it has none.
func single(shard int) (ShardSet, bool) {
	if shard < 0 || shard >= len(singletons) {
		return nil, false
	}
	return singletons[shard : shard+1 : shard+1], true
}

// Range returns the set {from, …, to-1}.
func Range(from, to int) ShardSet {
	if to <= from {
		return nil
	}
	s := make(ShardSet, 0, to-from)
	for i := from; i < to; i++ {
		s = append(s, i)
	}
	return s
}

// Contains reports whether shard is in the set.
func (s ShardSet) Contains(shard int) bool {
	_, ok := slices.BinarySearch(s, shard)
	return ok
}

// Equal reports whether both sets hold the same shards.
func (s ShardSet) Equal(o ShardSet) bool { return slices.Equal(s, o) }

// SubsetOf reports whether every shard of s is in o.
func (s ShardSet) SubsetOf(o ShardSet) bool {
	j := 0
	for _, x := range s {
		for j < len(o) && o[j] < x {
			j++
		}
		if j == len(o) || o[j] != x {
			return false
		}
	}
	return true
}

// Union returns s ∪ o.
func (s ShardSet) Union(o ShardSet) ShardSet {
	if len(o) == 0 {
		return s
	}
	if len(s) == 0 {
		return o
	}
	if slices.Equal(s, o) { // a steady member holds what it was granted
		return s
	}
	out := make(ShardSet, 0, len(s)+len(o))
	i, j := 0, 0
	for i < len(s) && j < len(o) {
		switch {
		case s[i] < o[j]:
			out = append(out, s[i])
			i++
		case s[i] > o[j]:
			out = append(out, o[j])
			j++
		default:
			out = append(out, s[i])
			i++
			j++
		}
	}
	out = append(out, s[i:]...)
	return append(out, o[j:]...)
}

// Intersect returns s ∩ o.
func (s ShardSet) Intersect(o ShardSet) ShardSet {
	var out ShardSet
	i, j := 0, 0
	for i < len(s) && j < len(o) {
		switch {
		case s[i] < o[j]:
			i++
		case s[i] > o[j]:
			j++
		default:
			out = append(out, s[i])
			i++
			j++
		}
	}
	return out
}

// Minus returns s − o.
func (s ShardSet) Minus(o ShardSet) ShardSet {
	if len(o) == 0 || len(s) == 0 {
		return s
	}
	var out ShardSet
	j := 0
	for _, x := range s {
		for j < len(o) && o[j] < x {
			j++
		}
		if j < len(o) && o[j] == x {
			continue
		}
		out = append(out, x)
	}
	return out
}

// Below returns the shards of s smaller than n.
func (s ShardSet) Below(n int) ShardSet {
	i, _ := slices.BinarySearch(s, n)
	if i == len(s) {
		return s
	}
	return s[:i:i]
}

// shardJSON is the wire form of one shard.
type shardJSON struct {
	ShardIndex *int `json:"shardIndex"`
}

// MarshalJSON encodes the set as [{"shardIndex":n},…]; an empty set is [].
func (s ShardSet) MarshalJSON() ([]byte, error) {
	return s.AppendJSON(make([]byte, 0, 2+len(s)*16)), nil
}

// AppendJSON appends the set's JSON (as MarshalJSON encodes it) to b.
func (s ShardSet) AppendJSON(b []byte) []byte {
	b = append(b, '[')
	for i, x := range s {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"shardIndex":`...)
		b = strconv.AppendInt(b, int64(x), 10)
		b = append(b, '}')
	}
	return append(b, ']')
}

// UnmarshalJSON decodes [{"shardIndex":n},…] (extra keys ignored); null is empty.
func (s *ShardSet) UnmarshalJSON(data []byte) error {
	idx, ok := scanShards(data)
	if !ok {
		var raw []shardJSON
		if err := json.Unmarshal(data, &raw); err != nil {
			return err
		}
		idx = make([]int, 0, len(raw))
		for _, r := range raw {
			if r.ShardIndex == nil {
				return fmt.Errorf("shard: shardIndex must not be null")
			}
			idx = append(idx, *r.ShardIndex)
		}
	}
	if len(idx) == 0 {
		*s = nil
		return nil
	}
	if len(idx) == 1 {
		if one, ok := single(idx[0]); ok {
			*s = one
			return nil
		}
	}
	slices.Sort(idx)
	*s = ShardSet(slices.Compact(idx))
	return nil
}

// scanShards is the fast path of UnmarshalJSON, without reflection: it
// reads null or an array of objects whose only key is "shardIndex" with an
// integer value, whitespace allowed. Anything else (other keys, escapes,
// fractions, huge numbers) reports !ok and goes through encoding/json.
func scanShards(data []byte) (idx []int, ok bool) {
	sc := scanner{b: data}
	if sc.literal("null") {
		return nil, sc.end()
	}
	if !sc.char('[') {
		return nil, false
	}
	if sc.char(']') {
		return nil, sc.end()
	}
	idx = make([]int, 0, bytes.Count(data, []byte{'{'}))
	for {
		if !sc.char('{') || !sc.literal(`"shardIndex"`) || !sc.char(':') {
			return nil, false
		}
		n, ok := sc.integer()
		if !ok || !sc.char('}') {
			return nil, false
		}
		idx = append(idx, n)
		if sc.char(']') {
			return idx, sc.end()
		}
		if !sc.char(',') {
			return nil, false
		}
	}
}

// scanner reads JSON tokens from b; every method skips the whitespace
// before its token.
type scanner struct {
	b []byte
	i int
}

func (sc *scanner) skipSpace() {
	for sc.i < len(sc.b) && (sc.b[sc.i] == ' ' || sc.b[sc.i] == '\t' || sc.b[sc.i] == '\n' || sc.b[sc.i] == '\r') {
		sc.i++
	}
}

// char consumes c.
func (sc *scanner) char(c byte) bool {
	sc.skipSpace()
	if sc.i < len(sc.b) && sc.b[sc.i] == c {
		sc.i++
		return true
	}
	return false
}

// literal consumes lit.
func (sc *scanner) literal(lit string) bool {
	sc.skipSpace()
	if bytes.HasPrefix(sc.b[sc.i:], []byte(lit)) {
		sc.i += len(lit)
		return true
	}
	return false
}

// integer consumes an optionally negative integer of at most 18 digits
// that is not followed by a fraction or an exponent.
func (sc *scanner) integer() (int, bool) {
	sc.skipSpace()
	neg := sc.i < len(sc.b) && sc.b[sc.i] == '-'
	if neg {
		sc.i++
	}
	start, n := sc.i, 0
	for sc.i < len(sc.b) && sc.b[sc.i] >= '0' && sc.b[sc.i] <= '9' {
		n = n*10 + int(sc.b[sc.i]-'0')
		sc.i++
	}
	digits := sc.i - start
	if digits == 0 || digits > 18 || (sc.i < len(sc.b) && (sc.b[sc.i] == '.' || sc.b[sc.i] == 'e' || sc.b[sc.i] == 'E')) {
		return 0, false
	}
	if neg {
		n = -n
	}
	return n, true
}

// end reports whether only whitespace is left.
func (sc *scanner) end() bool {
	sc.skipSpace()
	return sc.i == len(sc.b)
}

// Shard is one shard on the wire: {"shardIndex": n}.
type Shard struct {
	ShardIndex int `json:"shardIndex"`
}
