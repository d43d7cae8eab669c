package fakeruntime

import (
	"context"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
)

// Runtime answers every call with its canned values, or Err when set, and
// records what it was asked.
type Runtime struct {
	// Err, when set, is what every call returns (beside its canned answer).
	Err error
	// The canned answers: View of CreateGroup, DeleteGroup and Group,
	// Views of Groups, and the others of the method their name says.
	View              contract.GroupView
	Views             []contract.GroupView
	MemberList        []group.Member
	AssignmentsAnswer contract.AssignmentsView
	RoutingAnswer     group.Routing
	HeartbeatAnswer   contract.HeartbeatResponse
	// PanicOnRead makes Group panic.
	PanicOnRead bool

	// What it was asked: the number of calls, the key of the last one,
	// the calls of Groups, and the last request of each kind.
	Calls         int
	GroupsRead    int
	Key           group.Key
	Created       contract.CreateRequest
	StreamLevel   bool
	Deleted       contract.DeleteRequest
	LastHeartbeat *contract.HeartbeatRequest
	Forced        *group.ResetRequest // of ForceReset or PreviewReset
}

func (f *Runtime) note(key group.Key) error {
	f.Calls++
	f.Key = key
	return f.Err
}

func (f *Runtime) Heartbeat(_ context.Context, key group.Key, req *contract.HeartbeatRequest) (contract.HeartbeatResponse, error) {
	f.LastHeartbeat = req
	return f.HeartbeatAnswer, f.note(key)
}

func (f *Runtime) CreateGroup(_ context.Context, key group.Key, req contract.CreateRequest, streamLevel bool) (contract.GroupView, error) {
	f.Created, f.StreamLevel = req, streamLevel
	return f.View, f.note(key)
}

func (f *Runtime) DeleteGroup(_ context.Context, key group.Key, req contract.DeleteRequest) (contract.GroupView, error) {
	f.Deleted = req
	return f.View, f.note(key)
}

func (f *Runtime) Group(_ context.Context, key group.Key) (contract.GroupView, error) {
	if f.PanicOnRead {
		panic("boom")
	}
	return f.View, f.note(key)
}

func (f *Runtime) Members(_ context.Context, key group.Key) ([]group.Member, error) {
	return f.MemberList, f.note(key)
}

func (f *Runtime) Assignments(_ context.Context, key group.Key) (contract.AssignmentsView, error) {
	return f.AssignmentsAnswer, f.note(key)
}

func (f *Runtime) Routing(_ context.Context, key group.Key) (group.Routing, error) {
	return f.RoutingAnswer, f.note(key)
}

func (f *Runtime) Groups(context.Context) ([]contract.GroupView, error) {
	f.GroupsRead++
	return f.Views, f.note(group.Key{})
}

// ForceReset records the request and answers a forced result without
// shards.
func (f *Runtime) ForceReset(_ context.Context, key group.Key, req group.ResetRequest) (contract.OffsetResetResult, error) {
	f.Forced = &req
	return contract.OffsetResetResult{StreamPrefix: key.StreamPrefix, ConsumerGroup: key.ConsumerGroup, To: req.Target.To, Forced: true}, f.note(key)
}

// PreviewReset records the request and answers a dry run without shards.
func (f *Runtime) PreviewReset(_ context.Context, key group.Key, req group.ResetRequest) (contract.ResetPreview, error) {
	f.Forced = &req
	return contract.ResetPreview{StreamPrefix: key.StreamPrefix, ConsumerGroup: key.ConsumerGroup, To: req.Target.To, DryRun: true}, f.note(key)
}

func (f *Runtime) PauseShards(_ context.Context, key group.Key, req contract.PauseRequest) (contract.PausedView, error) {
	return contract.PausedView{PausedShards: req.Shards}, f.note(key)
}

func (f *Runtime) ResumeShards(_ context.Context, key group.Key, _ contract.PauseRequest) (contract.PausedView, error) {
	return contract.PausedView{}, f.note(key)
}

func (f *Runtime) StartReset(_ context.Context, key group.Key, req group.ResetRequest) (group.LiveReset, error) {
	return group.LiveReset{ResetID: "reset-1", State: contract.ResetPausing, Target: req.Target}, f.note(key)
}

func (f *Runtime) Reset(_ context.Context, key group.Key, id string) (group.LiveReset, error) {
	return group.LiveReset{ResetID: id, State: contract.ResetDone}, f.note(key)
}

// SampleMigration is the migration the Resharding methods answer, with
// the id they were asked for where they take one.
func SampleMigration() group.Migration {
	return group.Migration{ReshardingID: "reshard-1", FromShardCount: 4, ToShardCount: 8, State: group.MigrationActive,
		CreatedAt: 1779321600000, UpdatedAt: 1779321601000}
}

func (f *Runtime) ScaleGroup(_ context.Context, key group.Key, _ contract.ScaleRequest) (group.Migration, error) {
	return SampleMigration(), f.note(key)
}

func (f *Runtime) ScaleStream(_ context.Context, prefix string, req contract.ScaleRequest) (group.StreamScale, error) {
	return group.StreamScale{StreamPrefix: prefix, TargetShardCount: *req.TargetShardCount,
		AffectedConsumerGroups: []string{"a"}, Migrations: []group.Migration{SampleMigration()}}, f.note(group.Key{StreamPrefix: prefix})
}

func (f *Runtime) Rollback(_ context.Context, key group.Key, id string, _ contract.RollbackRequest) (group.Migration, error) {
	m := SampleMigration()
	m.ReshardingID, m.State = id, group.MigrationRolledBack
	return m, f.note(key)
}

func (f *Runtime) Migration(_ context.Context, key group.Key, id string) (group.Migration, error) {
	m := SampleMigration()
	m.ReshardingID = id
	return m, f.note(key)
}

func (f *Runtime) Migrations(_ context.Context, key group.Key) (group.Migrations, error) {
	id := "reshard-1"
	return group.Migrations{List: []group.Migration{SampleMigration()}, ActiveReshardingID: &id}, f.note(key)
}

func (f *Runtime) Snapshot(_ context.Context, key group.Key) (*group.Group, error) {
	return group.New(), f.note(key)
}
