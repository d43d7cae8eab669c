package bench

import (
	"fmt"
)

// groupHeapGroups and groupHeapMembers size BenchmarkHeapPerGroup: as many
// groups as the default monitoring.group-series gives per-group series
// (every group pays for its series), 10 members each.
const groupHeapGroups, groupHeapMembers = 1000, 10

// GroupHeapFigures are BenchmarkHeapPerGroup's figures (goal P11f): the
// heap after GC that one idle group and one member of a 10-member group
// add to a coordinator wired as cmd/coordinator wires it, on the memory
// store.
type GroupHeapFigures struct {
	IdleGroupBytes float64 `json:"bytesPerIdleGroup"`
	MemberBytes    float64 `json:"bytesPerMember"`
}

// groupHeapFigures reads BenchmarkHeapPerGroup's metrics from go test's
// output.
func groupHeapFigures(out string) (*GroupHeapFigures, error) {
	idle, okIdle := parseMetric(out, "BenchmarkHeapPerGroup", "B/idle-group")
	member, okMember := parseMetric(out, "BenchmarkHeapPerGroup", "B/member")
	if !okIdle || !okMember {
		return nil, fmt.Errorf("heap benchmark: no B/idle-group and B/member of BenchmarkHeapPerGroup in\n%s", out)
	}
	return &GroupHeapFigures{IdleGroupBytes: idle, MemberBytes: member}, nil
}

// groupHeapGoal is P11f: at most 4 KiB of heap per idle group and 1 KiB
// per member of a 10-member group; Measured is the idle group's figure,
// and a member's above its target makes the goal MISS too.
func (r *Report) groupHeapGoal() Goal {
	const idleTarget, memberTarget = 4096, 1024
	f := r.GroupHeap
	if f == nil {
		f = &GroupHeapFigures{}
	}
	g := goal("P11f", "heap per idle group (B; and per member of a 10-member group ≤ 1,024), BenchmarkHeapPerGroup",
		f.IdleGroupBytes, idleTarget, true, r.GroupHeap != nil,
		fmt.Sprintf("%.0f B per idle group, %.0f B per member (target %d), %d groups on the memory store, its copy of each group included",
			f.IdleGroupBytes, f.MemberBytes, memberTarget, groupHeapGroups))
	return g.missIf(r.GroupHeap != nil && f.MemberBytes > memberTarget, fmt.Sprintf("per member %.0f B > %d", f.MemberBytes, memberTarget))
}
