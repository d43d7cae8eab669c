package group_test

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/grouptest"
)

// Property tests: random sequences of joins, protocol-following heartbeats,
// leaves, crashes, pauses, restarts, clock advances, ticks, scale changes
// and occasional misbehaviour (stale epochs, lost responses, future
// metadata versions) over 2–8 members and 1–24 shards. After every step:
//
//	(a) no shard is read by two processes whose records are ACTIVE/LEAVING
//	    (the processes' own view: what an OK response let them read);
//	(b) groupEpoch, assignmentEpoch and metadataVersion never decrease, and
//	    a member's epoch in accepted responses never decreases;
//	(c) assignmentEpoch == groupEpoch after every handler;
//	(d) g.Violations() is empty;
//	(e) replaying every record onto group.New() gives the same projections;
//	(f) the assignment history explains the targets: each shard's last
//	    entry names its target owner, with a cause.
//
// Then everybody still running heartbeats until nothing changes: the group
// must be STABLE, every live member reading exactly its target, balanced.
// The clone variant also runs every handler on group.Rebuilt(g) (derived indexes
// rebuilt from scratch) and requires identical responses, records and state.

// stats counts what the random sequences exercised (logged by each test).
var stats = map[string]int{}

type procState int

const (
	procNone    procState = iota // no process (never started, crashed, or left)
	procRunning                  // heartbeating
	procPaused                   // alive and reading, but not heartbeating (a zombie)
)

type world struct {
	t     *rapid.T
	c     *grouptest.Context
	ids   []string
	cls   map[string]*client
	procs map[string]procState
	// prevEpoch is the epoch a client held before its current one.
	prevEpoch map[string]int64
	maxEpoch  map[string]int64
	last      versions
	// diff runs every handler on a clone too (index drift check).
	diff bool
	// scale enables scale/rollback/drain operations.
	scale bool
	seq   int
	log   []string
	// sent keeps each member's recent requests, for delayed duplicates.
	sent map[string][]contract.HeartbeatRequest
}

func newWorld(t *rapid.T, members, shardCount int, diff, scale bool) *world {
	w := &world{t: t, c: grouptest.New(t, shardCount), cls: map[string]*client{}, procs: map[string]procState{},
		prevEpoch: map[string]int64{}, maxEpoch: map[string]int64{}, diff: diff, scale: scale,
		sent: map[string][]contract.HeartbeatRequest{}}
	s := &w.c.Settings
	s.MemberLeaseTTL = rapid.SampledFrom([]time.Duration{4 * time.Second, 10 * time.Second}).Draw(t, "lease")
	s.RebalanceTimeout = rapid.SampledFrom([]time.Duration{5 * time.Second, 20 * time.Second, time.Minute}).Draw(t, "rebalance timeout")
	s.StaleMemberRetention = rapid.SampledFrom([]time.Duration{0, 15 * time.Second, time.Minute, 10 * time.Minute}).Draw(t, "retention")
	s.DrainCheck = rapid.Bool().Draw(t, "drain check")
	s.HistoryMaxEntries = 1 << 20 // the whole run: (f) reads every change
	for i := 0; i < members; i++ {
		w.ids = append(w.ids, fmt.Sprintf("m%d", i))
	}
	w.last = versionsOf(w.c.Group)
	return w
}

func (w *world) logf(format string, args ...any) {
	w.log = append(w.log, fmt.Sprintf("t=%d ", int64(w.c.Now-grouptest.Start))+fmt.Sprintf(format, args...))
}

func (w *world) fail(format string, args ...any) {
	w.t.Helper()
	tail := w.log
	if len(tail) > 60 {
		tail = tail[len(tail)-60:]
	}
	w.t.Fatalf("%s\nlast steps:\n  %s", fmt.Sprintf(format, args...), strings.Join(tail, "\n  "))
}

// clone returns a copy of the group for the differential check, or nil.
func (w *world) clone() *group.Group {
	if !w.diff {
		return nil
	}
	return group.Rebuilt(w.c.Group)
}

// compare checks the clone ran the handler like the group.
func (w *world) compare(cl *group.Group, what string, a, b any, ra, rb []group.Record) {
	w.t.Helper()
	if cl == nil {
		return
	}
	if !reflect.DeepEqual(a, b) {
		w.fail("%s: clone answered differently:\n group %+v\n clone %+v", what, a, b)
	}
	if !reflect.DeepEqual(ra, rb) {
		w.fail("%s: clone produced different records:\n group %+v\n clone %+v", what, ra, rb)
	}
	if err := grouptest.SameGroup(w.c.Group, cl); err != nil {
		w.fail("%s: clone state differs: %v", what, err)
	}
}

// heartbeat sends req for its member and returns the response.
func (w *world) heartbeat(req contract.HeartbeatRequest, what string) contract.HeartbeatResponse {
	w.t.Helper()
	w.seq++
	req.ProtocolVersion = 1
	req.RequestID = fmt.Sprintf("r%d", w.seq)
	req.RuntimeConsumerCapacity = &contract.Capacity{RuntimeMaxConcurrency: 1, AvailableConcurrency: 1}
	if err := group.ValidateHeartbeat(&req, w.c.Settings); err != nil {
		w.fail("invalid heartbeat %+v: %v", req, err)
	}
	switch {
	case req.MemberEpoch == 0:
		// A new process: duplicates come from this one only. (A delayed
		// duplicate of an older process's request, or of a leave, cannot
		// be told from a new one: the protocol's unsupported duplicate ids, docs/protocol.md improvement 8.)
		if what != "duplicate" {
			w.sent[req.MemberID] = []contract.HeartbeatRequest{req}
		}
	case what != "duplicate" && req.MemberEpoch > 0:
		w.sent[req.MemberID] = append(w.sent[req.MemberID], req)
		if n := len(w.sent[req.MemberID]); n > 8 {
			w.sent[req.MemberID] = w.sent[req.MemberID][n-8:]
		}
	}
	cl := w.clone()
	res := w.c.Group.Heartbeat(w.c.Now, w.c.Settings, &req)
	resp := res.Answer
	w.c.Records = append(w.c.Records, res.Records...)
	countRecords(res.Records)
	if cl != nil {
		res2 := cl.Heartbeat(w.c.Now, w.c.Settings, &req)
		w.compare(cl, what, resp, res2.Answer, res.Records, res2.Records)
	}
	w.logf("%s %s epoch=%d mv=%d owned=%v revoking=%v → %s epoch=%d assigned=%v pending=%v (G=%d V=%d)",
		what, req.MemberID, req.MemberEpoch, req.MetadataVersion, req.OwnedShards, revokedShards(req), resp.Status,
		resp.MemberEpoch, resp.Assignment.AssignedShards, resp.Assignment.PendingShards, resp.GroupEpoch, resp.MetadataVersion)
	if what != "duplicate" { // an old request may well be refused now
		w.checkResponse(req, resp)
	}
	stats[what+"→"+string(resp.Status)]++
	return resp
}

func revokedShards(req contract.HeartbeatRequest) []int {
	var out []int
	for _, r := range req.RevokingShards {
		out = append(out, r.Shard.ShardIndex)
	}
	return out
}

func (w *world) checkResponse(req contract.HeartbeatRequest, resp contract.HeartbeatResponse) {
	w.t.Helper()
	switch resp.Status {
	case contract.StatusRetry:
		w.fail("RETRY emitted by the domain")
	case contract.StatusInvalidRequest, contract.StatusUnsupportedProtocol:
		// The simulated clients never send an epoch above the stored one,
		// epoch 0 with shards, or epochs below −1.
		w.fail("%s answered %s", req.MemberID, resp.Status)
	case contract.StatusOK, contract.StatusRevokePending, contract.StatusSyncMetadata:
		// The answer carries the stored epoch and records what was granted;
		// assigned ∪ pending is the member's target.
		m := w.c.Group.Members[req.MemberID]
		if m == nil || m.MemberEpoch != resp.MemberEpoch || !m.GrantedAssignment.Equal(resp.Assignment.AssignedShards) {
			w.fail("%s answered %+v but its record is %+v", req.MemberID, resp, m)
		}
		if all := resp.Assignment.AssignedShards.Union(resp.Assignment.PendingShards); !all.Equal(w.c.Group.Targets[req.MemberID]) {
			w.fail("%s: assigned ∪ pending = %v, target %v", req.MemberID, all, w.c.Group.Targets[req.MemberID])
		}
		if resp.GroupEpoch != resp.AssignmentEpoch || resp.MetadataVersion != resp.Assignment.MetadataVersion {
			w.fail("accepted response with inconsistent versions %+v", resp)
		}
		if resp.MemberEpoch > 0 {
			if resp.MemberEpoch < w.maxEpoch[req.MemberID] {
				w.fail("%s's epoch went back from %d to %d", req.MemberID, w.maxEpoch[req.MemberID], resp.MemberEpoch)
			}
			w.maxEpoch[req.MemberID] = resp.MemberEpoch
		}
		if resp.Assignment.AssignedShards.Intersect(resp.Assignment.PendingShards) != nil {
			w.fail("assigned and pending overlap: %+v", resp.Assignment)
		}
	}
}

// beat sends the client's regular heartbeat and applies the answer.
func (w *world) beat(id, what string) contract.HeartbeatResponse {
	w.t.Helper()
	cl := w.cls[id]
	req := cl.request()
	resp := w.heartbeat(req, what)
	w.apply(cl, req, resp)
	return resp
}

// apply hands the response to the client, tracking its previous epoch.
func (w *world) apply(cl *client, req contract.HeartbeatRequest, resp contract.HeartbeatResponse) {
	before := cl.epoch()
	cl.handle(req, resp, w.c.Now)
	if cl.epoch() != before && before > 0 {
		w.prevEpoch[cl.id] = before
	}
	if cl.st.Done() {
		w.procs[cl.id] = procNone
	}
}

func (w *world) tick() {
	w.t.Helper()
	cl := w.clone()
	recs := w.c.Group.Tick(w.c.Now, w.c.Settings).Records
	w.c.Records = append(w.c.Records, recs...)
	countRecords(recs)
	if cl != nil {
		recs2 := cl.Tick(w.c.Now, w.c.Settings).Records
		w.compare(cl, "tick", nil, nil, recs, recs2)
	}
	w.logf("tick (%d records, G=%d V=%d)", len(recs), w.c.Group.GroupEpoch, w.c.Group.MetadataVersion)
}

func (w *world) startScale(n int) {
	w.t.Helper()
	w.seq++
	id := fmt.Sprintf("reshard-%d", w.seq)
	req := contract.ScaleRequest{TargetShardCount: &n, RequestedBy: "test"}
	cl := w.clone()
	res := w.c.Group.StartScale(w.c.Now, w.c.Settings, req, id)
	m, err := res.Answer, res.Err
	w.c.Records = append(w.c.Records, res.Records...)
	if cl != nil {
		res2 := cl.StartScale(w.c.Now, w.c.Settings, req, id)
		w.compare(cl, "start scale", []any{m, fmt.Sprint(err)}, []any{res2.Answer, fmt.Sprint(res2.Err)}, res.Records, res2.Records)
	}
	w.logf("start scale to %d → %+v %v", n, m, err)
	if err != nil || m.State != group.MigrationPreparing {
		return
	}
	cl = w.clone()
	id = m.ReshardingID
	res = w.c.Group.ActivateScale(w.c.Now, w.c.Settings, id)
	m, err = res.Answer, res.Err
	w.c.Records = append(w.c.Records, res.Records...)
	countRecords(res.Records)
	if cl != nil {
		res2 := cl.ActivateScale(w.c.Now, w.c.Settings, id)
		w.compare(cl, "activate scale", []any{m, fmt.Sprint(err)}, []any{res2.Answer, fmt.Sprint(res2.Err)}, res.Records, res2.Records)
	}
	w.logf("activate → %+v %v (G=%d)", m, err, w.c.Group.GroupEpoch)
}

func (w *world) rollback() {
	w.t.Helper()
	if w.c.Group.ActiveReshardingID == nil {
		return
	}
	id := *w.c.Group.ActiveReshardingID
	req := contract.RollbackRequest{RequestedBy: "test", Reason: "test"}
	cl := w.clone()
	res := w.c.Group.Rollback(w.c.Now, w.c.Settings, id, req)
	w.c.Records = append(w.c.Records, res.Records...)
	if cl != nil {
		res2 := cl.Rollback(w.c.Now, w.c.Settings, id, req)
		w.compare(cl, "rollback", []any{res.Answer, fmt.Sprint(res.Err)}, []any{res2.Answer, fmt.Sprint(res2.Err)}, res.Records, res2.Records)
	}
	w.logf("rollback %s → %+v %v", id, res.Answer, res.Err)
}

func (w *world) confirmDrain() {
	w.t.Helper()
	id, _, ok := w.c.Group.PendingDrain()
	if !ok {
		return
	}
	cl := w.clone()
	recs := w.c.Group.ConfirmDrain(w.c.Now, w.c.Settings, id).Records
	w.c.Records = append(w.c.Records, recs...)
	countRecords(recs)
	if cl != nil {
		recs2 := cl.ConfirmDrain(w.c.Now, w.c.Settings, id).Records
		w.compare(cl, "confirm drain", nil, nil, recs, recs2)
	}
	w.logf("confirm drain %s (%d records)", id, len(recs))
}

// check runs the per-step properties (a)–(e).
func (w *world) check() {
	w.t.Helper()
	g := w.c.Group
	// (a) Safety, from the processes' own view: a process (running or
	// paused) reads what it believes it owns until its local lease lapses,
	// whatever the coordinator has decided about it meanwhile.
	readers := map[int]string{}
	for _, id := range w.ids {
		cl := w.cls[id]
		if w.procs[id] == procNone || cl == nil || w.c.Now >= cl.leaseEnd() {
			continue
		}
		for _, s := range cl.reading() {
			if other, dup := readers[s]; dup {
				w.fail("shard %d read by %s and %s (records %+v / %+v)", s, other, id, g.Members[other], g.Members[id])
			}
			readers[s] = id
		}
	}
	// (b) Versions never decrease.
	now := versionsOf(g)
	if now.G < w.last.G || now.A < w.last.A || now.V < w.last.V {
		w.fail("versions went back from %+v to %+v", w.last, now)
	}
	w.last = now
	// (c), (d), (e).
	if err := grouptest.CheckGroup(g, w.c.Records); err != nil {
		w.fail("%v", err)
	}
	// (f) The history explains every target change.
	if err := explainsTargets(g); err != nil {
		w.fail("%v", err)
	}
}

// step draws and runs one operation.
func (w *world) step() {
	t := w.t
	w.lapse()
	id := rapid.SampledFrom(w.ids).Draw(t, "member")
	cl, proc := w.cls[id], w.procs[id]
	running := proc == procRunning
	leaving := running && cl.st.Leaving()
	op := rapid.IntRange(0, 99).Draw(t, "op")
	switch {
	case op < 5: // a slow client finishes draining (now and then)
		if proc != procNone && len(cl.draining()) > 0 && rapid.IntRange(0, 2).Draw(t, "finish") == 0 {
			cl.finishDrain()
			w.logf("%s finished draining", id)
		}
	case op < 35: // regular heartbeat (or start a process)
		switch proc {
		case procNone: // a new process, which may remember an old metadata version
			cl = newClient(id)
			cl.slow = rapid.IntRange(0, 2).Draw(t, "slow") == 0
			w.cls[id], w.procs[id] = cl, procRunning
			req := cl.request()
			req.MetadataVersion = rapid.Int64Range(0, w.c.Group.MetadataVersion).Draw(t, "join mv")
			w.apply(cl, req, w.heartbeat(req, "join"))
		case procRunning:
			w.beat(id, "beat")
		case procPaused:
			w.procs[id] = procRunning
			w.beat(id, "resume")
		}
	case op < 50:
		d := rapid.IntRange(0, 5000).Draw(t, "ms")
		if rapid.IntRange(0, 9).Draw(t, "long") == 0 {
			d = rapid.IntRange(0, 20000).Draw(t, "long ms")
		}
		w.c.Now += contract.Instant(d)
		w.logf("advance %d ms", d)
	case op < 58:
		w.tick()
	case op < 63: // leave: stop reading, drain, send −1
		if running && !leaving {
			cl.leave()
			if cl.st.Done() { // never joined, nothing in flight: nothing to leave
				w.procs[id] = procNone
				w.logf("%s left without a heartbeat", id)
			} else {
				w.beat(id, "leave")
			}
		}
	case op < 67: // crash: the process is gone, it reads nothing
		if proc != procNone {
			w.procs[id] = procNone
			w.logf("crash %s", id)
		}
	case op < 71: // pause: keeps reading, stops heartbeating
		if running && !leaving {
			w.procs[id] = procPaused
			w.logf("pause %s", id)
		}
	case op < 75: // restart: a new process with epoch 0
		if running {
			cl.restart()
			w.beat(id, "restart")
		}
	case op < 79: // lost response: the server processed it, the client heard nothing
		if running {
			req := cl.request()
			w.heartbeat(req, "lost")
		}
	case op < 82: // delayed duplicate: an old request arrives again, its answer is lost
		if old := w.sent[id]; len(old) > 0 {
			w.heartbeat(old[rapid.IntRange(0, len(old)-1).Draw(t, "duplicate")], "duplicate")
		}
	case op < 87: // stale epoch: the client sends its previous epoch
		// Only a client in the group (epoch > 0) has reports to send with
		// it: one at epoch 0 is rejoining and its request carries no
		// reports, so giving it an old epoch would make a request no
		// client sends (nothing owned, nothing revoking, while it still
		// drains what it read before its reset).
		if running && !leaving && cl.epoch() > 0 && w.prevEpoch[id] > 0 && w.prevEpoch[id] != cl.epoch() {
			req := cl.request()
			req.MemberEpoch = w.prevEpoch[id]
			resp := w.heartbeat(req, "stale")
			w.apply(cl, req, resp)
		}
	case op < 90: // future metadata version
		if running && !leaving {
			req := cl.request()
			req.MetadataVersion = w.c.Group.MetadataVersion + rapid.Int64Range(1, 3).Draw(t, "ahead")
			resp := w.heartbeat(req, "future")
			w.apply(cl, req, resp)
		}
	default:
		if !w.scale {
			w.beatAll()
			return
		}
		switch rapid.IntRange(0, 3).Draw(t, "admin") {
		case 0, 1:
			w.startScale(rapid.IntRange(0, 24).Draw(t, "shards"))
		case 2:
			w.rollback()
		case 3:
			w.confirmDrain()
		}
	}
	w.check()
}

// countRecords adds the time-driven and admin events in recs to stats.
func countRecords(recs []group.Record) {
	for _, r := range recs {
		switch r := r.(type) {
		case group.MemberRecord:
			if st := r.Member.State; st == group.MemberFenced || st == group.MemberExpired {
				stats["record "+string(st)]++
			}
		case group.MemberRemovedRecord:
			stats["record pruned"]++
		case group.MetaRecord:
			if id := r.Meta.ActiveReshardingID; id != nil {
				stats["migration "+string(r.Meta.Migrations[*id].State)]++
			}
		}
	}
}

// lapse makes every process whose local lease has run out stop reading.
func (w *world) lapse() {
	for _, id := range w.ids {
		if cl := w.cls[id]; cl != nil && w.procs[id] != procNone {
			cl.lapse(w.c.Now)
		}
	}
}

// beatAll lets every running process heartbeat once.
func (w *world) beatAll() {
	for _, id := range w.ids {
		if w.procs[id] == procRunning {
			w.beat(id, "beat")
			w.check()
		}
	}
}

// settle resumes paused processes, then lets everybody heartbeat once a
// second until a whole round changes nothing but liveness; it then checks
// convergence.
func (w *world) settle() {
	w.t.Helper()
	for _, id := range w.ids {
		if w.procs[id] == procPaused {
			w.procs[id] = procRunning
		}
	}
	quiet := 0
	finish := func() {
		for _, id := range w.ids {
			if w.procs[id] == procRunning && len(w.cls[id].draining()) > 0 {
				w.cls[id].finishDrain()
				w.logf("%s finished draining", id)
			}
		}
	}
	for round := 0; round < 200 && quiet < 3; round++ {
		w.c.Now += 1000
		w.lapse()
		n := len(w.c.Records)
		v := versionsOf(w.c.Group)
		w.beatAll()
		finish()
		w.tick()
		w.confirmDrain()
		w.check()
		changed := versionsOf(w.c.Group) != v
		for _, r := range w.c.Records[n:] {
			if mr, ok := r.(group.MemberRecord); !ok || !mr.LivenessOnly {
				changed = true
			}
		}
		for _, id := range w.c.Group.LiveMemberIDs() {
			if w.procs[id] != procRunning {
				changed = true // a dead member's lease has yet to expire
			}
		}
		for _, m := range w.c.Group.Members {
			if m.Holds() && m.RebalanceDeadlineAt != 0 {
				changed = true // an owner has yet to release or be fenced
			}
			if m.State == group.MemberFenced && m.Holds() {
				changed = true // a fenced member's lease has yet to run out
			}
		}
		if changed {
			quiet = 0
		} else {
			quiet++
		}
	}
	if quiet < 3 {
		w.fail("the group never settled")
	}
	g := w.c.Group
	if err := targetsProblem(g); err != nil {
		w.fail("after settling: %v", err)
	}
	live := g.LiveMemberIDs()
	if len(live) > 0 && g.State != group.GroupStable {
		w.fail("after settling: state %s, targets %v", g.State, g.Targets)
	}
	for _, id := range w.ids {
		running := w.procs[id] == procRunning
		m := g.Members[id]
		if !running {
			continue
		}
		if m == nil || m.State != group.MemberActive {
			w.fail("after settling: running process %s (epoch %d) has record %+v", id, w.cls[id].epoch(), m)
		}
		if !m.CurrentAssignment.Equal(g.Targets[id]) || !w.cls[id].reading().Equal(g.Targets[id]) {
			w.fail("after settling: %s current %v, reads %v, target %v", id, m.CurrentAssignment, w.cls[id].reading(), g.Targets[id])
		}
	}
	for _, id := range live {
		if w.procs[id] != procRunning {
			w.fail("after settling: %s is live without a process", id)
		}
	}
}

func runWorld(t *rapid.T, diff, scale bool) {
	members := rapid.IntRange(2, 8).Draw(t, "members")
	shardCount := rapid.IntRange(1, 24).Draw(t, "shards")
	w := newWorld(t, members, shardCount, diff, scale)
	steps := rapid.IntRange(1, 200).Draw(t, "steps")
	for i := 0; i < steps; i++ {
		w.step()
	}
	w.settle()
}

func TestProperty_ProtocolSafetyAndConvergence(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) { runWorld(t, false, false) })
	logStats(t)
}

func TestProperty_ProtocolWithResharding(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) { runWorld(t, false, true) })
	logStats(t)
}

// logStats logs (with -v) how often each operation met each status.
func logStats(t *testing.T) {
	keys := make([]string, 0, len(stats))
	for k := range stats {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%d ", k, stats[k])
	}
	t.Logf("exercised: %s", b.String())
	clear(stats)
}

// TestProperty_CloneBehavesIdentically is the differential check of the
// derived indexes: every handler also runs on group.Rebuilt(g), whose indexes are
// rebuilt from the records, and must answer and change state identically.
func TestProperty_CloneBehavesIdentically(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) { runWorld(t, true, true) })
	logStats(t)
}
