package audit

import (
	"context"
	"maps"
	"slices"
	"sync"
)

// MemorySink keeps the latest events per group (and per stream for
// stream-level actions) in process memory. With the log sink it backs the
// "recent mutations" of the monitoring views: Tee(NewLogSink(l),
// NewMemorySink(n)).
type MemorySink struct {
	maxEntries int

	mu     sync.Mutex
	events map[scope][]Event // oldest first, at most maxEntries each
}

type scope struct{ streamPrefix, consumerGroup string }

// NewMemorySink returns a sink keeping at most max(1, maxEntries) events per
// group or stream.
func NewMemorySink(maxEntries int) *MemorySink {
	return &MemorySink{maxEntries: max(1, maxEntries), events: map[scope][]Event{}}
}

// Record stores a copy of e, dropping the oldest event beyond the cap.
func (s *MemorySink) Record(_ context.Context, e Event) error {
	e.Roles = slices.Clone(e.Roles)
	e.RequestSummary = maps.Clone(e.RequestSummary)
	k := scope{e.StreamPrefix, deref(e.ConsumerGroup)}
	s.mu.Lock()
	defer s.mu.Unlock()
	list := s.events[k]
	if len(list) == s.maxEntries {
		list = slices.Delete(list, 0, 1)
	}
	s.events[k] = append(list, e)
	return nil
}

// Recent implements History. The events share their Roles and
// RequestSummary with the sink; callers must not modify them.
func (s *MemorySink) Recent(_ context.Context, streamPrefix, consumerGroup string, n int) ([]Event, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	list := s.events[scope{streamPrefix, consumerGroup}]
	out := make([]Event, 0, min(max(n, 0), len(list)))
	for i := len(list) - 1; i >= 0 && len(out) < cap(out); i-- {
		out = append(out, list[i])
	}
	return out, nil
}
