package membersim

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
)

// Oracle finds double reading: two members reading one shard at the same
// time. Readers tell it, per group and shard, when they read:
//
//   - simulated Members with an Oracle report each start and stop of a
//     read at the moment they make it (group "", on the oracle's own
//     logical clock, which orders the events);
//   - other drivers record closed intervals [from, to) with Read, on a
//     clock of their own (offsets from the start of a run).
//
// An oracle made by NewOracle counts every member as live all along: any
// overlap is a violation. One made by NewLeaseOracle counts a read only
// inside the windows during which its member was surely live (Live: from
// the sending of a heartbeat the coordinator accepted until one lease TTL
// later): a coordinator may legitimately hand the shards of an expired
// member to another while the expired process still reads them.
//
// Shards and members are keyed by group: shard 3 of one group and shard 3
// of another are different shards. It is safe for concurrent use.
type Oracle struct {
	mu     sync.Mutex
	leases bool // clip reads to live windows
	reads  map[shardKey][]span
	live   map[memberKey][]span
	open   map[int][]span // shard of group "" → reads started, not stopped
	tick   time.Duration  // logical clock of start and stop
}

// shardKey is one shard of one group.
type shardKey struct {
	group string
	shard int
}

// memberKey is one member of one group.
type memberKey struct{ group, member string }

// span is [from, to) of one member.
type span struct {
	member   string
	from, to time.Duration
}

// Violation is one overlap of two members reading one shard.
type Violation struct {
	Group    string        `json:"group"`
	Shard    int           `json:"shard"`
	Members  [2]string     `json:"members"`
	From     time.Duration `json:"fromNs"`
	Duration time.Duration `json:"durationNs"`
}

func (v Violation) String() string {
	return fmt.Sprintf("group %s shard %d read by %s and %s for %v from %v", v.Group, v.Shard, v.Members[0], v.Members[1], v.Duration, v.From)
}

// NewOracle returns an empty oracle in which every member counts as live.
func NewOracle() *Oracle {
	return &Oracle{reads: map[shardKey][]span{}, live: map[memberKey][]span{}, open: map[int][]span{}}
}

// NewLeaseOracle returns an empty oracle that counts reads only inside
// their member's Live windows.
func NewLeaseOracle() *Oracle {
	o := NewOracle()
	o.leases = true
	return o
}

// Read records that member of group read shard during [from, to).
func (o *Oracle) Read(group, member string, shard int, from, to time.Duration) {
	if to <= from {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	k := shardKey{group, shard}
	o.reads[k] = append(o.reads[k], span{member, from, to})
}

// Live records that member of group was surely live during [from, to).
func (o *Oracle) Live(group, member string, from, to time.Duration) {
	if to <= from {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	k := memberKey{group, member}
	o.live[k] = append(o.live[k], span{member, from, to})
}

// start records that member starts reading shards now.
func (o *Oracle) start(member string, shards contract.ShardSet) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.tick++
	for _, s := range shards {
		o.open[s] = append(o.open[s], span{member: member, from: o.tick})
	}
}

// stop records that member stops reading shards now.
func (o *Oracle) stop(member string, shards contract.ShardSet) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.tick++
	for _, s := range shards {
		i := slices.IndexFunc(o.open[s], func(r span) bool { return r.member == member })
		if i < 0 {
			continue
		}
		r := o.open[s][i]
		r.to = o.tick
		k := shardKey{"", s}
		o.reads[k] = append(o.reads[k], r)
		if o.open[s] = slices.Delete(o.open[s], i, i+1); len(o.open[s]) == 0 {
			delete(o.open, s)
		}
	}
}

// Violations returns every overlap, reads still open included, ordered by
// group, shard and time.
func (o *Oracle) Violations() []Violation {
	o.mu.Lock()
	defer o.mu.Unlock()
	reads := make(map[shardKey][]span, len(o.reads)+len(o.open))
	for k, rs := range o.reads {
		reads[k] = slices.Clone(rs)
	}
	for s, rs := range o.open {
		for _, r := range rs {
			r.to = math.MaxInt64
			reads[shardKey{"", s}] = append(reads[shardKey{"", s}], r)
		}
	}
	shards := make([]shardKey, 0, len(reads))
	for s := range reads {
		shards = append(shards, s)
	}
	slices.SortFunc(shards, func(a, b shardKey) int {
		return cmp.Or(cmp.Compare(a.group, b.group), cmp.Compare(a.shard, b.shard))
	})
	var out []Violation
	for _, s := range shards {
		eff := reads[s]
		if o.leases {
			eff = nil
			for _, r := range reads[s] {
				eff = append(eff, clip(r, merge(o.live[memberKey{s.group, r.member}]))...)
			}
		}
		out = append(out, overlaps(s, eff)...)
	}
	return out
}

// Overlaps returns every violation as text.
func (o *Oracle) Overlaps() []string {
	var out []string
	for _, v := range o.Violations() {
		out = append(out, v.String())
	}
	return out
}

// Readers returns, for every shard a simulated member reads now, the
// members reading it, in the order they started.
func (o *Oracle) Readers() map[int][]string {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := make(map[int][]string, len(o.open))
	for s, rs := range o.open {
		for _, r := range rs {
			out[s] = append(out[s], r.member)
		}
	}
	return out
}

// Handoff is a read of a shard that a member started after another
// member's read of it (From "" for the shard's first read): a move of the
// shard as its readers saw it.
type Handoff struct {
	Shard    int
	From, To string
	// At is when To started reading, on the clock of the reads.
	At time.Duration
}

// Handoffs returns the handoffs of group's shards among the closed reads
// recorded with Read, ordered by shard then start. A member that stops
// and reads the shard again, with nobody reading it between, is no
// handoff.
func (o *Oracle) Handoffs(group string) []Handoff {
	o.mu.Lock()
	defer o.mu.Unlock()
	var shards []int
	for k := range o.reads {
		if k.group == group {
			shards = append(shards, k.shard)
		}
	}
	slices.Sort(shards)
	var out []Handoff
	for _, s := range shards {
		spans := slices.Clone(o.reads[shardKey{group, s}])
		slices.SortStableFunc(spans, func(a, b span) int { return cmp.Compare(a.from, b.from) })
		prev := ""
		for _, r := range spans {
			if r.member != prev {
				out = append(out, Handoff{Shard: s, From: prev, To: r.member, At: r.from})
				prev = r.member
			}
		}
	}
	return out
}

// merge sorts spans and joins those that overlap or touch.
func merge(ws []span) []span {
	ws = slices.Clone(ws)
	slices.SortFunc(ws, func(a, b span) int { return cmp.Compare(a.from, b.from) })
	var out []span
	for _, w := range ws {
		if n := len(out); n > 0 && w.from <= out[n-1].to {
			out[n-1].to = max(out[n-1].to, w.to)
			continue
		}
		out = append(out, w)
	}
	return out
}

// clip returns the parts of r inside the sorted, disjoint windows.
func clip(r span, windows []span) []span {
	var out []span
	for _, w := range windows {
		from, to := max(r.from, w.from), min(r.to, w.to)
		if from < to {
			out = append(out, span{r.member, from, to})
		}
	}
	return out
}

// overlaps reports every pair of spans of different members that overlap.
func overlaps(shard shardKey, spans []span) []Violation {
	slices.SortFunc(spans, func(a, b span) int { return cmp.Compare(a.from, b.from) })
	var out []Violation
	for i, a := range spans {
		for _, b := range spans[i+1:] {
			if b.from >= a.to {
				break
			}
			if a.member != b.member {
				out = append(out, Violation{Group: shard.group, Shard: shard.shard, Members: [2]string{a.member, b.member}, From: b.from, Duration: min(a.to, b.to) - b.from})
			}
		}
	}
	return out
}
