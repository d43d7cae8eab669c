package main

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/redis-stream-coordinator/coordinator/actors"
	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/metrics"
	"github.com/redis-stream-coordinator/coordinator/monitoring"
	"github.com/redis-stream-coordinator/coordinator/streams"
)

// lagRefresher keeps the data-plane gauges of every group placed on this
// coordinator (each group's owner refreshes its own) fresh without anyone
// reading /offsets: lag, pending (group_lag, group_pending and the shard
// gauges, as an offsets read sets them), the group's entries in its
// prefix's dead-letter stream (dead_letter_entries: those it dead-lettered
// and those naming no group, as its dead-letter page lists them), and the
// consumption status and scaling signal evaluated from the same reads
// (status.go), so that the lag, pending, dead-letter and status alerts
// have series to evaluate.
//
// A round reads the shards of all the groups together, in pipelines of up
// to 1,000 shards that span groups, and renews the offset cache's
// observation of every group whose Grafana rows were read, so that those
// reads between rounds find it fresh (monitoring.Reader.RefreshAll). It
// does not read streams known not to exist: a shard whose read found no
// stream, and a dead-letter stream an EXISTS found absent, are remembered
// as missing and observed as empty without a command; the missing streams
// are checked with pipelined EXISTS every checkEvery rounds at least (less
// often when there are so many that checkBudget would be exceeded), and
// read again from the round after one appears. Rounds start every
// interval, or less often when the shards read would exceed readBudget.
type lagRefresher struct {
	coord       *actors.System
	offsets     offsetRefresher
	deadLetters deadLetterCounter
	m           *metrics.Metrics
	log         *slog.Logger
	now         func() time.Time
	// status evaluates each group's consumption status and scaling
	// signal from the round's observations (status.go); nil: none.
	status *monitoring.Statuses
	// tallies are the dead-letter counts of the known groups' prefixes by
	// dead-letter stream, kept between rounds so that a round reads only
	// the entries added since the last.
	tallies map[string]*streams.DeadLetterTally
	// exists holds the streams of the last round's groups (shards and
	// dead-letter streams) known to exist (true) or not (false).
	exists map[string]bool
	// checked is when the missing streams were last checked, checkAfter
	// how long after that they are checked again.
	checked    time.Time
	checkAfter time.Duration
}

// offsetRefresher observes groups' shards into the offset cache and
// checks which streams exist, and forgets the groups not observed for a
// while; *monitoring.Reader implements it.
type offsetRefresher interface {
	RefreshAll(ctx context.Context, groups []*group.Group, missing func(streamKey string) bool) ([]monitoring.Observation, streams.Cost, error)
	Existing(ctx context.Context, keys []string) ([]bool, streams.Cost, error)
	Forget(before time.Time)
}

// observationRetention is how long the rate samples and cached
// observations of a group nobody observes are kept: long enough for a
// dashboard refreshed every few minutes to keep its rates, short enough
// that deleted groups, and groups now read elsewhere, do not pile up.
const observationRetention = time.Hour

// The refresher's budgets: shards read per second (3 commands each), and
// missing streams checked per second (one EXISTS each); missing streams
// are checked every checkEvery rounds when that stays within the budget.
const (
	readBudget  = 2000
	checkBudget = 20000
	checkEvery  = 4
)

// deadLetterCounter counts a dead-letter stream's entries by group;
// streams.Operator implements it.
type deadLetterCounter interface {
	UpdateTally(ctx context.Context, dlq string, t *streams.DeadLetterTally) error
}

// run refreshes until ctx ends, a round every interval or, with many
// shards to read, every shards/readBudget seconds, forgetting after each
// round the groups not observed within observationRetention. A failed
// offsets read is counted in monitoring_refresh_failed_total{projection="offsets"}
// and leaves the gauges as they were; a failed dead-letter count is logged
// at debug level and leaves the gauge as it was (the next round retries).
func (r *lagRefresher) run(ctx context.Context, interval time.Duration) {
	if r.now == nil {
		r.now = time.Now
	}
	r.m.LagRefreshed(r.now())
	t := time.NewTimer(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			read := r.refresh(ctx, interval)
			r.offsets.Forget(r.now().Add(-observationRetention))
			t.Reset(max(interval, time.Duration(read)*time.Second/readBudget))
		}
	}
}

// refresh runs one round and returns how many shards it read.
func (r *lagRefresher) refresh(ctx context.Context, interval time.Duration) int {
	start := r.now()
	keys, err := r.coord.PlacedKeys(ctx)
	if err != nil {
		return 0
	}
	groups := make([]*group.Group, 0, len(keys))
	for _, key := range keys {
		if g, err := r.coord.Snapshot(ctx, key); err == nil {
			groups = append(groups, g)
		}
	}
	exists := r.check(ctx, groups, interval)
	observations, cost, err := r.offsets.RefreshAll(ctx, groups, func(k string) bool { known, ok := exists[k]; return ok && !known })
	r.m.LagRefreshSent("observe", cost.Commands, cost.RoundTrips)
	read := cost.Commands / 3
	if offsetsRead(r.m, err) {
		at := r.now()
		for i, g := range groups {
			for _, s := range observations[i].Shards {
				exists[s.StreamKey] = !s.Missing
			}
			r.evaluate(g, observations[i], at)
			gauges := monitoring.Gauges(g, observations[i], r.m.ShardSeries())
			r.m.SetShardOffsets(g.Key(), gauges.Lag, gauges.Pending, shardSamples(gauges.Rows))
			r.rebalance(g, observations[i])
		}
	}
	r.exists = exists
	if r.status != nil {
		r.status.Retain(keys)
	}
	r.countDeadLetters(ctx, groups)
	if err == nil {
		r.m.LagRefreshed(start)
	}
	return read
}

// check returns which streams of groups are known to exist: those the
// last round knew, with the dead-letter streams not known yet and, when
// due, the missing ones checked (Existing) now.
func (r *lagRefresher) check(ctx context.Context, groups []*group.Group, interval time.Duration) map[string]bool {
	exists := make(map[string]bool, len(r.exists))
	due := r.now().Sub(r.checked) >= max(r.checkAfter, checkEvery*interval)
	var unknown []string
	for _, g := range groups {
		for _, s := range streams.ShardsOf(g.Meta.StreamPrefix, g.ShardCount) {
			if known, ok := r.exists[s.Key]; ok {
				exists[s.Key] = known
				if !known && due {
					unknown = append(unknown, s.Key)
				}
			}
		}
		dlq := contract.DeadLetterStream(g.Meta.StreamPrefix)
		if _, seen := exists[dlq]; seen {
			continue
		}
		known, ok := r.exists[dlq]
		exists[dlq] = known
		if !ok || !known && due {
			unknown = append(unknown, dlq)
		}
	}
	if len(unknown) == 0 {
		return exists
	}
	found, cost, err := r.offsets.Existing(ctx, unknown)
	r.m.LagRefreshSent("exists", cost.Commands, cost.RoundTrips)
	if err != nil {
		r.log.Debug("checking which streams exist", "err", err)
		for _, k := range unknown {
			exists[k] = true // read them, as if unknown
		}
		return exists
	}
	for i, k := range unknown {
		exists[k] = found[i]
	}
	if due {
		r.checked = r.now()
		r.checkAfter = time.Duration(len(unknown)) * time.Second / checkBudget
	}
	return exists
}

// countDeadLetters updates the dead-letter tally of every group's prefix
// whose dead-letter stream exists (r.exists) and sets the groups'
// dead-letter gauges; a missing stream counts none.
func (r *lagRefresher) countDeadLetters(ctx context.Context, groups []*group.Group) {
	tallies := map[string]*streams.DeadLetterTally{}
	failed := map[string]bool{}
	for _, g := range groups {
		key := g.Key()
		dlq := contract.DeadLetterStream(key.StreamPrefix)
		t, counted := tallies[dlq]
		if !counted {
			t = &streams.DeadLetterTally{}
			if r.exists[dlq] {
				t = cmp.Or(r.tallies[dlq], t)
				// At least one round trip of XLEN and XRANGE; more only
				// when over a batch of new entries is read.
				r.m.LagRefreshSent("dead_letters", 2, 1)
				if err := r.deadLetters.UpdateTally(ctx, dlq, t); err != nil {
					failed[dlq] = true
					if !errors.Is(err, context.Canceled) {
						r.log.Debug("counting the dead-letter stream", "stream", dlq, "err", err)
					}
				}
			}
			tallies[dlq] = t
		}
		if !failed[dlq] {
			r.m.DeadLetters(key, t.Of(key.ConsumerGroup))
		}
	}
	r.tallies = tallies
}
