package bench

import (
	"slices"
	"testing"
)

func TestParseSizes(t *testing.T) {
	got, err := ParseSizes("1x10000x10000, 10x1000x1000")
	if err != nil {
		t.Fatal(err)
	}
	if want := []Size{{1, 10000, 10000}, {10, 1000, 1000}}; !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if got, err := ParseSizes(""); err != nil || len(got) != 0 {
		t.Fatalf(`"" = %v, %v; want none`, got, err)
	}
	for _, bad := range []string{"10x1000", "10x1000x1000x1", "ax1x1", "1x1x1junk"} {
		if _, err := ParseSizes(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestGroupsGoal(t *testing.T) {
	r := &Report{Phases: []Phase{
		{Name: "groups-ref/1x10000x10000-settle", Mode: "closed", Groups: 1, Members: 10000, Throughput: 1},
		{Name: "groups-ref/1x10000x10000", Mode: "closed", Groups: 1, Members: 10000, Throughput: 20000},
		{Name: "groups-ref/10x1000x1000", Mode: "closed", Groups: 10, Members: 1000, Throughput: 22000},
		{Name: "groups/settle", Mode: "closed", Groups: 100, Members: 1000, Throughput: 1},
		{Name: "groups/closed", Mode: "closed", Groups: 100, Members: 1000, Throughput: 15000},
	}}
	g := r.groupsGoal()
	if g.Status != Miss || g.Measured != 0.75 {
		t.Fatalf("P6c = %+v, want MISS at 0.75", g)
	}
	r.Phases[4].Throughput = 17000
	if g := r.groupsGoal(); g.Status != Pass || g.Measured != 0.85 {
		t.Fatalf("P6c = %+v, want PASS at 0.85", g)
	}
	if g := (&Report{Phases: r.Phases[4:]}).groupsGoal(); g.Status != NotRun {
		t.Fatalf("P6c without a reference = %+v, want NOT RUN", g)
	}
	if g := (&Report{Phases: r.Phases[:3]}).groupsGoal(); g.Status != NotRun {
		t.Fatalf("P6c without groups/closed = %+v, want NOT RUN", g)
	}
}
