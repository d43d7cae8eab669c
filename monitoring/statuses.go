package monitoring

import (
	"sync"
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/health"
)

// Statuses holds the consumption status and the scaling signal of the
// groups this coordinator's lag refresher observes (those placed on it):
// one health.Tracker per group, fed a round at a time by Observe from the
// observations the refresher read anyway (no Redis command of its own),
// read by the API (Status, Scaling, Summary), and dropped by Retain once
// the group is no longer placed here (deleted, or handed over: its new
// owner starts a window of its own). Its memory is bounded by the placed
// groups' shards × status.window samples (health.Tracker). It is safe for
// concurrent use.
type Statuses struct {
	cfg    health.Config
	mu     sync.Mutex
	groups map[group.Key]*health.Tracker
}

// NewStatuses returns an empty Statuses whose trackers use c.
func NewStatuses(c health.Config) *Statuses {
	return &Statuses{cfg: health.NewTracker(c).Config(), groups: map[group.Key]*health.Tracker{}}
}

// Observe feeds g's tracker the round of o, an observation of g's shards
// read at at, and returns the report.
func (s *Statuses) Observe(g *group.Group, o Observation, at time.Time) health.Report {
	round := RoundOf(g, o, at)
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.groups[g.Key()]
	if t == nil {
		t = health.NewTracker(s.cfg)
		s.groups[g.Key()] = t
	}
	return t.Observe(round)
}

// Retain drops the trackers of the groups not in keys.
func (s *Statuses) Retain(keys []group.Key) {
	keep := make(map[group.Key]bool, len(keys))
	for _, k := range keys {
		keep[k] = true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for k := range s.groups {
		if !keep[k] {
			delete(s.groups, k)
		}
	}
}

// last returns key's last report; ok is false before its first round.
func (s *Statuses) last(key group.Key) (health.Report, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t := s.groups[key]; t != nil {
		return t.Last()
	}
	return health.Report{}, false
}

// Status is the body of GET …/status for g: its last report, or UNKNOWN
// with no shards before the first round (or on a coordinator the group is
// not placed on).
func (s *Statuses) Status(g *group.Group) contract.StatusView {
	key := g.Key()
	if r, ok := s.last(key); ok {
		return r.View(key.StreamPrefix, key.ConsumerGroup, s.cfg.Window)
	}
	return health.UnknownView(key.StreamPrefix, key.ConsumerGroup, s.cfg.Window)
}

// Scaling is the body of GET …/scaling for g: its last signal or, before
// the first round, its members holding shards, bounded
// (health.Unevaluated).
func (s *Statuses) Scaling(g *group.Group) contract.ScalingView {
	key := g.Key()
	if r, ok := s.last(key); ok {
		return r.Scaling.View(key.StreamPrefix, key.ConsumerGroup)
	}
	_, members := holding(g)
	return health.Unevaluated(s.cfg.Scaling, members, g.ShardCount).View(key.StreamPrefix, key.ConsumerGroup)
}

// Summary is what a group's view shows of its last report: its status
// and desiredMembers; ok is false before the first round.
func (s *Statuses) Summary(key group.Key) (status contract.ConsumptionStatus, desired int, ok bool) {
	r, ok := s.last(key)
	return r.Status, r.Scaling.Desired, ok
}

// RoundOf is the health round of o, an observation of g's shards read at
// at: per shard its lag (the backlog where Redis tells none, Observe), the
// group's position, the entries ever added (entries-added, or the length
// where the server does not report it), the live members whose current
// assignment holds it, whether it is paused (Group.Paused: an operator's
// pause or a live reset under way) and the last live reset that set its
// position (ResetMark: the UpdatedAt of the newest reset past PAUSING
// that covers it).
func RoundOf(g *group.Group, o Observation, at time.Time) health.Round {
	held, members := holding(g)
	marks := map[int]int64{}
	for i := range g.LiveResets {
		r := &g.LiveResets[i]
		if r.State == contract.ResetPausing {
			continue
		}
		for _, sr := range r.Shards {
			marks[sr.ShardIndex] = max(marks[sr.ShardIndex], int64(r.UpdatedAt))
		}
	}
	paused := g.Paused()
	round := health.Round{At: at, Members: members, Shards: make([]health.Sample, len(o.Shards))}
	for i, s := range o.Shards {
		sample := health.Sample{Produced: max(s.EntriesAdded, s.StreamLength), Holders: held[s.Shard],
			Paused: paused.Contains(s.Shard), ResetMark: marks[s.Shard]}
		if s.Lag != nil {
			sample.Lag, sample.LagKnown = *s.Lag, true
		}
		if s.GroupLastDeliveredID != nil {
			sample.Position, sample.HasPosition = health.ParseID(*s.GroupLastDeliveredID)
		}
		round.Shards[i] = sample
	}
	return round
}

// holding returns how many of g's live members hold each shard in their
// current assignment, and how many hold at least one.
func holding(g *group.Group) (perShard map[int]int, members int) {
	perShard = map[int]int{}
	for _, id := range g.LiveMemberIDs() {
		current := g.Members[id].CurrentAssignment
		if len(current) > 0 {
			members++
		}
		for _, s := range current {
			perShard[s]++
		}
	}
	return perShard, members
}
