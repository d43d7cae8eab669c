package chaos

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
)

// event is one line of the run's timeline; member is empty for faults of
// the cluster (coordinators, Redis, admin changes).
type event struct {
	at     time.Duration
	member string
	text   string
}

// eventLog is the whole timeline of a run. Safe for concurrent use.
type eventLog struct {
	mu     sync.Mutex
	events []event
}

func (l *eventLog) add(at time.Duration, member, text string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, event{at, member, text})
}

// timeline renders, in time order, the last n events up to offset until
// of each given member, the cluster events since the earliest of those,
// then at most after events of the members up to offset end.
func (l *eventLog) timeline(members []string, until, end time.Duration, n, after int) []string {
	l.mu.Lock()
	evs := slices.Clone(l.events)
	l.mu.Unlock()
	slices.SortStableFunc(evs, func(a, b event) int { return cmp.Compare(a.at, b.at) })
	var before, later, cluster []event
	from := until
	for _, m := range members {
		var mine []event
		for _, e := range evs {
			if e.member == m && e.at <= until {
				mine = append(mine, e)
			}
		}
		mine = mine[max(0, len(mine)-n):]
		if len(mine) > 0 {
			from = min(from, mine[0].at)
		}
		before = append(before, mine...)
	}
	for _, e := range evs {
		switch {
		case e.member == "" && e.at >= from && e.at <= until:
			cluster = append(cluster, e)
		case e.at > until && e.at <= end && slices.Contains(members, e.member) && len(later) < after:
			later = append(later, e)
		}
	}
	before = append(before, cluster...)
	slices.SortStableFunc(before, func(a, b event) int { return cmp.Compare(a.at, b.at) })
	var out []string
	for _, e := range before {
		out = append(out, e.String())
	}
	if len(later) > 0 {
		out = append(out, "  … after the violation started:")
		for _, e := range later {
			out = append(out, e.String())
		}
	}
	return out
}

func (e event) String() string {
	who := e.member
	if who == "" {
		who = "cluster"
	}
	return fmt.Sprintf("  %9s %-7s %s", fmtOffset(e.at), who, e.text)
}

// answer is one heartbeat answer the suite received from a coordinator,
// whether or not the member saw it (lost answers and answers to
// duplicates count: the coordinator gave them).
type answer struct {
	member, req, coord string
	sent, recv         time.Duration
	resp               contract.HeartbeatResponse
	lost, dup          bool
}

func (a answer) String() string {
	flag := ""
	switch {
	case a.lost:
		flag = " (lost)"
	case a.dup:
		flag = " (duplicate)"
	}
	return fmt.Sprintf("%s to %s by %s sent %s received %s%s", a.resp.Status, a.req, a.coord, fmtOffset(a.sent), fmtOffset(a.recv), flag)
}

// answers collects every answer of a run. Safe for concurrent use.
type answers struct {
	mu  sync.Mutex
	all []answer
}

func (as *answers) add(a answer) {
	as.mu.Lock()
	defer as.mu.Unlock()
	as.all = append(as.all, a)
}

// Violation is one failed check.
type Violation struct {
	// Kind is overlap, epoch, settle or admin.
	Kind string
	// At is the offset from the start of the run where it shows.
	At time.Duration
	// Members are the members involved (none for admin and settle).
	Members []string
	Text    string
	// Timeline is the recent history of the members involved, or nil
	// when the report already shows the timeline of the same incident.
	Timeline []string
}

// carriesGroupEpochs reports whether an answer of status st carries the
// group's real epochs and version (rejected statuses send zeros; RETRY
// carries nothing reliable).
func carriesGroupEpochs(st contract.HeartbeatStatus) bool {
	switch st {
	case contract.StatusOK, contract.StatusRevokePending, contract.StatusSyncMetadata, contract.StatusFencedMemberEpoch:
		return true
	}
	return false
}

// epochViolations checks that epochs never move back: an answer must not
// carry a lower groupEpoch, assignmentEpoch or metadataVersion than any
// answer received before it was sent (that answer's state was committed
// before this request reached any coordinator), nor a lower memberEpoch
// than an earlier such answer to the same member. Answers that overlap in
// time are not ordered and not compared; equal values always pass (a
// retried heartbeat may see the same state).
func epochViolations(all []answer) []Violation {
	var ok []answer
	for _, a := range all {
		if carriesGroupEpochs(a.resp.Status) {
			ok = append(ok, a)
		}
	}
	fields := []struct {
		name   string
		get    func(contract.HeartbeatResponse) int64
		member bool
	}{
		{"groupEpoch", func(r contract.HeartbeatResponse) int64 { return r.GroupEpoch }, false},
		{"assignmentEpoch", func(r contract.HeartbeatResponse) int64 { return r.AssignmentEpoch }, false},
		{"metadataVersion", func(r contract.HeartbeatResponse) int64 { return r.MetadataVersion }, false},
		{"memberEpoch", func(r contract.HeartbeatResponse) int64 { return r.MemberEpoch }, true},
	}
	var out []Violation
	for _, f := range fields {
		if !f.member {
			out = append(out, monotone(ok, f.name, f.get)...)
			continue
		}
		byMember := map[string][]answer{}
		for _, a := range ok {
			byMember[a.member] = append(byMember[a.member], a)
		}
		for _, as := range byMember {
			out = append(out, monotone(as, f.name, f.get)...)
		}
	}
	slices.SortFunc(out, func(a, b Violation) int { return cmp.Compare(a.At, b.At) })
	return out
}

// monotone reports every answer whose field is below the maximum over
// the answers received before it was sent.
func monotone(as []answer, name string, get func(contract.HeartbeatResponse) int64) []Violation {
	byRecv := slices.Clone(as)
	slices.SortFunc(byRecv, func(a, b answer) int { return cmp.Compare(a.recv, b.recv) })
	// best[i] is the index in byRecv of the largest value among byRecv[:i+1].
	best := make([]int, len(byRecv))
	for i := range byRecv {
		best[i] = i
		if i > 0 && get(byRecv[best[i-1]].resp) >= get(byRecv[i].resp) {
			best[i] = best[i-1]
		}
	}
	var out []Violation
	for _, a := range as {
		k := sort.Search(len(byRecv), func(i int) bool { return byRecv[i].recv >= a.sent })
		if k == 0 {
			continue
		}
		w := byRecv[best[k-1]]
		if get(a.resp) < get(w.resp) {
			out = append(out, Violation{Kind: "epoch", At: a.recv, Members: uniq(a.member, w.member),
				Text: fmt.Sprintf("%s moved back: %d in %s (member %s), after %d in %s (member %s)",
					name, get(a.resp), a, a.member, get(w.resp), w, w.member)})
		}
	}
	return out
}

// uniq returns the distinct non-empty ids among ids, in order.
func uniq(ids ...string) []string {
	var out []string
	for _, id := range ids {
		if id != "" && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// adminOp is one scale request of the run.
type adminOp struct {
	at     time.Duration
	target int
	code   int    // HTTP status; 0 when no answer arrived
	id     string // reshardingId of a 2xx answer
	err    string
}

// acked reports whether the coordinator acknowledged the change.
func (op adminOp) acked() bool { return op.code >= 200 && op.code < 300 }

// uncertain reports whether the change may have been applied without an
// acknowledgement (the answer never arrived).
func (op adminOp) uncertain() bool { return op.code == 0 }

// adminViolations checks that no acknowledged admin change was lost:
// shardCount is the target of the last acknowledged scale, or of an
// unacknowledged one sent after it, or initial when none was
// acknowledged; every acknowledged migration is listed.
func adminViolations(ops []adminOp, initial, shardCount int, listed []string, at time.Duration) []Violation {
	allowed := []int{initial}
	var ids []string
	for _, op := range ops {
		switch {
		case op.acked():
			allowed = []int{op.target}
			if op.id != "noop" {
				ids = append(ids, op.id)
			}
		case op.uncertain():
			allowed = append(allowed, op.target)
		}
	}
	var out []Violation
	if !slices.Contains(allowed, shardCount) {
		out = append(out, Violation{Kind: "admin", At: at, Text: fmt.Sprintf(
			"final shardCount %d, want %v (last acknowledged scale target, or a later unanswered one)", shardCount, allowed)})
	}
	var missing []string
	for _, id := range ids {
		if !slices.Contains(listed, id) {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		out = append(out, Violation{Kind: "admin", At: at, Text: "acknowledged migrations missing from /migrations: " + strings.Join(missing, ", ")})
	}
	return out
}
