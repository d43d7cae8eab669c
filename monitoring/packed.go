package monitoring

import (
	"cmp"
	"strconv"
	"strings"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/streams"
)

// packed is an Observation as the offset cache keeps it: about 120 bytes a
// shard and no per-shard allocation, where an Observation takes about 350
// (a string and eight pointers a shard). The stream key and slot are
// derived from the prefix and the shard index, entry ids are kept as
// numbers, and the node fields, shared by many shards, are kept once per
// node. Unpacking gives back the Observation that was packed.
type packed struct {
	prefix string
	nodes  []packedNode
	shards []packedShard
	// odd holds the entry ids that do not read back from their numbers
	// (none from Redis, which writes ids as "<ms>-<seq>"), by shard
	// position; nil when there are none.
	odd map[int]*[idFields]*string
}

// packedNode is the node fields of the shards served by one node.
type packedNode struct {
	endpoint, id         *string
	rangeStart, rangeEnd *int
}

// The entry ids of a shard, by position in packedShard.ids.
const (
	firstID = iota
	lastID
	generatedID
	deliveredID
	idFields
)

// The bits of packedShard.known: which optional values are set.
const (
	knownPending = 1 << iota
	knownLag
	knownMemory
	knownProduced
	knownConsumed
	knownID // shifted by the id's position
)

type packedShard struct {
	shard                        int
	node                         int32
	known                        uint16
	length, pending, lag, memory int64
	ids                          [idFields]packedID
	produced, consumed           float64
}

// packedID is a stream entry id "<ms>-<seq>".
type packedID struct{ ms, seq uint64 }

// compare orders ids as Redis does: by ms, then seq.
func (a packedID) compare(b packedID) int {
	return cmp.Or(cmp.Compare(a.ms, b.ms), cmp.Compare(a.seq, b.seq))
}

// pack packs o, an observation of prefix's shards.
func pack(prefix string, o Observation) packed {
	p := packed{prefix: prefix, shards: make([]packedShard, len(o.Shards))}
	for i, s := range o.Shards {
		ps := &p.shards[i]
		ps.shard, ps.node, ps.length = s.Shard, p.nodeOf(s.ShardOffset), s.StreamLength
		ps.pending, ps.known = packInt(s.GroupPending, knownPending, ps.known)
		ps.lag, ps.known = packInt(s.Lag, knownLag, ps.known)
		ps.memory, ps.known = packInt(s.MemoryUsageBytes, knownMemory, ps.known)
		if s.Produced != nil {
			ps.produced, ps.known = *s.Produced, ps.known|knownProduced
		}
		if s.Consumed != nil {
			ps.consumed, ps.known = *s.Consumed, ps.known|knownConsumed
		}
		for f, id := range idsOf(&s.ShardOffset) {
			if *id == nil {
				continue
			}
			if ps.ids[f], ps.known = parsePacked(**id), ps.known|knownID<<f; !readsBack(ps.ids[f], **id) {
				if p.odd == nil {
					p.odd = map[int]*[idFields]*string{}
				}
				if p.odd[i] == nil {
					p.odd[i] = &[idFields]*string{}
				}
				p.odd[i][f] = *id
			}
		}
	}
	return p
}

// unpack returns the Observation that p was packed from.
func (p packed) unpack() Observation {
	o := Observation{Shards: make([]ObservedShard, len(p.shards))}
	for i, ps := range p.shards {
		key := contract.StreamKey(p.prefix, ps.shard)
		n := p.nodes[ps.node]
		s := &o.Shards[i]
		s.ShardOffset = streams.ShardOffset{Shard: ps.shard, StreamKey: key, RedisSlot: contract.Slot(key),
			RedisNodeEndpoint: n.endpoint, RedisNodeID: n.id, RedisSlotRangeStart: n.rangeStart, RedisSlotRangeEnd: n.rangeEnd,
			StreamLength: ps.length,
			GroupPending: unpackValue(ps.pending, ps.known&knownPending), Lag: unpackValue(ps.lag, ps.known&knownLag),
			MemoryUsageBytes: unpackValue(ps.memory, ps.known&knownMemory)}
		s.Produced, s.Consumed = unpackValue(ps.produced, ps.known&knownProduced), unpackValue(ps.consumed, ps.known&knownConsumed)
		for f, id := range idsOf(&s.ShardOffset) {
			switch {
			case ps.known&(knownID<<f) == 0:
			case p.odd[i] != nil && p.odd[i][f] != nil:
				*id = p.odd[i][f]
			default:
				v := formatPacked(ps.ids[f])
				*id = &v
			}
		}
	}
	return o
}

// idsOf returns the entry id fields of s by position.
func idsOf(s *streams.ShardOffset) [idFields]**string {
	return [idFields]**string{&s.FirstRecordID, &s.LastRecordID, &s.LastGeneratedID, &s.GroupLastDeliveredID}
}

// nodeOf returns the index in p.nodes of s's node fields, adding them.
func (p *packed) nodeOf(s streams.ShardOffset) int32 {
	n := packedNode{s.RedisNodeEndpoint, s.RedisNodeID, s.RedisSlotRangeStart, s.RedisSlotRangeEnd}
	for i, known := range p.nodes {
		if known == n {
			return int32(i)
		}
	}
	p.nodes = append(p.nodes, n)
	return int32(len(p.nodes) - 1) // #nosec G115 -- one node per distinct Redis node serving the shards: at most one per hash slot (16,384)
}

func packInt(v *int64, bit, known uint16) (int64, uint16) {
	if v == nil {
		return 0, known
	}
	return *v, known | bit
}

func unpackValue[T any](v T, known uint16) *T {
	if known == 0 {
		return nil
	}
	return &v
}

// parsePacked reads "<ms>-<seq>"; what does not parse reads back
// differently, and is kept as is (packed.odd).
func parsePacked(s string) packedID {
	ms, seq, _ := strings.Cut(s, "-")
	m, _ := strconv.ParseUint(ms, 10, 64)
	q, _ := strconv.ParseUint(seq, 10, 64)
	return packedID{m, q}
}

// readsBack reports whether id formats as s, without allocating.
func readsBack(id packedID, s string) bool {
	var b [41]byte
	return string(appendPacked(b[:0], id)) == s
}

func formatPacked(id packedID) string { return string(appendPacked(nil, id)) }

func appendPacked(b []byte, id packedID) []byte {
	return strconv.AppendUint(append(strconv.AppendUint(b, id.ms, 10), '-'), id.seq, 10)
}
