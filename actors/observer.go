package actors

import (
	"time"

	"github.com/redis-stream-coordinator/coordinator/actors/core"
	"github.com/redis-stream-coordinator/coordinator/group"
)

// Observer receives the runtime's metrics hooks. Every method is called
// synchronously from an actor or the manager, so implementations must be
// fast, safe for concurrent use, and must not block or call back into the
// System.
type Observer interface {
	// MessageHandled reports how long a group actor took to handle one
	// message; msgType is one of the MsgType constants.
	MessageHandled(msgType string, d time.Duration)
	// BatchFlushed reports one flush: the number of requests and ticks in
	// the batch, whether anything was written, how long the whole critical
	// section took (retries included) and its outcome (nil on success).
	BatchFlushed(key group.Key, size int, wrote bool, d time.Duration, err error)
	// Conflict reports a revision conflict of operation op (core.OpFlush
	// for a group commit of heartbeats and ticks, else the admin command's
	// op) on its attempt-th try.
	Conflict(key group.Key, op core.Op, attempt int)
	// TickHandled reports one maintenance tick of a group: whether it
	// changed the group and how long it took (commit excluded).
	TickHandled(changed bool, d time.Duration)
	// ActorRestarted reports that a group actor is restarting after a panic.
	ActorRestarted(key group.Key)
	// ActorsLive reports the number of group actors after one started or
	// stopped.
	ActorsLive(n int)
	// HeartbeatShed reports a heartbeat shed (contract.ErrShed): at
	// once because MaxQueuedHeartbeats heartbeats were already queued for
	// its group, or because its actor did not answer within StoreTimeout.
	// It is called on the caller's goroutine.
	HeartbeatShed(key group.Key)
	// MailboxDepth reports the number of messages queued for a group actor,
	// sampled at each flush.
	MailboxDepth(key group.Key, n int)
	// GroupCommitted reports the committed state after every load, reload,
	// commit, create and delete (a deleted group reports a group for which
	// Exists() is false), and the records the commit stored (none for a
	// load): each decision appears in exactly one commit of the coordinator
	// that made it. g and recs must be read during the call only, never
	// kept or modified.
	GroupCommitted(key group.Key, g *group.Group, recs []group.Record)
	// GroupStats reports the stats of the committed group right after each
	// GroupCommitted of a group that exists. Apply keeps them
	// (group.Stats), so they cost no pass over the members.
	GroupStats(key group.Key, s group.Stats)
	// GroupOwned reports that this process took ownership of a group
	// (owned) or lost or gave it up (Options.Ownership).
	GroupOwned(key group.Key, owned bool)
	// HandedOver reports a group released to the coordinator it is now
	// placed on; cause is "placement" or "shutdown".
	HandedOver(key group.Key, cause string)
}

// Message types reported by Observer.MessageHandled.
const (
	MsgHeartbeat   = "heartbeat"
	MsgCreateGroup = "create_group"
	MsgDeleteGroup = "delete_group"
	MsgScale       = "scale"
	MsgCheckScale  = "check_scale"
	MsgRollback    = "rollback"
	MsgGetSnapshot = "get_snapshot"
	MsgTick        = "tick"
	MsgFlush       = "flush"
)

// NopObserver ignores every hook. Embed it to implement only some of them.
type NopObserver struct{}

func (NopObserver) MessageHandled(string, time.Duration)                    {}
func (NopObserver) BatchFlushed(group.Key, int, bool, time.Duration, error) {}
func (NopObserver) Conflict(group.Key, core.Op, int)                        {}
func (NopObserver) TickHandled(bool, time.Duration)                         {}
func (NopObserver) ActorRestarted(group.Key)                                {}
func (NopObserver) ActorsLive(int)                                          {}
func (NopObserver) HeartbeatShed(group.Key)                                 {}
func (NopObserver) MailboxDepth(group.Key, int)                             {}
func (NopObserver) GroupCommitted(group.Key, *group.Group, []group.Record)  {}
func (NopObserver) GroupStats(group.Key, group.Stats)                       {}
func (NopObserver) GroupOwned(group.Key, bool)                              {}
func (NopObserver) HandedOver(group.Key, string)                            {}
