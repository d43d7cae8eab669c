package audit

import (
	"container/list"
	"context"
	"maps"
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
	events []Event
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
	e.RequestSummary = maps.Clone(e.RequestSummary)
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
	se.events = append(se.events, e)
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

// Recent implements History. The events share their Roles and
// RequestSummary with the sink; callers must not modify them.
func (s *MemorySink) Recent(_ context.Context, streamPrefix, consumerGroup string, n int) ([]Event, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var events []Event
	if el, ok := s.byName[scope{streamPrefix, consumerGroup}]; ok {
		events = el.Value.(*scopeEvents).events
	}
	out := make([]Event, 0, min(max(n, 0), len(events)))
	for i := len(events) - 1; i >= 0 && len(out) < cap(out); i-- {
		out = append(out, events[i])
	}
	return out, nil
}
