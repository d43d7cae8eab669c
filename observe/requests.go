package observe

import (
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
)

// ServedRequest describes one request served by a coordinator route.
type ServedRequest struct {
	// Method and Template name the route: the HTTP method and the full
	// path template including the base path (contract.BasePath +
	// contract.GroupTemplate).
	Method   string
	Template string
	// Action is the audit action of an Admin API mutation, empty for reads
	// and heartbeats (contract.Route.Action).
	Action contract.Action
	// StreamPrefix and ConsumerGroup are the path's values, "" when the
	// route has no such parameter. They are unvalidated client input.
	StreamPrefix  string
	ConsumerGroup string
	// Status is the response status; 500 when the handler panicked.
	Status   int
	Panicked bool
	Duration time.Duration
}

// RequestObserver is told what the coordinator routes served (package
// metrics implements it; package http reports to it). Its methods are
// called on the request's goroutine and must be fast.
type RequestObserver interface {
	// RequestServed reports every request of a route wrapped by
	// httpapi.ObserveRequests.
	RequestServed(r ServedRequest)
	// HeartbeatHandled reports the status of every heartbeat the
	// coordinator answered, with RETRY those it shed or did not store
	// (contract.ErrShed, contract.ErrNotStored); not those refused with a
	// 4xx before reaching it, nor cluster refusals and other runtime
	// failures.
	HeartbeatHandled(key group.Key, status contract.HeartbeatStatus)
	// RoutingServed reports every producer routing read: err is nil on
	// success; stale is set when the request's knownMetadataVersion was
	// older than the version served.
	RoutingServed(key group.Key, stale bool, err error)
	// ScaleServed reports every scale request the coordinator answered:
	// key names the group (ConsumerGroup is "" for a stream scale whose
	// pre-checks failed), noop marks a same-count request, err is nil on
	// success. A stream scale reports once per affected group.
	ScaleServed(key group.Key, noop bool, err error)
}
