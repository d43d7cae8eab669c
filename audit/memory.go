package audit

import (
	"container/list"
	"context"
	"slices"
	"sync"
)

// MemorySink keeps the latest events per group (and per stream for
// stream-level actions) in process memory. With the log sink it backs the
// "recent mutations" of the monitoring views: Tee(NewLogSink(l),
// NewMemorySink(n, total)). Its memory is bounded by its total, whatever
// names the requests carry: a request refused before authentication is
// recorded under the names in its path, so without a total every new name
// would be kept for good.
type MemorySink struct {
	perScope, total int

	mu sync.Mutex
	// scopes holds one element per scope, least recently recorded first;
	// each element's value is a *scopeEvents.
	scopes *list.List
	byName map[scope]*list.Element
	kept   int // events held, summed over the scopes
}

type scope struct{ streamPrefix, consumerGroup string }

// scopeEvents are one scope's events, oldest first.
type scopeEvents struct {
	scope  scope
	events []keptEvent
}

// keptEvent is an Event as the sink keeps it: its RequestSummary as a
// slice of fields (nil for a nil map), since a small map takes ~500 B and
// the sink holds up to its total of events; Recent rebuilds the map.
type keptEvent struct {
	event   Event // RequestSummary nil
	summary []summaryField
}

type summaryField struct{ name, value string }

// keep returns e as the sink keeps it.
func keep(e Event) keptEvent {
	k := keptEvent{event: e}
	k.event.RequestSummary = nil
	if e.RequestSummary != nil {
		k.summary = make([]summaryField, 0, len(e.RequestSummary))
		for name, value := range e.RequestSummary {
			k.summary = append(k.summary, summaryField{name, value})
		}
	}
	return k
}

// restore returns the Event k keeps, with a RequestSummary of its own.
func (k keptEvent) restore() Event {
	e := k.event
	if k.summary != nil {
		e.RequestSummary = make(map[string]string, len(k.summary))
		for _, f := range k.summary {
			e.RequestSummary[f.name] = f.value
		}
	}
	return e
}

// NewMemorySink returns a sink keeping at most max(1, perScope) events per
// group or stream and at most max(total, perScope) in all: beyond the
// total it drops the oldest event of the scope recorded least recently.
func NewMemorySink(perScope, total int) *MemorySink {
	perScope = max(1, perScope)
	return &MemorySink{perScope: perScope, total: max(total, perScope), scopes: list.New(), byName: map[scope]*list.Element{}}
}

// Record stores a copy of e, dropping the oldest event of its scope beyond
// the per-scope cap and, beyond the total, the oldest of the scope recorded
// least recently.
func (s *MemorySink) Record(_ context.Context, e Event) error {
	e.Roles = slices.Clone(e.Roles)
	k := scope{e.StreamPrefix, deref(e.ConsumerGroup)}
	s.mu.Lock()
	defer s.mu.Unlock()
	el, ok := s.byName[k]
	if ok {
		s.scopes.MoveToBack(el)
	} else {
		el = s.scopes.PushBack(&scopeEvents{scope: k})
		s.byName[k] = el
	}
	se := el.Value.(*scopeEvents)
	if len(se.events) == s.perScope {
		se.events = slices.Delete(se.events, 0, 1)
		s.kept--
	}
	se.events = append(se.events, keep(e))
	s.kept++
	for s.kept > s.total {
		s.dropOldest()
	}
	return nil
}

// dropOldest drops the oldest event of the scope recorded least recently,
// and the scope once it is empty. s.mu must be held.
func (s *MemorySink) dropOldest() {
	el := s.scopes.Front()
	se := el.Value.(*scopeEvents)
	se.events = slices.Delete(se.events, 0, 1)
	s.kept--
	if len(se.events) == 0 {
		s.scopes.Remove(el)
		delete(s.byName, se.scope)
	}
}

// Recent implements History. The events share their Roles with the sink;
// callers must not modify them.
func (s *MemorySink) Recent(_ context.Context, streamPrefix, consumerGroup string, n int) ([]Event, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var events []keptEvent
	if el, ok := s.byName[scope{streamPrefix, consumerGroup}]; ok {
		events = el.Value.(*scopeEvents).events
	}
	out := make([]Event, 0, min(max(n, 0), len(events)))
	for i := len(events) - 1; i >= 0 && len(out) < cap(out); i-- {
		out = append(out, events[i].restore())
	}
	return out, nil
}
