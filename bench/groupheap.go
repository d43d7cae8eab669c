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
// add to a coordinator wired as cmd/coordinator wires it, without the
// memory store's copy of the group, and that copy's share (the Store
// figures).
type GroupHeapFigures struct {
	IdleGroupBytes      float64 `json:"bytesPerIdleGroup"`
	MemberBytes         float64 `json:"bytesPerMember"`
	StoreIdleGroupBytes float64 `json:"storeBytesPerIdleGroup"`
	StoreMemberBytes    float64 `json:"storeBytesPerMember"`
}

// groupHeapFigures reads BenchmarkHeapPerGroup's metrics from go test's
// output.
func groupHeapFigures(out string) (*GroupHeapFigures, error) {
	var f GroupHeapFigures
	for _, m := range []struct {
		unit string
		v    *float64
	}{{"B/idle-group", &f.IdleGroupBytes}, {"B/member", &f.MemberBytes},
		{"B/idle-group-store", &f.StoreIdleGroupBytes}, {"B/member-store", &f.StoreMemberBytes}} {
		v, ok := parseMetric(out, "BenchmarkHeapPerGroup", m.unit)
		if !ok {
			return nil, fmt.Errorf("heap benchmark: no %s of BenchmarkHeapPerGroup in\n%s", m.unit, out)
		}
		*m.v = v
	}
	return &f, nil
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
		fmt.Sprintf("%.0f B per idle group, %.0f B per member (target %d), %d groups × %d members; the memory store's copy besides: %.0f B per group, %.0f B per member",
			f.IdleGroupBytes, f.MemberBytes, memberTarget, groupHeapGroups, groupHeapMembers, f.StoreIdleGroupBytes, f.StoreMemberBytes))
	return g.missIf(r.GroupHeap != nil && f.MemberBytes > memberTarget, fmt.Sprintf("per member %.0f B > %d", f.MemberBytes, memberTarget))
}
