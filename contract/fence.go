package contract

import (
	"encoding/json"
	"strconv"
)

// ShardFence is the fencing token of one assigned shard in a heartbeat
// answer (docs/protocol.md §4.1, assignment.fencingTokens): the group epoch
// at which the shard was granted to the member. A shard's tokens grow
// strictly from one grant to the next, whoever holds it (another member, a
// process after a restart or a takeover, a grant after a live reset or a
// scale change); while one grant lasts its token stays the same. A sink
// that refuses writes carrying a token below the highest it has seen for
// the shard refuses every write of a previous grant (docs/client.md,
// "Fencing").
type ShardFence struct {
	ShardIndex   int   `json:"shardIndex"`
	FencingToken int64 `json:"fencingToken"`
}

// ShardFences is a heartbeat answer's fencing tokens, one per assigned
// shard, in ascending shard order; [] on the wire when empty.
type ShardFences []ShardFence

// Token returns the token of shard, or 0 when the list has none (an
// answer of a coordinator that sends no tokens).
func (f ShardFences) Token(shard int) int64 {
	for _, x := range f {
		if x.ShardIndex == shard {
			return x.FencingToken
		}
	}
	return 0
}

// MarshalJSON encodes the list as AppendJSON does.
func (f ShardFences) MarshalJSON() ([]byte, error) { return f.AppendJSON(nil), nil }

// AppendJSON appends [{"shardIndex":n,"fencingToken":t},…] ([] when empty).
func (f ShardFences) AppendJSON(b []byte) []byte {
	b = append(b, '[')
	for i, x := range f {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"shardIndex":`...)
		b = strconv.AppendInt(b, int64(x.ShardIndex), 10)
		b = append(b, `,"fencingToken":`...)
		b = strconv.AppendInt(b, x.FencingToken, 10)
		b = append(b, '}')
	}
	return append(b, ']')
}

// UnmarshalJSON decodes the list; [] and null (as an answer without it)
// are nil, as ShardSet's are.
func (f *ShardFences) UnmarshalJSON(data []byte) error {
	var raw []ShardFence
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	if len(raw) == 0 {
		raw = nil
	}
	*f = raw
	return nil
}
