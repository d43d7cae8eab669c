package metrics

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
)

// Source reads a group's committed state; *actors.System implements
// it. The group returned is shared: it is only read.
type Source interface {
	Snapshot(ctx context.Context, key group.Key) (*group.Group, error)
}

// RefreshProjection names the failed reads of the per-member series in
// monitoring_refresh_failed_total.
const RefreshProjection = "group_metrics"

// memberReadTimeout bounds a scrape's read of one group's snapshot.
const memberReadTimeout = 2 * time.Second

// memberSource is the Source of the per-member series while Run runs.
type memberSource struct {
	mu  sync.RWMutex
	src Source
}

// SetSource makes src, or nothing when nil, the source of the per-member
// series (WithMemberSeries): each scrape reads, for every group, the
// committed snapshot (the published one, or one built for this version
// and shared with other readers) and exports its first members by id.
// Without a source, or with member series off, a scrape reads nothing:
// the group series come from the stats of the last commit (GroupStats).
func (m *Metrics) SetSource(src Source) {
	m.members.mu.Lock()
	defer m.members.mu.Unlock()
	m.members.src = src
}

// Run makes src the source of the per-member series until ctx ends
// (SetSource), so that no scrape reads a coordinator shut down after ctx.
func (m *Metrics) Run(ctx context.Context, src Source) {
	m.SetSource(src)
	<-ctx.Done()
	m.SetSource(nil)
}

// sampledMembers returns the first memberSeries members of key by id, nil
// when member series are off or there is no Source. A failed read counts in
// monitoring_refresh_failed_total (projection "group_metrics"); a group
// deleted meanwhile, or a coordinator shutting down, has no member series.
func (m *Metrics) sampledMembers(key group.Key) []*group.Member {
	m.members.mu.RLock()
	src := m.members.src
	m.members.mu.RUnlock()
	if m.memberSeries == 0 || src == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), memberReadTimeout)
	defer cancel()
	g, err := src.Snapshot(ctx, key)
	if ge, ok := errors.AsType[*group.Error](err); ok && ge.Code == contract.CodeGroupNotFound || errors.Is(err, contract.ErrTerminating) {
		return nil
	}
	if err != nil {
		m.MonitoringRefreshFailed(RefreshProjection)
		return nil
	}
	members := make([]*group.Member, 0, len(g.Members))
	for _, mem := range g.Members {
		members = append(members, mem)
	}
	slices.SortFunc(members, func(a, b *group.Member) int { return strings.Compare(a.MemberID, b.MemberID) })
	return members[:min(len(members), m.memberSeries)]
}
