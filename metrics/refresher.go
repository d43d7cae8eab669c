package metrics

import (
	"context"
	"errors"
	"iter"
	"time"

	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/messages"
)

// Source reads a group's committed state; *actors.Coordinator implements
// it.
type Source interface {
	Members(ctx context.Context, key group.Key) ([]group.Member, error)
	Assignments(ctx context.Context, key group.Key) (group.AssignmentsView, error)
}

// RefreshProjection names the refresher's failures in
// monitoring_refresh_failed_total.
const RefreshProjection = "group_metrics"

// RefreshStale brings up to date every group whose last commit fell inside
// its refresh interval (GroupCommitted skipped the O(members) refresh) and
// whose last refresh is at least one interval old: it reads the group's
// members and assignments from src and refreshes from them. Without it, a
// group that goes quiet right after such a commit would keep stale member
// gauges. A read failure counts in monitoring_refresh_failed_total
// (projection "group_metrics"); a group deleted meanwhile, or a
// coordinator shutting down, is skipped.
func (m *Metrics) RefreshStale(ctx context.Context, src Source) {
	for _, gs := range m.states() {
		gs.mu.Lock()
		due := gs.dirty && m.now().Sub(gs.refreshedAt) >= m.interval
		refreshedAt, commits := gs.refreshedAt, gs.commits
		gs.mu.Unlock()
		if !due {
			continue
		}
		members, err := src.Members(ctx, gs.key)
		var av group.AssignmentsView
		if err == nil {
			av, err = src.Assignments(ctx, gs.key)
		}
		if ge, ok := errors.AsType[*group.Error](err); ok && ge.Code == group.CodeGroupNotFound || errors.Is(err, messages.ErrTerminating) {
			continue
		}
		if err != nil {
			m.MonitoringRefreshFailed(RefreshProjection)
			continue
		}
		gs.mu.Lock()
		// A refresh by GroupCommitted meanwhile saw newer state: keep it.
		if !gs.deleted && gs.refreshedAt.Equal(refreshedAt) {
			m.refresh(gs, m.now(), pointers(members), av.TargetAssignment, av.Violations)
			// A commit during the reads may be missing from them.
			gs.dirty = gs.commits != commits
		}
		gs.mu.Unlock()
	}
}

// Run calls RefreshStale every refresh interval until ctx ends.
func (m *Metrics) Run(ctx context.Context, src Source) {
	t := time.NewTicker(m.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			m.RefreshStale(ctx, src)
		}
	}
}

// pointers yields a pointer to each element of s.
func pointers[T any](s []T) iter.Seq[*T] {
	return func(yield func(*T) bool) {
		for i := range s {
			if !yield(&s[i]) {
				return
			}
		}
	}
}
