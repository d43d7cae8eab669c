package core_test

import (
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"testing"
	"time"
	"weak"

	"github.com/redis-stream-coordinator/coordinator/actors/core"
	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/grouptest"
	"github.com/redis-stream-coordinator/coordinator/persistence"
)

// The core is driven here as the actor drives it, without protoactor or a
// store: entries go in with Step, each Ready is checked, and the store's
// answers come back with Advance. Heartbeats are answered through a string
// (their name).

var t0 = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

var (
	key        = group.Key{StreamPrefix: "orders", ConsumerGroup: "billing"}
	errNotOwns = errors.New("not the owner")
)

type testCore = core.Core[string]

func config() core.Config {
	return core.Config{Key: key, Settings: group.DefaultSettings(), GroupCommit: true, MaxBatch: 100,
		CommitAttempts: 3, NotOwner: errNotOwns}
}

// created is a stored group of four shards without members.
func created(t *testing.T) *group.Group {
	t.Helper()
	g := group.New()
	four := 4
	if err := g.Create(contract.InstantOf(t0), group.DefaultSettings(), key,
		contract.CreateRequest{InitialShardCount: &four, RequestedBy: "test"}).Err; err != nil {
		t.Fatal(err)
	}
	return g
}

// loaded returns a core holding created(t) at revision 1.
func loaded(t *testing.T, cfg core.Config) *testCore {
	t.Helper()
	c := core.New[string](cfg)
	load(t, c, core.Loaded{Group: created(t), Rev: 1, Now: t0})
	return c
}

// load asks c for a load as the actor does (Step(Load)) and reports out.
func load(t *testing.T, c *testCore, out core.Loaded) {
	t.Helper()
	c.Step(core.Load{})
	if rd := c.Ready(); !rd.Load {
		t.Fatalf("Step(Load): %+v, want a load", rd)
	}
	c.Advance(out)
	if rd := c.Ready(); out.Err == nil && (!rd.Changed || len(rd.Records) != 0) {
		t.Fatalf("a load: %+v, want committed changed without records", rd)
	}
}

// join is a member's first heartbeat, next the one it sends after an
// answer (internal/testkit/grouptest).
var join, next = grouptest.JoinRequest, grouptest.NextRequest

func beat(c *testCore, at time.Time, to string, req *contract.HeartbeatRequest) {
	c.Step(core.Heartbeat[string]{Now: at, Req: req, To: to})
}

// flush steps the queued flush and returns its Ready.
func flush(c *testCore, at time.Time) core.Ready[string] {
	c.Step(core.Flush{Now: at, Queued: true})
	return c.Ready()
}

// answer returns the one answer of rd, to to.
func answer(t *testing.T, rd core.Ready[string], to string) core.Answer[string] {
	t.Helper()
	if len(rd.Answers) != 1 || rd.Answers[0].To != to {
		t.Fatalf("answers %+v, want one to %s", rd.Answers, to)
	}
	return rd.Answers[0]
}

// joined returns a core where m-1 joined and acknowledged (stored at rev 3),
// and m-1's last answer.
func joined(t *testing.T) (*testCore, contract.HeartbeatResponse) {
	t.Helper()
	return joinedWith(t, config())
}

func joinedWith(t *testing.T, cfg core.Config) (*testCore, contract.HeartbeatResponse) {
	t.Helper()
	c := loaded(t, cfg)
	beat(c, t0, "m-1", join("m-1"))
	flush(c, t0)
	c.Advance(core.Written{Rev: 2})
	resp := answer(t, c.Ready(), "m-1").Resp
	at := t0.Add(time.Second)
	beat(c, at, "m-1", next("m-1", resp))
	flush(c, at)
	c.Advance(core.Written{Rev: 3})
	return c, answer(t, c.Ready(), "m-1").Resp
}

func TestCoreWritesAChangeAndAnswersOnlyOnceStored(t *testing.T) {
	c := loaded(t, config())
	beat(c, t0, "m-1", join("m-1"))
	rd := c.Ready()
	if len(rd.Answers) != 0 || rd.Flush != core.FlushQueued || rd.Write != nil {
		t.Fatalf("a join parked: %+v, want a queued flush and no answer", rd)
	}
	if c.Pending() != 1 {
		t.Fatalf("pending %d", c.Pending())
	}
	rd = flush(c, t0)
	if rd.Write == nil || rd.Write.Expected != 1 || len(rd.Answers) != 0 || rd.Changed {
		t.Fatalf("flush: %+v, want a write at rev 1 and nothing answered", rd)
	}
	if c.Committed().Members["m-1"] != nil {
		t.Fatal("committed changed before the write")
	}
	w := rd.Write
	c.Advance(core.Written{Rev: 2})
	if !reflect.ValueOf(*w).IsZero() {
		t.Fatal("the core still holds the written mutation (a group's last write kept alive until its next)")
	}
	rd = c.Ready()
	if !rd.Changed || len(rd.Records) == 0 || rd.Flushed == nil || !rd.Flushed.Wrote || rd.Flushed.Err != nil {
		t.Fatalf("after the write: %+v", rd)
	}
	if a := answer(t, rd, "m-1"); a.Err != nil || a.Resp.Status != contract.StatusOK {
		t.Fatalf("answer %+v", a)
	}
	if c.Rev() != 2 || c.Committed().Members["m-1"] == nil || c.Pending() != 0 || c.HasReady() {
		t.Fatalf("after the flush: rev %d, pending %d", c.Rev(), c.Pending())
	}
}

func TestCoreAnswersARenewalAtOnceAndNeverWritesIt(t *testing.T) {
	c, resp := joined(t)
	lease := c.Committed().Members["m-1"].MemberLeaseExpiresAt
	at := t0.Add(2 * time.Second)
	beat(c, at, "m-1", next("m-1", resp))
	rd := c.Ready()
	if rd.Flush != core.FlushQueued || len(rd.Answers) != 0 {
		// A renewal produces a liveness-only record: parked, not written.
		t.Fatalf("renewal: %+v", rd)
	}
	rd = flush(c, at)
	if rd.Write != nil || rd.Flushed == nil || rd.Flushed.Wrote {
		t.Fatalf("a renewal is written: %+v", rd)
	}
	answer(t, rd, "m-1")
	if got := c.Committed().Members["m-1"].MemberLeaseExpiresAt; got <= lease || c.Rev() != 3 {
		t.Fatalf("renewed lease %v (was %v), rev %d", got, lease, c.Rev())
	}
}

func TestCoreAnswersAtOnceWhatChangesNothing(t *testing.T) {
	c := loaded(t, config())
	req := join("m-1")
	req.ProtocolVersion = 2
	beat(c, t0, "m-1", req)
	rd := c.Ready()
	if a := answer(t, rd, "m-1"); a.Resp.Status != contract.StatusUnsupportedProtocol || rd.Flush != core.NoFlush {
		t.Fatalf("rejected heartbeat: %+v", rd)
	}
}

func TestCoreRerunsTheBatchOnFreshStateAfterAConflict(t *testing.T) {
	c := loaded(t, config())
	beat(c, t0, "m-2", join("m-2"))
	c.Ready()
	rd := flush(c, t0)
	if rd.Write == nil {
		t.Fatal("no write")
	}
	// Meanwhile the store got m-1 owning every shard.
	other, _ := joined(t)
	c.Advance(core.Written{Err: fmt.Errorf("commit: %w", persistence.ErrConflict)})
	rd = c.Ready()
	if !rd.Load || len(rd.Conflicts) != 1 || rd.Conflicts[0] != (core.Conflict{Op: core.OpFlush, Attempt: 1}) || len(rd.Answers) != 0 {
		t.Fatalf("after a conflict: %+v, want a load and a reported conflict", rd)
	}
	c.Advance(core.Loaded{Group: other.Committed().Clone(), Rev: other.Rev(), Now: t0})
	rd = c.Ready()
	if !rd.Changed || rd.Write == nil || rd.Write.Expected != other.Rev() {
		t.Fatalf("after the reload: %+v, want the re-run batch written at rev %d", rd, other.Rev())
	}
	c.Advance(core.Written{Rev: other.Rev() + 1})
	a := answer(t, c.Ready(), "m-2")
	if len(a.Resp.Assignment.AssignedShards) != 0 {
		t.Fatalf("re-run on fresh state: m-2 is assigned %v while m-1 owns every shard", a.Resp.Assignment.AssignedShards)
	}
}

func TestCoreGivesUpAfterCommitAttempts(t *testing.T) {
	c := loaded(t, config())
	beat(c, t0, "m-1", join("m-1"))
	c.Ready()
	rd := flush(c, t0)
	for attempt := 1; attempt < 3; attempt++ {
		c.Advance(core.Written{Err: persistence.ErrConflict})
		if rd = c.Ready(); !rd.Load {
			t.Fatalf("attempt %d: %+v, want a load", attempt, rd)
		}
		c.Advance(core.Loaded{Group: created(t), Rev: 1, Now: t0})
		if rd = c.Ready(); rd.Write == nil {
			t.Fatalf("attempt %d: no write after the reload", attempt)
		}
	}
	c.Advance(core.Written{Err: persistence.ErrConflict})
	rd = c.Ready()
	if rd.Load || rd.Flushed == nil || !errors.Is(rd.Flushed.Err, contract.ErrStateConflict) {
		t.Fatalf("third conflict: %+v, want the flush to fail with ErrStateConflict", rd)
	}
	if a := answer(t, rd, "m-1"); !errors.Is(a.Err, contract.ErrNotStored) {
		t.Fatalf("answer %+v, want ErrNotStored", a)
	}
}

func TestCoreFailureOutcomes(t *testing.T) {
	cases := []struct {
		name       string
		err        error
		failClosed bool
		deposed    bool
		// asIs: the heartbeat gets the error as it is, not marked
		// contract.ErrNotStored.
		asIs bool
	}{
		{"unavailable: revert, not stored", persistence.ErrUnavailable, false, false, false},
		{"unknown outcome: reload before the next request", errors.New("connection reset"), true, false, false},
		{"corrupt: fails closed, answered with the error", persistence.ErrCorrupt, true, false, true},
		{"deposed: the process lost the group", persistence.ErrNotOwner, false, true, false},
		{"refused by another owner: the error", fmt.Errorf("fence: %w", errNotOwns), true, false, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := loaded(t, config())
			beat(c, t0, "m-1", join("m-1"))
			c.Ready()
			flush(c, t0)
			c.Advance(core.Written{Err: tc.err})
			rd := c.Ready()
			if rd.Flushed == nil || rd.Flushed.Err == nil || rd.Flushed.Wrote || rd.Changed {
				t.Fatalf("flush %+v, want a failure that changed nothing", rd.Flushed)
			}
			if (c.Failed() != nil) != tc.failClosed || rd.Deposed != tc.deposed {
				t.Fatalf("failed %v, deposed %v", c.Failed(), rd.Deposed)
			}
			if a := answer(t, rd, "m-1"); !errors.Is(a.Err, tc.err) || errors.Is(a.Err, contract.ErrNotStored) == tc.asIs {
				t.Fatalf("answer %+v", a)
			}
			if c.Committed().Members["m-1"] != nil || c.Pending() != 0 {
				t.Fatal("a failed write left its change")
			}
			// The next entry runs on committed again: m-1 joins afresh.
			if c.Failed() != nil {
				load(t, c, core.Loaded{Group: created(t), Rev: 1, Now: t0})
			}
			beat(c, t0, "m-1", join("m-1"))
			c.Ready()
			if rd := flush(c, t0); rd.Write == nil {
				t.Fatalf("after the failure: %+v, want a write", rd)
			}
		})
	}
	// An error of no known class is reported as ErrOutcomeUnknown.
	c := loaded(t, config())
	beat(c, t0, "m-1", join("m-1"))
	c.Ready()
	flush(c, t0)
	c.Advance(core.Written{Err: errors.New("timeout")})
	if rd := c.Ready(); !errors.Is(rd.Flushed.Err, contract.ErrOutcomeUnknown) {
		t.Fatalf("flush error %v, want ErrOutcomeUnknown", rd.Flushed.Err)
	}
}

func TestCoreLoadsAFailedGroupBeforeItWrites(t *testing.T) {
	c := loaded(t, config())
	beat(c, t0, "m-1", join("m-1"))
	c.Ready()
	flush(c, t0)
	c.Advance(core.Written{Err: errors.New("timeout")}) // fails closed
	c.Ready()
	beat(c, t0, "m-2", join("m-2")) // the actor reloads first; here it did not
	c.Ready()
	rd := flush(c, t0)
	if !rd.Load || rd.Write != nil {
		t.Fatalf("flush of a failed group: %+v, want a load first", rd)
	}
	c.Advance(core.Loaded{Err: persistence.ErrUnavailable})
	rd = c.Ready()
	if a := answer(t, rd, "m-2"); !errors.Is(a.Err, contract.ErrNotStored) || c.Failed() == nil {
		t.Fatalf("load failed: answer %+v, failed %v", a, c.Failed())
	}
}

func TestCoreAnswersABatchThatWroteNothingOnlyWhileServing(t *testing.T) {
	c, resp := joined(t)
	beat(c, t0.Add(2*time.Second), "m-1", next("m-1", resp))
	c.Ready()
	c.Step(core.Flush{Now: t0, NotServing: fmt.Errorf("stopped: %w", errNotOwns)})
	rd := c.Ready()
	if a := answer(t, rd, "m-1"); !errors.Is(a.Err, errNotOwns) {
		t.Fatalf("answer %+v, want the not-serving error", a)
	}
	if rd.Changed {
		t.Fatal("an unanswered renewal was applied to committed")
	}
}

func TestCoreFlushScheduling(t *testing.T) {
	cfg := config()
	cfg.MaxBatch = 2
	c := loaded(t, cfg)
	beat(c, t0, "m-1", join("m-1"))
	if rd := c.Ready(); rd.Flush != core.FlushQueued {
		t.Fatalf("first entry: %v, want a queued flush", rd.Flush)
	}
	beat(c, t0, "m-2", join("m-2"))
	if rd := c.Ready(); rd.Flush != core.FlushNow {
		t.Fatalf("full batch: %v, want a flush now", rd.Flush)
	}
	c.Step(core.Flush{Now: t0})
	c.Ready()
	c.Advance(core.Written{Rev: 2})
	c.Ready()
	// The queued flush is still on its way: the next entry joins it.
	beat(c, t0, "m-3", join("m-3"))
	if rd := c.Ready(); rd.Flush != core.NoFlush {
		t.Fatalf("entry after a full batch: %v, want none (one is queued)", rd.Flush)
	}
	c.Step(core.Flush{Now: t0, Queued: true})
	if rd := c.Ready(); rd.Write == nil {
		t.Fatalf("queued flush: %+v, want a write", rd)
	}
	cfg.GroupCommit = false
	c = loaded(t, cfg)
	beat(c, t0, "m-1", join("m-1"))
	if rd := c.Ready(); rd.Flush != core.FlushNow {
		t.Fatalf("without group commit: %v, want a flush now", rd.Flush)
	}
	// Without group commit a flush takes the write path even for a
	// renewal (under the state mutex), and a lock failure fails the batch.
	c.Step(core.Flush{Now: t0, Err: fmt.Errorf("lock: %w", persistence.ErrLockTimeout)})
	rd := c.Ready()
	if a := answer(t, rd, "m-1"); !errors.Is(a.Err, contract.ErrNotStored) || rd.Write != nil {
		t.Fatalf("lock failure: %+v", rd)
	}
}

func TestCoreRewritesALegacyGroupWhole(t *testing.T) {
	c := core.New[string](config())
	load(t, c, core.Loaded{Group: created(t), Rev: 1, Legacy: true, Now: t0})
	beat(c, t0, "m-1", join("m-1"))
	c.Ready()
	rd := flush(c, t0)
	if rd.Write == nil || rd.Write.Kind != core.Rewrite || rd.Write.Group.Members["m-1"] == nil {
		t.Fatalf("legacy group: %+v, want the whole group", rd.Write)
	}
	c.Advance(core.Written{Rev: 2})
	c.Ready()
	beat(c, t0, "m-2", join("m-2"))
	c.Ready()
	if rd := flush(c, t0); rd.Write == nil || rd.Write.Kind != core.Update {
		t.Fatalf("after the rewrite: %+v, want a delta", rd.Write)
	}
}

func TestCoreRestartsLeasesWhenItLoads(t *testing.T) {
	writer, _ := joined(t)
	takeover := t0.Add(group.DefaultSettings().MemberLeaseTTL / 2)
	c := core.New[string](config())
	load(t, c, core.Loaded{Group: writer.Committed().Clone(), Rev: writer.Rev(), Now: takeover})
	want := contract.InstantOf(takeover.Add(group.DefaultSettings().MemberLeaseTTL))
	if got := c.Committed().Members["m-1"].LeaseEnd(); got != want {
		t.Fatalf("lease end after a takeover: %v, want takeover + TTL %v", got, want)
	}
}

func TestCoreRefusedHeartbeat(t *testing.T) {
	c := core.New[string](config())
	c.Step(core.Heartbeat[string]{Req: join("m-1"), To: "m-1", Refused: fmt.Errorf("acquire: %w", errNotOwns)})
	if a := answer(t, c.Ready(), "m-1"); !errors.Is(a.Err, errNotOwns) {
		t.Fatalf("refused by ownership: %+v", a)
	}
	c.Step(core.Heartbeat[string]{Req: join("m-1"), To: "m-1", Refused: persistence.ErrUnavailable})
	if a := answer(t, c.Ready(), "m-1"); !errors.Is(a.Err, contract.ErrNotStored) || !errors.Is(a.Err, persistence.ErrUnavailable) {
		t.Fatalf("refused by a store down: %+v, want ErrNotStored", a)
	}
}

func TestCoreTickAsksForTheDrainCheck(t *testing.T) {
	cfg := config()
	cfg.Settings.DrainCheck = true
	c, resp := joinedWith(t, cfg)
	// Scale in from 4 to 2 shards.
	command(t, c, startScale(2))
	command(t, c, core.ActivateScale{ReshardingID: "mig-1"})
	// m-1 releases shards 2 and 3; the migration drains.
	at := t0.Add(2 * time.Second)
	for i := 0; i < 3; i++ {
		req := next("m-1", resp)
		req.MetadataVersion = c.Committed().MetadataVersion
		beat(c, at, "m-1", req)
		c.Ready()
		if rd := flush(c, at); rd.Write != nil {
			c.Advance(core.Written{Rev: c.Rev() + 1})
			resp = answer(t, c.Ready(), "m-1").Resp
		} else {
			resp = answer(t, rd, "m-1").Resp
		}
	}
	if _, _, ok := c.Committed().PendingDrain(); !ok {
		t.Fatalf("no drain pending: %+v", c.Committed().MigrationList())
	}
	c.Step(core.Tick{Now: at})
	rd := c.Ready()
	if rd.DrainCheck == nil || rd.DrainCheck.Migration != "mig-1" || rd.Ticked != nil {
		t.Fatalf("tick: %+v, want a drain check of mig-1", rd)
	}
	c.Advance(core.DrainChecked{Drained: true})
	rd = c.Ready()
	if rd.Ticked == nil || !*rd.Ticked || rd.Flush != core.FlushQueued {
		t.Fatalf("after the drain check: %+v, want a changed tick parked", rd)
	}
	flush(c, at)
	c.Advance(core.Written{Rev: c.Rev() + 1})
	c.Ready()
	if m, _ := c.Committed().Migration("mig-1"); m.State == group.MigrationDraining {
		t.Fatalf("migration still %s after the confirmed drain", m.State)
	}
}

// startScale starts a scale to n shards as migration mig-1.
func startScale(n int) core.StartScale {
	return core.StartScale{Request: contract.ScaleRequest{TargetShardCount: &n, RequestedBy: "t"}, NewID: "mig-1"}
}

// command runs an admin command through the core and stores its records;
// it returns the Ready that reports its outcome.
func command(t *testing.T, c *testCore, cmd core.Command) core.Ready[string] {
	t.Helper()
	c.Step(core.Admin{Now: t0, Op: core.OpScaleGroup, Cmd: cmd})
	rd := c.Ready()
	if rd.Write == nil {
		t.Fatalf("command: %+v, want a write", rd)
	}
	next := c.Rev() + 1
	if rd.Write.Kind == core.Remove {
		next = 0
	}
	c.Advance(core.Written{Rev: next})
	rd = c.Ready()
	if rd.Done == nil || rd.Done.Err != nil || !rd.Changed {
		t.Fatalf("command outcome %+v", rd)
	}
	return rd
}

// An admin command is a typed request to the core: the core runs its
// domain handler, and its records are written as an insert while no group
// is stored, as a removal when they delete the group, and reach
// committed, and the runtime (Ready.Records), once stored; the delete
// record included. The handler's answer comes back in Ready.Done.
func TestCoreAdminCommandsCreateAndDeleteThroughTheCore(t *testing.T) {
	c := core.New[string](config())
	load(t, c, core.Loaded{Group: group.New(), Now: t0}) // not stored
	four := 4
	c.Step(core.Admin{Now: t0, Op: core.OpCreateGroup, Cmd: core.Create{Request: contract.CreateRequest{InitialShardCount: &four, RequestedBy: "t"}}})
	rd := c.Ready()
	if rd.Write == nil || rd.Write.Kind != core.Insert || rd.Write.Expected != 0 || !rd.Write.Group.Exists() {
		t.Fatalf("create: %+v, want an insert of the new group", rd.Write)
	}
	if c.Committed().Exists() {
		t.Fatal("committed changed before the insert")
	}
	if rd.Done != nil {
		t.Fatalf("create answered before its insert: %+v", rd.Done)
	}
	c.Advance(core.Written{Rev: 1})
	rd = c.Ready()
	if rd.Done == nil || rd.Done.Err != nil || !rd.Changed || len(rd.Records) == 0 || c.Rev() != 1 || c.Committed().ShardCount != 4 {
		t.Fatalf("after the insert: %+v, rev %d", rd, c.Rev())
	}
	if d := rd.Done; d.Op != core.OpCreateGroup || d.View.StreamPrefix != key.StreamPrefix || d.View.ConsumerGroup != key.ConsumerGroup || d.View.ShardCount != 4 {
		t.Fatalf("create's answer %+v, want the new group's view", d)
	}
	c.Step(core.Admin{Now: t0, Op: core.OpDeleteGroup, Cmd: core.Delete{Request: contract.DeleteRequest{RequestedBy: "t", Reason: "test"}}})
	rd = c.Ready()
	if rd.Write == nil || rd.Write.Kind != core.Remove || rd.Write.Expected != 1 {
		t.Fatalf("delete: %+v, want a removal at rev 1", rd)
	}
	c.Advance(core.Written{Rev: 0})
	rd = c.Ready()
	if rd.Done == nil || rd.Done.Err != nil || c.Committed().Exists() || c.Rev() != 0 {
		t.Fatalf("after the removal: %+v, rev %d", rd, c.Rev())
	}
	if rd.Done.View.ShardCount != 4 {
		t.Fatalf("delete's answer %+v, want the view before the delete", rd.Done.View)
	}
	if _, ok := rd.Records[len(rd.Records)-1].(group.DeletedRecord); !ok {
		t.Fatalf("records %+v, want them to end with the delete", rd.Records)
	}
}

// The core decides whether a command finds its group: a create of a
// stored group and any other command on a group not stored are refused
// with the domain's codes, writing nothing.
func TestCoreAdminCommandsNeedTheirGroup(t *testing.T) {
	c := loaded(t, config())
	c.Step(core.Admin{Now: t0, Op: core.OpCreateGroup, Cmd: core.Create{Request: contract.CreateRequest{RequestedBy: "t"}}})
	if rd := c.Ready(); rd.Done == nil || rd.Write != nil || !isCode(rd.Done.Err, contract.CodeGroupAlreadyExists) {
		t.Fatalf("create of a stored group: %+v", rd)
	}
	absent := core.New[string](config())
	load(t, absent, core.Loaded{Group: group.New(), Now: t0})
	for _, cmd := range []core.Command{
		core.Delete{Request: contract.DeleteRequest{RequestedBy: "t"}}, startScale(2), core.ActivateScale{ReshardingID: "m"},
		core.Rollback{ReshardingID: "m"}, core.Pause{}, core.Resume{}, core.StartReset{}, core.BeginApply{}, core.FinishReset{}, core.FailReset{}, core.Rebalance{},
		core.TakeOver{},
	} {
		absent.Step(core.Admin{Now: t0, Op: core.OpScaleGroup, Cmd: cmd})
		if rd := absent.Ready(); rd.Done == nil || rd.Write != nil || !isCode(rd.Done.Err, contract.CodeGroupNotFound) {
			t.Fatalf("%T on a group not stored: %+v", cmd, rd)
		}
	}
}

// isCode reports whether err is a domain error with code.
func isCode(err error, code contract.Code) bool {
	de, ok := errors.AsType[*group.Error](err)
	return ok && de.Code == code
}

func TestCoreAdminCommandRunsAgainAfterAConflict(t *testing.T) {
	c := loaded(t, config())
	c.Step(core.Admin{Now: t0, Op: core.OpScaleGroup, Cmd: startScale(2)})
	c.Ready()
	c.Advance(core.Written{Err: persistence.ErrConflict})
	rd := c.Ready()
	if rd.Done != nil || !rd.Load || len(rd.Conflicts) != 1 || rd.Conflicts[0] != (core.Conflict{Op: core.OpScaleGroup, Attempt: 1}) {
		t.Fatalf("after a conflict: %+v, want a reload and the conflict reported", rd)
	}
	// The reload finds the group at revision 5: the command runs again on
	// it and its write expects that revision.
	c.Advance(core.Loaded{Group: created(t), Rev: 5, Now: t0})
	if rd = c.Ready(); rd.Write == nil || rd.Write.Expected != 5 || len(rd.Write.Records) == 0 {
		t.Fatalf("after the reload: %+v, want the command run again and written", rd)
	}
	c.Advance(core.Written{Rev: 6})
	if rd = c.Ready(); rd.Done == nil || rd.Done.Err != nil || rd.Done.Migration.ReshardingID != "mig-1" || rd.Done.Migration.ToShardCount != 2 {
		t.Fatalf("outcome %+v", rd.Done)
	}
	if _, ok := c.Committed().Migration("mig-1"); !ok {
		t.Fatal("the stored migration is not committed")
	}
	// Conflicts on every attempt: the command fails with ErrStateConflict.
	c = loaded(t, config())
	c.Step(core.Admin{Now: t0, Op: core.OpScaleGroup, Cmd: startScale(2)})
	c.Ready()
	for attempt := 1; attempt < 3; attempt++ {
		c.Advance(core.Written{Err: persistence.ErrConflict})
		c.Ready()
		c.Advance(core.Loaded{Group: created(t), Rev: 1, Now: t0})
		c.Ready()
	}
	c.Advance(core.Written{Err: persistence.ErrConflict})
	if rd = c.Ready(); rd.Done == nil || !errors.Is(rd.Done.Err, contract.ErrStateConflict) || rd.Load || rd.Done.Migration.ReshardingID != "" {
		t.Fatalf("third conflict: %+v, want ErrStateConflict and no answer", rd.Done)
	}
	if _, ok := c.Committed().Migration("mig-1"); ok {
		t.Fatal("an unstored migration reached committed")
	}
}

func TestCoreAdminCommandRefusalsAndFailures(t *testing.T) {
	c := loaded(t, config())
	c.Step(core.Admin{Now: t0, Op: core.OpRollbackMigration, Cmd: core.Rollback{ReshardingID: "mig-9", Request: contract.RollbackRequest{RequestedBy: "t", Reason: "test"}}})
	rd := c.Ready()
	if rd.Done == nil || !isCode(rd.Done.Err, contract.CodeMigrationNotFound) || rd.Write != nil || rd.Changed {
		t.Fatalf("a refusal: %+v, want it answered, nothing written", rd)
	}
	// Working reverted: the next command starts from committed.
	command(t, c, startScale(2))
	// A lock failure ends the command before it runs.
	c.Step(core.Admin{Now: t0, Op: core.OpRollbackMigration, Err: persistence.ErrLockTimeout})
	if rd := c.Ready(); rd.Done == nil || !errors.Is(rd.Done.Err, persistence.ErrLockTimeout) || rd.Done.Op != core.OpRollbackMigration || rd.Write != nil {
		t.Fatalf("a lock failure: %+v", rd)
	}
	// A command with nothing to store (a same-count scale) writes nothing
	// and answers the domain's noop.
	c = loaded(t, config())
	c.Step(core.Admin{Now: t0, Op: core.OpScaleGroup, Cmd: startScale(4)})
	if rd := c.Ready(); rd.Done == nil || rd.Done.Err != nil || rd.Write != nil || rd.Done.Migration.ToShardCount != 4 {
		t.Fatalf("a noop: %+v", rd)
	}
}

// Check answers what a command would answer, from a copy of committed,
// changing nothing and asking for nothing.
func TestCoreCheckChangesNothing(t *testing.T) {
	c := loaded(t, config())
	if d := c.Check(t0, startScale(2)); d.Err != nil || d.Migration.ToShardCount != 2 {
		t.Fatalf("check of a scale: %+v", d)
	}
	if c.HasReady() || c.Pending() != 0 {
		t.Fatal("a check asked for something")
	}
	if _, ok := c.Committed().Migration("mig-1"); ok || c.Committed().ActiveReshardingID != nil {
		t.Fatal("a check changed committed")
	}
	command(t, c, startScale(2)) // working was not changed either
	if d := c.Check(t0, core.Create{Request: contract.CreateRequest{RequestedBy: "t"}}); !isCode(d.Err, contract.CodeGroupAlreadyExists) {
		t.Fatalf("check of a create of a stored group: %+v", d)
	}
}

// A heartbeat for a group that is not stored is answered at once as for no
// group, by the domain: UNKNOWN_MEMBER_ID for a member that rejoins, the
// envelope checks first; nothing is written and the core keeps its state.
func TestCoreAnswersAHeartbeatForAnAbsentGroup(t *testing.T) {
	c := loaded(t, config())
	rejoin := join("m-1")
	rejoin.MemberEpoch = 3
	c.Step(core.Heartbeat[string]{Now: t0, Req: rejoin, To: "m-1", Absent: true})
	rd := c.Ready()
	if a := answer(t, rd, "m-1"); a.Err != nil || a.Resp.Status != contract.StatusUnknownMemberID {
		t.Fatalf("absent group: %+v, want UNKNOWN_MEMBER_ID", a)
	}
	if rd.Write != nil || rd.Changed || c.Pending() != 0 || c.Rev() != 1 || !c.Committed().Exists() {
		t.Fatalf("absent group: %+v, want nothing written and the core unchanged", rd)
	}
	bad := join("m-1")
	bad.ProtocolVersion = 2
	c.Step(core.Heartbeat[string]{Now: t0, Req: bad, To: "m-1", Absent: true})
	if a := answer(t, c.Ready(), "m-1"); a.Err == nil && a.Resp.Status == contract.StatusUnknownMemberID {
		t.Fatalf("absent group, bad envelope: %+v, want the envelope's refusal first", a)
	}
}

// Every op has its own name: the operation label of state_conflict_total.
func TestOpNames(t *testing.T) {
	seen := map[string]core.Op{}
	for _, op := range core.Ops() {
		name := op.String()
		if name == "" || name == core.OpUnknown.String() {
			t.Errorf("op %d has no name", op)
		}
		if other, dup := seen[name]; dup {
			t.Errorf("ops %d and %d are both %q", other, op, name)
		}
		seen[name] = op
	}
	if core.OpFlush.String() != "heartbeat" || core.OpCreateGroup.String() != "create-group" || core.Op(200).String() != "unknown" {
		t.Error("op names differ from docs/protocol.md §10.1")
	}
}

func TestCoreAdvancesOnlyWhatItAskedFor(t *testing.T) {
	for name, out := range map[string]core.Outcome{
		"load":  core.Loaded{Group: group.New(), Now: t0},
		"write": core.Written{Rev: 1},
		"drain": core.DrainChecked{Drained: true},
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("an outcome nobody asked for was taken")
				}
			}()
			core.New[string](config()).Advance(out)
		})
	}
}

// The core keeps nothing of the heartbeats it answered: once the actor
// has taken a Ready, its answers, and the replies they go to, are the
// actor's alone, so an idle group does not keep its last batch alive.
func TestCoreKeepsNoAnswerItHandedOver(t *testing.T) {
	type reply [64]byte // too large for the tiny allocator: its own object
	c := core.New[*reply](config())
	c.Step(core.Load{})
	c.Ready()
	c.Advance(core.Loaded{Group: created(t), Rev: 1, Now: t0})
	c.Ready()
	answered := func() weak.Pointer[reply] {
		to := new(reply)
		req := join("m-1")
		req.ProtocolVersion = 2 // refused: answered at once
		c.Step(core.Heartbeat[*reply]{Now: t0, Req: req, To: to})
		if rd := c.Ready(); len(rd.Answers) != 1 || rd.Answers[0].To != to {
			t.Fatalf("answers %+v, want the refusal", rd.Answers)
		}
		return weak.Make(to)
	}()
	runtime.GC()
	if answered.Value() != nil {
		t.Fatal("the core still holds the reply of a heartbeat it handed over")
	}
	runtime.KeepAlive(c)
}

// A create records the core's coordinator as the group's holder; a
// TakeOver by another coordinator writes the group naming it, with one
// handover entry, and by the holder writes nothing.
func TestCoreTakeOver(t *testing.T) {
	cfg := config()
	cfg.Coordinator = "coord-a"
	a := core.New[string](cfg)
	load(t, a, core.Loaded{Group: group.New(), Now: t0})
	a.Step(core.Admin{Now: t0, Op: core.OpCreateGroup, Cmd: core.Create{Request: contract.CreateRequest{RequestedBy: "t"}}})
	if rd := a.Ready(); rd.Write == nil || rd.Write.Group.Coordinator != "coord-a" || len(rd.Write.Group.History) != 0 {
		t.Fatalf("create: %+v, want an insert of a group held by coord-a without history", rd.Write)
	}
	a.Advance(core.Written{Rev: 1})
	a.Ready()

	a.Step(core.Admin{Now: t0, Op: core.OpTakeOver, Cmd: core.TakeOver{}})
	if rd := a.Ready(); rd.Write != nil || rd.Done == nil || rd.Done.Err != nil || rd.Done.HandedOver {
		t.Fatalf("the holder taking the group: %+v, want done without a write", rd)
	}

	cfg.Coordinator = "coord-b"
	b := core.New[string](cfg)
	load(t, b, core.Loaded{Group: a.Committed().Clone(), Rev: 1, Now: t0})
	later := t0.Add(time.Second)
	b.Step(core.Admin{Now: later, Op: core.OpTakeOver, Cmd: core.TakeOver{}})
	rd := b.Ready()
	if rd.Write == nil || rd.Write.Kind != core.Update || rd.Write.Expected != 1 {
		t.Fatalf("a takeover: %+v, want an update at rev 1", rd.Write)
	}
	b.Advance(core.Written{Rev: 2})
	rd = b.Ready()
	g := b.Committed()
	if rd.Done == nil || rd.Done.Err != nil || !rd.Done.HandedOver || g.Coordinator != "coord-b" || len(g.History) != 1 {
		t.Fatalf("after the takeover: %+v, holder %q, history %+v", rd.Done, g.Coordinator, g.History)
	}
	if h := g.History[0]; h.Cause != group.CauseHandover || h.From != "coord-a" || h.To != "coord-b" || h.At != contract.InstantOf(later) || !h.GroupLevel() {
		t.Fatalf("entry %+v, want a handover coord-a > coord-b at %v", h, later)
	}
}
