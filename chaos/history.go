package chaos

import (
	"context"
	"fmt"
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/membersim"
)

// historyEntries is the coordinators' coordination.history.max-entries
// in a run: far more than a run's moves, so that the history the check
// reads at the end still holds the first ones.
const historyEntries = 20000

// checkHistory reads the simulated group's assignment history once the
// members stopped and checks that it explains every move the oracle saw
// (historyViolations); it records the figures in res.
func (r *run) checkHistory(ctx context.Context, res *Result, at time.Duration) []Violation {
	var h contract.HistoryView
	if err := r.getSoon(ctx, contract.Expand(contract.GroupHistory, r.key.StreamPrefix, r.key.ConsumerGroup), &h); err != nil {
		return []Violation{{Kind: "history", At: at, Text: "read history: " + err.Error()}}
	}
	moves := r.oracle.Handoffs(r.key.String())
	vs, explained := historyViolations(h.Entries, moves, r.wall.instant)
	res.Moves, res.Explained, res.HistoryEntries = len(moves), explained, len(h.Entries)
	r.log.add(at, "", fmt.Sprintf("history: %d entries explain %d of the %d moves the readers saw", len(h.Entries), explained, len(moves)))
	return vs
}

// historyViolations matches each move the readers saw (a member starting
// to read a shard that another member, or nobody, read before it; moves
// in shard then start order, at offsets of the run, which wallAt maps to
// the wall clock that stamps the entries, not start plus the offset once
// the wall clock stepped: wallClock) with an entry of the
// history: the next entry of that shard, after the one that explained
// the shard's previous move, whose new owner is the reader, recorded no
// later than the read started (the member was granted the shard only
// after the decision was stored) and naming a cause. Entries no reader
// acted on (a target that changed again before its member read it) are
// not moves, and neither are group-level entries (a handover between
// coordinators moves no shard). It returns a violation per move without
// such an entry, and the number of moves explained; a history as long as
// its bound may have lost its oldest entries, and is one violation.
func historyViolations(entries []contract.HistoryEntry, moves []membersim.Handoff, wallAt func(time.Duration) contract.Instant) ([]Violation, int) {
	var vs []Violation
	if len(entries) >= historyEntries {
		vs = append(vs, Violation{Kind: "history", Text: fmt.Sprintf("history holds %d entries, its bound: its oldest entries may be gone", len(entries))})
	}
	byShard := map[int][]contract.HistoryEntry{}
	for _, e := range entries {
		if e.Shard != contract.GroupLevelShard {
			byShard[e.Shard] = append(byShard[e.Shard], e)
		}
	}
	next := map[int]int{} // per shard, the first entry not yet used
	explained := 0
	for _, m := range moves {
		readAt := wallAt(m.At)
		list, found := byShard[m.Shard], -1
		for j := next[m.Shard]; j < len(list); j++ {
			if list[j].ToMember == m.To && list[j].Cause != "" && list[j].At <= readAt {
				found = j
				break
			}
		}
		if found < 0 {
			vs = append(vs, Violation{Kind: "history", At: m.At, Members: []string{m.To},
				Text: fmt.Sprintf("shard %d moved from %q to %s at %s, and no history entry says why", m.Shard, m.From, m.To, fmtOffset(m.At))})
			continue
		}
		explained++
		next[m.Shard] = found + 1
	}
	return vs, explained
}
