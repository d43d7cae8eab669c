package chaos

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/coordproc"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/membersim"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/redisproc"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/testredis"
)

// TestChaosShort is the short form of make chaos (which runs 50 seeds of
// 60 s on each store): one fixed seed on a throwaway Redis and one on
// PostgreSQL, 10 s of faults each, run at once. Every run must end without
// an overlap, settle balanced, keep every acknowledged scale and never see
// an epoch move back, and its group's assignment history, read at the
// end through coordinator kills, cuts and handovers, must explain every
// shard move the readers saw with an entry naming its cause.
func TestChaosShort(t *testing.T) {
	if _, err := os.Stat(redisproc.Binary); err != nil {
		testredis.Unavailable(t, "redis-server binary: %v", err)
	}
	ctx := context.Background()
	pg := Defaults().PostgresURL
	if conn, err := pgx.Connect(ctx, pg); err != nil {
		testredis.Unavailable(t, "PostgreSQL at %s: %v", pg, err)
	} else {
		conn.Close(ctx)
	}
	bin, err := coordproc.Build(ctx, t.TempDir(), "coordinator")
	if err != nil {
		t.Fatal(err)
	}
	runs := []Options{{Seed: 1, Store: coordproc.StoreRedis}, {Seed: 1, Store: coordproc.StoreJDBC}}
	var wg sync.WaitGroup
	for _, o := range runs {
		d := Defaults()
		d.Seed, d.Store, d.Binary = o.Seed, o.Store, bin
		d.Duration, d.SettleTimeout = 10*time.Second, 20*time.Second
		wg.Go(func() {
			res, err := Run(ctx, d)
			if err != nil {
				t.Errorf("seed %d on %s: %v", d.Seed, d.Store, err)
				return
			}
			var b strings.Builder
			res.Report(&b)
			if res.Failed() {
				t.Error(b.String())
			} else {
				t.Log(b.String())
			}
			if res.Moves == 0 || res.Explained != res.Moves || res.HistoryEntries < res.Moves {
				t.Errorf("seed %d on %s: history of %d entries explains %d of %d moves", d.Seed, d.Store, res.HistoryEntries, res.Explained, res.Moves)
			}
		})
	}
	wg.Wait()
}

func TestScheduleIsSeededAndConsistent(t *testing.T) {
	o := Defaults()
	o.Seed = 7
	a, b := Schedule(o), Schedule(o)
	if len(a) == 0 || len(a) != len(b) {
		t.Fatalf("schedules of one seed: %d and %d faults", len(a), len(b))
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("fault %d: %v and %v", i, a[i], b[i])
		}
	}
	coordDown := map[int]bool{}
	memberBusy := map[int]bool{}
	var rollingUntil time.Duration
	for i, f := range a {
		if (f.Kind == CoordinatorKill || f.Kind == CoordinatorIsolate) && f.At < rollingUntil {
			t.Fatalf("%v inside a rolling restart's window", f)
		}
		if f.At < 0 || f.At > o.Duration || (i > 0 && f.At < a[i-1].At) {
			t.Fatalf("fault %v out of order or range", f)
		}
		switch f.Kind {
		case CoordinatorKill, CoordinatorIsolate:
			if coordDown[f.Target] {
				t.Fatalf("%v: coordinator already in a fault", f)
			}
			coordDown[f.Target] = true
			if len(coordDown) >= o.Coordinators {
				t.Fatalf("%v: every coordinator down or cut off", f)
			}
		case CoordinatorRestart, CoordinatorReconnect:
			delete(coordDown, f.Target)
		case RollingRestart:
			if len(coordDown) > 0 {
				t.Fatalf("%v while coordinators %v are in a fault", f, coordDown)
			}
			rollingUntil = f.At + time.Duration(o.Coordinators)*rollingStep
		case MemberCrash, MemberPartition:
			if memberBusy[f.Target] {
				t.Fatalf("%v: member already in a fault", f)
			}
			memberBusy[f.Target] = true
		case MemberRestart, MemberHeal:
			delete(memberBusy, f.Target)
		}
	}
	if len(coordDown)+len(memberBusy) > 0 {
		t.Errorf("faults still open at the end: coordinators %v members %v", coordDown, memberBusy)
	}
	kinds := map[string]bool{}
	for seed := range int64(5) {
		o.Seed = seed
		for _, f := range Schedule(o) {
			kinds[f.Kind] = true
		}
	}
	for _, k := range []string{CoordinatorKill, CoordinatorIsolate, RollingRestart, RedisKill, MemberCrash, MemberPartition, Scale, ShardPause, LiveReset} {
		if !kinds[k] {
			t.Errorf("no %s in 60 s of seeds 0-4", k)
		}
	}
	o.Store = coordproc.StoreJDBC
	for _, f := range Schedule(o) {
		if f.Kind == RedisKill {
			t.Fatalf("Redis fault on the jdbc store: %v", f)
		}
	}
}

func TestEpochViolationsOrderAnswersBySendAndReceipt(t *testing.T) {
	ans := func(member string, sent, recv time.Duration, ge, me int64) answer {
		return answer{member: member, req: member, sent: sent, recv: recv,
			resp: contract.HeartbeatResponse{Status: contract.StatusOK, GroupEpoch: ge, AssignmentEpoch: ge, MetadataVersion: ge, MemberEpoch: me}}
	}
	concurrent := []answer{ans("a", 0, 10, 5, 5), ans("b", 1, 9, 4, 4)}
	if v := epochViolations(concurrent); len(v) != 0 {
		t.Errorf("overlapping requests compared: %v", v)
	}
	back := []answer{ans("a", 0, 10, 5, 5), ans("b", 11, 12, 4, 4)}
	if v := epochViolations(back); len(v) != 3 { // groupEpoch, assignmentEpoch, metadataVersion
		t.Errorf("violations %v, want three", v)
	}
	member := []answer{ans("a", 0, 10, 5, 5), ans("a", 11, 12, 5, 4), ans("b", 13, 14, 5, 1)}
	if v := epochViolations(member); len(v) != 1 || v[0].Members[0] != "a" {
		t.Errorf("violations %v, want a's member epoch", v)
	}
	rejected := []answer{ans("a", 0, 10, 5, 5), {member: "b", sent: 11, recv: 12, resp: contract.HeartbeatResponse{Status: contract.StatusUnknownMemberID}}}
	if v := epochViolations(rejected); len(v) != 0 {
		t.Errorf("rejected answer compared: %v", v)
	}
}

func TestAdminViolations(t *testing.T) {
	ops := []adminOp{{target: 30, code: 202, id: "r1"}, {target: 12, code: 409}, {target: 16, code: 0}}
	if v := adminViolations(ops, 24, 30, []string{"r1"}, 0); len(v) != 0 {
		t.Errorf("kept change reported: %v", v)
	}
	if v := adminViolations(ops, 24, 16, []string{"r1", "r2"}, 0); len(v) != 0 {
		t.Errorf("unanswered later change reported: %v", v)
	}
	if v := adminViolations(ops, 24, 24, nil, 0); len(v) != 2 {
		t.Errorf("lost change and missing migration: %v", v)
	}
}

// The handling oracle of the real members fires on two processes handling
// one entry at overlapping times, on a key's first deliveries out of
// order within one process's tenure, and on entries never handled.
func TestFleetOracle(t *testing.T) {
	f := &fleet{r: &run{start: time.Now()}, handled: map[string][]handling{}, written: map[string]bool{}}
	add := func(proc, id string, from, to time.Duration) {
		f.handled["p:0/"+id] = append(f.handled["p:0/"+id], handling{proc: proc, key: "k", stream: "p:0", id: id, deliveries: 1, start: from, end: to, complete: true})
	}
	f.written["p:0/1-0"], f.written["p:0/2-0"], f.written["p:0/3-0"] = true, true, true
	add("a", "2-0", 0, 10)
	add("a", "1-0", 10, 20) // after 2-0 in the same tenure
	add("b", "1-0", 15, 25) // while a handles it
	vs, figures := f.check()
	kinds := map[string]int{}
	for _, v := range vs {
		kinds[v.Kind]++
	}
	if kinds["double handling"] != 1 || kinds["key order"] != 1 || kinds["unhandled"] != 1 {
		t.Fatalf("violations %v (%s)", vs, figures)
	}
}

// The history check explains a move with the shard's next entry naming
// the new reader, recorded before the read started; an entry recorded
// after the read, one naming another member, one already used or a
// group-level one (a handover) explains nothing.
func TestHistoryViolations(t *testing.T) {
	start := time.UnixMilli(1_700_000_000_000)
	at := func(d time.Duration) contract.Instant { return contract.InstantOf(start.Add(d)) }
	entry := func(d time.Duration, shard int, to string, cause contract.MoveCause) contract.HistoryEntry {
		return contract.HistoryEntry{At: at(d), Shard: shard, ToMember: to, Cause: cause}
	}
	entries := []contract.HistoryEntry{
		entry(time.Second, 0, "m-1", contract.MoveJoin),
		entry(2*time.Second, 0, "m-2", contract.MoveJoin),
		entry(3*time.Second, 0, "m-1", contract.MoveLeaseExpired),
		entry(time.Second, 1, "m-1", contract.MoveJoin),
		entry(5*time.Second, 1, "m-2", contract.MovePause),
		{At: at(1500 * time.Millisecond), Shard: contract.GroupLevelShard, Cause: contract.MoveHandover, FromCoordinator: "c-1", ToCoordinator: "c-2"},
	}
	moves := []membersim.Handoff{
		{Shard: 0, To: "m-1", At: 1500 * time.Millisecond},
		{Shard: 0, From: "m-1", To: "m-2", At: 2500 * time.Millisecond},
		{Shard: 0, From: "m-2", To: "m-1", At: 4 * time.Second},
		{Shard: 1, To: "m-1", At: 2 * time.Second},
		{Shard: 1, From: "m-1", To: "m-2", At: 4 * time.Second}, // its entry comes later
		{Shard: 1, From: "m-2", To: "m-1", At: 6 * time.Second}, // m-1's entry is used
	}
	vs, explained := historyViolations(entries, moves, at)
	if explained != 4 || len(vs) != 2 || vs[0].Members[0] != "m-2" || vs[1].Members[0] != "m-1" {
		t.Errorf("explained %d, violations %v; want 4 and shard 1's last two moves", explained, vs)
	}
}
