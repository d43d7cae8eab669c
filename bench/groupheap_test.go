package bench

import (
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/redis-stream-coordinator/coordinator/actors"
	"github.com/redis-stream-coordinator/coordinator/audit"
	"github.com/redis-stream-coordinator/coordinator/config"
	"github.com/redis-stream-coordinator/coordinator/group"
	httpapi "github.com/redis-stream-coordinator/coordinator/http"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/coordtest"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/membersim"
	"github.com/redis-stream-coordinator/coordinator/metrics"
	"github.com/redis-stream-coordinator/coordinator/persistence"
	"github.com/redis-stream-coordinator/coordinator/persistence/memory"
	"github.com/redis-stream-coordinator/coordinator/ratelimit"
	"github.com/redis-stream-coordinator/coordinator/security"
)

// groupHeapProfiles, when set, is a directory where BenchmarkHeapPerGroup
// writes the heap profiles at its three measures (before.pprof,
// idle.pprof, members.pprof), for `go tool pprof -sample_index=inuse_space
// -base before.pprof idle.pprof`), sampling an allocation every 64
// bytes.
var groupHeapProfiles = flag.String("groupheap.profiles", "", "directory for BenchmarkHeapPerGroup's heap profiles")

// BenchmarkHeapPerGroup reports what a group costs a coordinator's heap
// after GC (goal P11f): one in-process coordinator on the memory store
// wired as cmd/coordinator wires it with the default configuration (event
// loop and timers on, group commit, the Prometheus metrics observing the
// actors and every request, the log audit sink's memory of recent
// mutations, the admin rate limiter), groupHeapGroups groups of 4 shards
// created through the API. B/idle-group is the heap they add over the
// running coordinator's, over the group count; B/member is what
// groupHeapMembers members per group joining through the API and
// heartbeating until every group is settled add, over the member count
// (the members' own state, held by the benchmark, is dropped before
// measuring). Both leave out the memory store's copy of the groups, which
// a coordinator on Redis does not hold: B/idle-group-store and
// B/member-store are that copy's share, the heap of a second memory store
// holding the same documents. The lag refresher's samples and status
// trackers need Redis streams and are not counted.
func BenchmarkHeapPerGroup(b *testing.B) {
	if *groupHeapProfiles != "" {
		runtime.MemProfileRate = 64
	}
	var h groupHeapMeasure
	for b.Loop() {
		h = groupHeap(b)
	}
	b.ReportMetric(h.perGroup, "B/idle-group")
	b.ReportMetric(h.perMember, "B/member")
	b.ReportMetric(h.storePerGroup, "B/idle-group-store")
	b.ReportMetric(h.storePerMember, "B/member-store")
}

// groupHeapMeasure is one measure of BenchmarkHeapPerGroup.
type groupHeapMeasure struct {
	perGroup, perMember, storePerGroup, storePerMember float64
}

// groupHeap runs one measure of BenchmarkHeapPerGroup.
func groupHeap(b *testing.B) groupHeapMeasure {
	cfg := config.Default()
	users, err := security.NewUsers(security.Options{AdminUsername: "admin", AdminPassword: "bench-password"})
	if err != nil {
		b.Fatal(err)
	}
	limiter, err := ratelimit.New(cfg.API.RateLimit.MaxRequests, cfg.API.RateLimit.Window.Duration())
	if err != nil {
		b.Fatal(err)
	}
	recent := audit.NewMemorySink(httpapi.RecentMutationsLimit, cfg.Audit.MemoryMaxEntries)
	m := metrics.New(prometheus.NewRegistry(), "bench", metrics.WithMemberSeries(cfg.Monitoring.MemberSeries),
		metrics.WithShardSeries(cfg.Monitoring.ShardSeries), metrics.WithGroupSeries(cfg.Monitoring.GroupSeries),
		metrics.WithStatusSeries(cfg.Monitoring.StatusSeries))
	ev, gc := cfg.Coordination.EventLoop, cfg.Coordination.GroupCommit
	c := coordtest.Start(b, coordtest.Options{
		Actors: func(o *actors.Options) {
			o.Observer = m
			o.TickEnabled, o.TickInterval, o.SweepInterval = ev.Enabled, ev.Interval.Duration(), ev.SweepInterval.Duration()
			o.GroupCommit, o.MaxBatch = gc.Enabled, gc.MaxBatch
			o.MaxQueuedHeartbeats = cfg.Coordination.MaxQueuedHeartbeats
		},
		API: func(o *httpapi.Options) {
			o.Security = &httpapi.Security{Users: users, Audit: recent, History: recent, Limiter: limiter}
			o.Middleware = append([]httpapi.Middleware{httpapi.ObserveRequests(m)}, o.Middleware...)
			o.Runtime = httpapi.ObserveRuntime(o.Runtime, m)
		},
	})
	defer c.Stop()
	go m.Run(b.Context(), c.Actors)
	admin := c.Admin()
	admin.Authorization = "Basic YWRtaW46YmVuY2gtcGFzc3dvcmQ=" // admin:bench-password
	keys := make([]group.Key, groupHeapGroups)
	for i := range keys {
		keys[i] = group.Key{StreamPrefix: fmt.Sprintf("heap-%04d", i), ConsumerGroup: "g"}
	}
	// A group created and deleted first makes the coordinator's one-time
	// structures (pools, the HTTP connection) part of the base.
	warm := group.Key{StreamPrefix: "heap-warm", ConsumerGroup: "g"}
	admin.Create(warm, 4)
	if st, _, body := admin.Do(http.MethodDelete, coordtest.GroupPath(warm), `{"requestedBy":"bench","reason":"warm-up","force":true}`); st != http.StatusNoContent && st != http.StatusOK {
		b.Fatalf("delete %s: %d %s", warm, st, body)
	}
	before := heapAfterGC()
	writeHeapProfile(b, "before")
	for _, k := range keys {
		admin.Create(k, 4)
	}
	idle := heapAfterGC()
	writeHeapProfile(b, "idle")
	idleStore := storeHeap(b, c.Store, keys)
	sims := make([][]*membersim.Member, len(keys))
	for i, k := range keys {
		for j := range groupHeapMembers {
			sims[i] = append(sims[i], membersim.New(fmt.Sprintf("m-%02d", j), nil))
		}
		for round := 0; !membersim.Settled(4, sims[i]); round++ {
			if round == 10 {
				b.Fatalf("%s not settled after %d rounds", k, round)
			}
			for _, s := range sims[i] {
				c.Heartbeat(k, s)
			}
		}
	}
	sims = nil
	joined := heapAfterGC()
	writeHeapProfile(b, "members")
	joinedStore := storeHeap(b, c.Store, keys)
	const members = groupHeapGroups * groupHeapMembers
	return groupHeapMeasure{
		perGroup:       (float64(idle) - float64(before) - idleStore) / groupHeapGroups,
		perMember:      (float64(joined) - float64(idle) - (joinedStore - idleStore)) / members,
		storePerGroup:  idleStore / groupHeapGroups,
		storePerMember: (joinedStore - idleStore) / members,
	}
}

// storeHeap is the heap that a memory store holding the documents of keys
// in st takes: a second store is filled with copies of them, measured and
// dropped.
func storeHeap(b *testing.B, st persistence.Store, keys []group.Key) float64 {
	before := heapAfterGC()
	copied := memory.New()
	for _, k := range keys {
		doc, _, err := st.Load(b.Context(), k)
		if err == nil {
			_, err = copied.Create(b.Context(), k, doc)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	after := heapAfterGC()
	runtime.KeepAlive(copied)
	return float64(after) - float64(before)
}

// writeHeapProfile writes the heap profile (of the last GC) to name.pprof
// in groupHeapProfiles, when it is set.
func writeHeapProfile(b *testing.B, name string) {
	if *groupHeapProfiles == "" {
		return
	}
	f, err := os.Create(filepath.Join(*groupHeapProfiles, name+".pprof"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		b.Fatal(err)
	}
}

// P11f reads BenchmarkHeapPerGroup's two metrics and passes only when
// both are within their targets.
func TestGroupHeapGoal(t *testing.T) {
	out := "BenchmarkHeapPerGroup-2   \t       1\t7287055093 ns/op\t     4000 B/idle-group\t       665.5 B/idle-group-store\t      1024 B/member\t       644.0 B/member-store\nPASS\n"
	f, err := groupHeapFigures(out)
	if err != nil || *f != (GroupHeapFigures{IdleGroupBytes: 4000, MemberBytes: 1024, StoreIdleGroupBytes: 665.5, StoreMemberBytes: 644}) {
		t.Fatalf("figures %+v, %v", f, err)
	}
	for _, tc := range []struct {
		f    *GroupHeapFigures
		want string
	}{
		{f, Pass},
		{&GroupHeapFigures{IdleGroupBytes: 4097, MemberBytes: 1000}, Miss},
		{&GroupHeapFigures{IdleGroupBytes: 1000, MemberBytes: 1025}, Miss},
		{nil, NotRun},
	} {
		if g := (&Report{GroupHeap: tc.f}).groupHeapGoal(); g.ID != "P11f" || g.Status != tc.want {
			t.Errorf("%+v: %s %s (%s), want %s", tc.f, g.ID, g.Status, g.Detail, tc.want)
		}
	}
	if _, err := groupHeapFigures("BenchmarkHeapPerMember-2 1 5 ns/op 600 B/member\n"); err == nil {
		t.Error("figures from another benchmark's output")
	}
}
