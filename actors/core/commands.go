package core

import (
	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
)

// Op names what the core writes for: a flush, or the admin command under
// way. Conflict reports carry it, and the runtime's metrics and logs name
// it by String, the operation label of state_conflict_total
// (docs/protocol.md §10.1, docs/observability.md).
type Op uint8

const (
	// OpUnknown is the zero Op.
	OpUnknown Op = iota
	// OpFlush is the group commit of heartbeats and ticks ("heartbeat").
	OpFlush
	OpCreateGroup
	OpDeleteGroup
	OpScaleGroup
	OpScaleStream
	OpRollbackMigration
	OpPauseShards
	OpResumeShards
	// OpLiveReset starts a live offset reset and runs its steps.
	OpLiveReset
	// OpRebalance is one measure of a group assigned by work.
	OpRebalance
	// OpForceReset is a forced offset reset: it sets the positions in
	// Redis at once and stores nothing, so it only meets the core when the
	// state mutex fails it before it starts.
	OpForceReset
	// OpTakeOver records this coordinator as the group's holder once it
	// took the group.
	OpTakeOver
)

var opNames = [...]string{
	OpUnknown:           "unknown",
	OpFlush:             "heartbeat",
	OpCreateGroup:       "create-group",
	OpDeleteGroup:       "delete-group",
	OpScaleGroup:        "scale-group",
	OpScaleStream:       "scale-stream",
	OpRollbackMigration: "rollback-migration",
	OpPauseShards:       "pause-shards",
	OpResumeShards:      "resume-shards",
	OpLiveReset:         "live-reset",
	OpRebalance:         "rebalance",
	OpForceReset:        "force-reset",
	OpTakeOver:          "take-over",
}

// String is the op's name in metrics and logs.
func (o Op) String() string {
	if int(o) < len(opNames) {
		return opNames[o]
	}
	return opNames[OpUnknown]
}

// Ops lists every op but OpUnknown, for tests and metric documentation.
func Ops() []Op {
	out := make([]Op, 0, len(opNames)-1)
	for o := OpFlush; int(o) < len(opNames); o++ {
		out = append(out, o)
	}
	return out
}

// Command is an admin command (or a runtime's request of the same kind,
// as Rebalance): a typed request that the core interprets
// by calling its domain handler on working (Step(Admin)), or on a copy of
// committed (Check). Every command but Create needs a stored group
// (GROUP_NOT_FOUND otherwise); Create needs none (GROUP_ALREADY_EXISTS).
// Its answer comes back in Done, in the field the command names.
type Command interface{ command() }

// Create creates the group (group.Create, docs/protocol.md §2.2) under the
// core's key, held by the core's coordinator (Config.Coordinator,
// group.TakeOver: no history entry). Answer: Done.View.
type Create struct{ Request contract.CreateRequest }

// Delete deletes the group (group.Delete, §2.3); its records end with
// group.DeletedRecord, so the write removes it. Answer: Done.View, the
// view before the delete.
type Delete struct{ Request contract.DeleteRequest }

// StartScale starts, resumes or noops a scale (group.StartScale, §6.2);
// NewID is the id a new migration gets. Answer: Done.Migration.
type StartScale struct {
	Request contract.ScaleRequest
	NewID   string
}

// ActivateScale activates a PREPARING migration once its shard streams
// are provisioned (group.ActivateScale). Answer: Done.Migration.
type ActivateScale struct{ ReshardingID string }

// Rollback rolls a migration back (group.Rollback, §6.5). Answer:
// Done.Migration.
type Rollback struct {
	ReshardingID string
	Request      contract.RollbackRequest
}

// Pause pauses shards (group.Pause). Answer: Done.Paused.
type Pause struct{ Request contract.PauseRequest }

// Resume resumes paused shards (group.Resume). Answer: Done.Paused.
type Resume struct{ Request contract.PauseRequest }

// StartReset starts a live offset reset with id NewID
// (group.StartReset). Answer: Done.Reset.
type StartReset struct {
	Request group.ResetRequest
	NewID   string
}

// BeginApply stores the active reset APPLYING with the planned ids
// (group.BeginApply). When a member took one of its shards since the
// plan (the reset no longer waits for a plan) it stores nothing and
// answers the zero reset: the plan waits for the next release. Answer:
// Done.Reset.
type BeginApply struct {
	ResetID string
	Plans   []group.ShardReset
}

// FinishReset stores the reset DONE with the positions after
// (group.FinishReset). Answer: Done.Reset.
type FinishReset struct {
	ResetID string
	After   []*contract.GroupPosition
}

// FailReset stores the reset FAILED with its cause (group.FailReset).
// Answer: Done.Reset.
type FailReset struct {
	ResetID string
	Cause   string
}

// Rebalance hands a group one measure of its shards' work
// (group.Rebalance, docs/assignment.md): a group assigned by work
// remembers the weights and may move shards. Answer: Done.Work.
type Rebalance struct{ Measure group.Measure }

// TakeOver records the core's coordinator (Config.Coordinator) as the
// group's holder (group.TakeOver): the runtime steps it once its
// coordinator took the group as owner and the stored group names another
// holder, or none. When it names another coordinator the history gains
// one handover entry. Answer: Done.HandedOver.
type TakeOver struct{}

func (Create) command()        {}
func (Delete) command()        {}
func (StartScale) command()    {}
func (ActivateScale) command() {}
func (Rollback) command()      {}
func (Pause) command()         {}
func (Resume) command()        {}
func (StartReset) command()    {}
func (BeginApply) command()    {}
func (FinishReset) command()   {}
func (FailReset) command()     {}
func (Rebalance) command()     {}
func (TakeOver) command()      {}

// Done is the outcome of an admin command (Ready.Done, or Check's
// answer). Err is nil when its records are stored (or it had none to
// store), else its refusal or the failure that ended it; then every
// answer is zero. Otherwise the field its command names holds the
// domain's answer of its last run (a command runs again after a revision
// conflict).
type Done struct {
	Op  Op
	Err error
	// View answers Create and Delete.
	View contract.GroupView
	// Migration answers StartScale, ActivateScale and Rollback.
	Migration group.Migration
	// Paused answers Pause and Resume.
	Paused contract.PausedView
	// Reset answers StartReset, BeginApply, FinishReset and FailReset.
	Reset group.LiveReset
	// Work answers Rebalance.
	Work contract.WorkView
	// HandedOver answers TakeOver: whether another coordinator held the
	// group (a handover entry was recorded).
	HandedOver bool
}

// GroupNotFound is the domain's refusal of a command, or a read, of a
// group that is not stored.
func GroupNotFound() error {
	return group.Errorf(contract.CodeGroupNotFound, "Group not found")
}

// GroupExists is the domain's refusal of a create of a stored group.
func GroupExists() error {
	return group.Errorf(contract.CodeGroupAlreadyExists, "Group already exists")
}

// interpret runs cmd's domain handler on w at now, records its answer in
// d, and returns the records the handler applied to w, or its refusal.
func interpret(cmd Command, w *group.Group, now contract.Instant, cfg Config, d *Done) ([]group.Record, error) {
	if _, create := cmd.(Create); create == w.Exists() {
		if create {
			return nil, GroupExists()
		}
		return nil, GroupNotFound()
	}
	s := cfg.Settings
	switch cmd := cmd.(type) {
	case Create:
		recs, err := answer(w.Create(now, s, cfg.Key, cmd.Request), &d.View)
		if err != nil {
			return recs, err
		}
		return append(recs, w.TakeOver(now, s, cfg.Coordinator).Records...), nil
	case Delete:
		return answer(w.Delete(now, s, cmd.Request), &d.View)
	case StartScale:
		return answer(w.StartScale(now, s, cmd.Request, cmd.NewID), &d.Migration)
	case ActivateScale:
		return answer(w.ActivateScale(now, s, cmd.ReshardingID), &d.Migration)
	case Rollback:
		return answer(w.Rollback(now, s, cmd.ReshardingID, cmd.Request), &d.Migration)
	case Pause:
		return answer(w.Pause(now, s, cmd.Request), &d.Paused)
	case Resume:
		return answer(w.Resume(now, s, cmd.Request), &d.Paused)
	case StartReset:
		return answer(w.StartReset(now, s, cmd.Request, cmd.NewID), &d.Reset)
	case BeginApply:
		if _, step := w.ResetStep(); step != group.ResetPlan {
			return nil, nil
		}
		return answer(w.BeginApply(now, s, cmd.ResetID, cmd.Plans), &d.Reset)
	case FinishReset:
		return answer(w.FinishReset(now, s, cmd.ResetID, cmd.After), &d.Reset)
	case FailReset:
		return answer(w.FailReset(now, s, cmd.ResetID, cmd.Cause), &d.Reset)
	case Rebalance:
		return answer(w.Rebalance(now, s, cmd.Measure), &d.Work)
	case TakeOver:
		return answer(w.TakeOver(now, s, cfg.Coordinator), &d.HandedOver)
	}
	panic("core: unknown command")
}

// answer stores a handler's answer in to and returns its records and
// refusal.
func answer[A any](res group.Result[A], to *A) ([]group.Record, error) {
	*to = res.Answer
	return res.Records, res.Err
}
