package chaos

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

// Summary is the one-line outcome of a run.
func (r *Result) Summary() string {
	verdict := "PASS"
	if r.Failed() {
		verdict = "FAIL"
	}
	settle := "not settled"
	if r.Settled {
		settle = fmt.Sprintf("settled in %.1fs", r.SettleTime.Seconds())
	}
	return fmt.Sprintf("%s seed %d store %s members %s: %s, %d overlaps, %d violations, %d answers, %d of %d moves explained by %d history entries; faults: %s",
		verdict, r.Seed, r.Store, r.Routing, settle, r.Overlaps, len(r.Violations), r.Heartbeats, r.Explained, r.Moves, r.HistoryEntries, r.countsLine())
}

func (r *Result) countsLine() string {
	kinds := make([]string, 0, len(r.Counts))
	for k := range r.Counts {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	var parts []string
	for _, k := range kinds {
		parts = append(parts, fmt.Sprintf("%s %d", k, r.Counts[k]))
	}
	return strings.Join(parts, ", ")
}

// Report writes the summary, then every violation with its timeline, and
// how to replay the run.
func (r *Result) Report(w io.Writer) {
	fmt.Fprintln(w, r.Summary())
	if r.Real != "" {
		fmt.Fprintln(w, "  "+r.Real)
	}
	for _, v := range r.Violations {
		fmt.Fprintf(w, "  VIOLATION %s at %s %v: %s\n", v.Kind, fmtOffset(v.At), v.Members, v.Text)
		for _, line := range v.Timeline {
			fmt.Fprintln(w, "  "+line)
		}
	}
	if r.Failed() {
		fmt.Fprintf(w, "  replay: go run ./cmd/coord-chaos -store %s -seed %d -duration %v -coordinators %d -members %d -shards %d",
			r.Store, r.Seed, r.Duration, r.Coordinators, r.Members, r.Shards)
		if r.Dir != "" {
			fmt.Fprintf(w, " (logs in %s)", r.Dir)
		}
		fmt.Fprintln(w)
	}
}
