package bench

import (
	"cmp"
	"fmt"
	"slices"
	"sync"
	"time"
)

// Oracle finds double ownership after the fact. Members tell it, per
// group and shard, the intervals [from, to) during which they read the shard (as
// they believed from the answers they got), and the windows during which
// they were surely live: from the sending of a heartbeat the coordinator
// accepted until one lease TTL later (the coordinator cannot have expired
// the member before then). A violation is a time at which two members read
// the same shard while both were live. A member whose lease may have
// lapsed may legitimately lose its shards while it still reads them; a
// crashed member stops reading at once. Shards and members are keyed by
// group: shard 3 of one group and shard 3 of another are different shards,
// and member m-00001 of one group is not m-00001 of another. It is safe
// for concurrent use.
type Oracle struct {
	mu    sync.Mutex
	reads map[shardKey][]span // shard → read spans
	live  map[memberKey][]span
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

// Violation is one overlap of two live members reading one shard.
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

// NewOracle returns an empty oracle.
func NewOracle() *Oracle {
	return &Oracle{reads: map[shardKey][]span{}, live: map[memberKey][]span{}}
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

// Violations returns every overlap, ordered by group, shard and time.
func (o *Oracle) Violations() []Violation {
	o.mu.Lock()
	defer o.mu.Unlock()
	live := make(map[memberKey][]span, len(o.live))
	for m, ws := range o.live {
		live[m] = merge(ws)
	}
	shards := make([]shardKey, 0, len(o.reads))
	for s := range o.reads {
		shards = append(shards, s)
	}
	slices.SortFunc(shards, func(a, b shardKey) int {
		return cmp.Or(cmp.Compare(a.group, b.group), cmp.Compare(a.shard, b.shard))
	})
	var out []Violation
	for _, s := range shards {
		var eff []span
		for _, r := range o.reads[s] {
			eff = append(eff, clip(r, live[memberKey{s.group, r.member}])...)
		}
		out = append(out, overlaps(s, eff)...)
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
