package metrics

import (
	"errors"
	"strconv"
	"time"

	"github.com/redis-stream-coordinator/coordinator/actors/core"
	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/persistence"
)

// The methods of this file and GroupCommitted implement actors.Observer.
// Each does O(1) work under at most one group's lock.

// MessageHandled implements actors.Observer: one observation of
// actor_message_duration_seconds{type} per message.
func (m *Metrics) MessageHandled(msgType string, d time.Duration) {
	m.messageTime.WithLabelValues(msgType).Observe(d.Seconds())
}

// TickHandled records one event-loop tick handled by a group actor: whether
// it changed the group and how long it took (tick_total and
// tick_duration_seconds by changed). The actor layer calls it per tick.
func (m *Metrics) TickHandled(changed bool, d time.Duration) {
	c := strconv.FormatBool(changed)
	m.ticks.WithLabelValues(c).Inc()
	m.tickDuration.WithLabelValues(c).Observe(d.Seconds())
}

// BatchFlushed implements actors.Observer: the batch size, and the critical
// section's duration by result (success, noop when nothing needed
// writing, or the error class of ResultOf).
func (m *Metrics) BatchFlushed(key group.Key, size int, wrote bool, d time.Duration, err error) {
	m.batchSize.Observe(float64(size))
	result := ResultOf(err)
	if err == nil && !wrote {
		result = "noop"
	}
	m.commitDuration.WithLabelValues(result).Observe(d.Seconds())
	if err != nil {
		return
	}
	if gs := m.lookup(key); gs != nil {
		gs.mu.Lock()
		gs.flushed, gs.flushTime = true, d
		gs.mu.Unlock()
	}
}

// Conflict implements actors.Observer: state_conflict_total{operation,
// attempt}, the operation named by the op (core.Op.String: "heartbeat"
// for a group commit, docs/protocol.md §10.1).
func (m *Metrics) Conflict(_ group.Key, op core.Op, attempt int) {
	m.stateConflicts.WithLabelValues(op.String(), strconv.Itoa(attempt)).Inc()
}

// ActorRestarted implements actors.Observer: actor_restarts_total.
func (m *Metrics) ActorRestarted(key group.Key) {
	m.countGroup(key, func(p, g string) { m.actorRestarts.WithLabelValues(p, g).Inc() })
}

// ActorsLive implements actors.Observer: the group_actors gauge.
func (m *Metrics) ActorsLive(n int) { m.groupActors.Set(float64(n)) }

// HeartbeatShed implements actors.Observer: heartbeat_shed_total.
func (m *Metrics) HeartbeatShed(key group.Key) {
	m.countGroup(key, func(p, g string) { m.heartbeatsShed.WithLabelValues(p, g).Inc() })
}

// MailboxDepth implements actors.Observer: actor_mailbox_depth of a known
// group.
func (m *Metrics) MailboxDepth(key group.Key, n int) {
	if gs := m.lookup(key); gs != nil {
		gs.mu.Lock()
		gs.mailbox = n
		gs.mu.Unlock()
	}
}

// ResultOf names a store or commit error's outcome (persistence.Classify)
// for the result labels: success, conflict, not_found, already_exists,
// unavailable, lock_timeout, corrupt, canceled, internal or error (an
// unknown outcome or a refusal).
func ResultOf(err error) string {
	switch persistence.Classify(err) {
	case persistence.Written:
		return "success"
	case persistence.Stale:
		switch {
		case errors.Is(err, persistence.ErrNotFound):
			return "not_found"
		case errors.Is(err, persistence.ErrAlreadyExists):
			return "already_exists"
		}
		return "conflict"
	case persistence.Busy:
		return "lock_timeout"
	case persistence.Unavailable:
		return "unavailable"
	case persistence.Corrupt:
		return "corrupt"
	case persistence.Canceled:
		return "canceled"
	}
	switch {
	case errors.Is(err, contract.ErrInternal):
		return "internal"
	case errors.Is(err, contract.ErrStateConflict):
		return "conflict"
	}
	return "error"
}
