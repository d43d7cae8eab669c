package bench

import "testing"

// fleetFigures are synthetic figures of a fleet run whose every goal
// passes: 10 groups settle in 30 s, the SIGTERM's longest wait is 3 s.
func fleetFigures() *FleetFigures {
	return &FleetFigures{Groups: 10, Shards: 16, CreateSeconds: 2, CreateParallel: 16, OverCapRefused: true,
		IdleSeconds: 60, RefreshSeconds: 15, IdleCPUSeconds: 0.3, IdleRoundTrips: 4, PeakRSS: map[string]int64{"c1": 100 << 20},
		Members: &FleetMembers{MembersPerGroup: 10, IntervalSeconds: 10, LeaseTTLSeconds: 30, SettleSeconds: 30,
			PeakRSS: map[string]int64{"c1": 200 << 20, "c2": 150 << 20},
			Leave:   FleetLeave{Coordinator: "c2", Groups: 3, Total: 10, Stopped: true, StopSeconds: 1, MaxWait: 3, Retry: 5, ClusterLeaseTTL: 5}}}
}

func fleetStatuses(f *FleetFigures) map[string]string {
	out := map[string]string{}
	r := &Report{Fleet: f}
	for _, g := range r.scenarioGoals(ScenarioFleet, true, r.fleetGoals()...) {
		out[g.ID] = g.Status
	}
	return out
}

func TestFleetGoals(t *testing.T) {
	cases := []struct {
		name   string
		change func(f *FleetFigures)
		want   map[string]string
	}{
		{"all pass", func(*FleetFigures) {}, map[string]string{"P11a": Pass, "P11b": Pass, "P11c": Pass, "P11d": Pass, "P11e": Pass}},
		{"slow settle", func(f *FleetFigures) { f.Members.SettleSeconds = 61 }, map[string]string{"P11a": Miss, "P11b": Pass}},
		{"groups not settled", func(f *FleetFigures) { f.Members.SettleSeconds, f.Members.Unsettled = 0, 2 }, map[string]string{"P11a": Miss}},
		{"long wait", func(f *FleetFigures) { f.Members.Leave.MaxWait = 7.5 }, map[string]string{"P11b": Miss}},
		{"fenced", func(f *FleetFigures) { f.Members.Leave.Fenced = 1 }, map[string]string{"P11b": Miss}},
		{"moves", func(f *FleetFigures) { f.Members.Leave.Moves = 2 }, map[string]string{"P11b": Miss}},
		{"group never OK", func(f *FleetFigures) { f.Members.Leave.NeverOK = 1 }, map[string]string{"P11b": Miss}},
		{"killed after the stop bound", func(f *FleetFigures) { f.Members.Leave.Stopped = false }, map[string]string{"P11b": Miss}},
		// P11c reads the peak with members: 310 MiB misses though the
		// idle peak passes; without members it reads the idle peak.
		{"rss with members", func(f *FleetFigures) { f.Members.PeakRSS["c3"] = 310 << 20 }, map[string]string{"P11c": Miss}},
		{"no members", func(f *FleetFigures) { f.Members = nil }, map[string]string{"P11a": Miss, "P11b": Miss, "P11c": Pass, "P11d": Pass}},
		{"a create failed", func(f *FleetFigures) { f.CreateFailed = 1 }, map[string]string{"P11e": Miss, "P11d": Pass}},
		{"over the cap accepted", func(f *FleetFigures) { f.OverCapRefused = false }, map[string]string{"P11e": Miss}},
		{"slow creates", func(f *FleetFigures) { f.CreateSeconds = 61 }, map[string]string{"P11e": Miss}},
		{"idle window not reached", func(f *FleetFigures) { f.IdleSeconds, f.PeakRSS, f.Members = 0, map[string]int64{}, nil },
			map[string]string{"P11a": Miss, "P11b": Miss, "P11c": Miss, "P11d": Miss, "P11e": Pass}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := fleetFigures()
			c.change(f)
			got := fleetStatuses(f)
			for id, want := range c.want {
				if got[id] != want {
					t.Errorf("%s: %s, want %s", id, got[id], want)
				}
			}
		})
	}
}
