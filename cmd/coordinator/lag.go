package main

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/redis-stream-coordinator/coordinator/actors"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/metrics"
	"github.com/redis-stream-coordinator/coordinator/monitoring"
	"github.com/redis-stream-coordinator/coordinator/streams"
)

// lagRefresher keeps the data-plane gauges of every group placed on this
// coordinator (each group's owner refreshes its own) fresh without anyone
// reading /offsets: lag, pending (group_lag, group_pending and the shard
// gauges, as an offsets read sets them) and the group's entries in its
// prefix's dead-letter stream (dead_letter_entries: those it dead-lettered
// and those naming no group, as its dead-letter page lists them), so that
// the lag, pending and dead-letter alerts have series to evaluate. Each
// round reads the groups one at a time and renews the offset cache's
// observation of every group whose Grafana rows were read, so that those
// reads between rounds find it fresh (monitoring.Reader.Refresh).
type lagRefresher struct {
	coord       *actors.Coordinator
	offsets     offsetRefresher
	deadLetters deadLetterCounter
	m           *metrics.Metrics
	log         *slog.Logger
	// tallies are the dead-letter counts of the known groups' prefixes by
	// dead-letter stream, kept between rounds so that a round reads only
	// the entries added since the last.
	tallies map[string]*streams.DeadLetterTally
}

// offsetRefresher observes a group's shards into the offset cache, and
// forgets the groups not observed for a while; *monitoring.Reader
// implements it.
type offsetRefresher interface {
	Refresh(ctx context.Context, g *group.Group) (monitoring.Observation, error)
	Forget(before time.Time)
}

// observationRetention is how long the rate samples and cached
// observations of a group nobody observes are kept: long enough for a
// dashboard refreshed every few minutes to keep its rates, short enough
// that deleted groups, and groups now read elsewhere, do not pile up.
const observationRetention = time.Hour

// deadLetterCounter counts a dead-letter stream's entries by group;
// streams.Operator implements it.
type deadLetterCounter interface {
	UpdateTally(ctx context.Context, dlq string, t *streams.DeadLetterTally) error
}

// run refreshes every interval until ctx ends, forgetting after each round
// the groups not observed within observationRetention. A failed offsets read is
// counted in monitoring_refresh_failed_total{projection="offsets"} and
// leaves the gauges as they were; a failed dead-letter count is logged at
// debug level and leaves the gauge as it was (the next round retries).
func (r *lagRefresher) run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			r.refresh(ctx)
			r.offsets.Forget(time.Now().Add(-observationRetention))
		}
	}
}

func (r *lagRefresher) refresh(ctx context.Context) {
	keys, err := r.coord.PlacedKeys(ctx)
	if err != nil {
		return
	}
	tallies := map[string]*streams.DeadLetterTally{}
	failed := map[string]bool{}
	for _, key := range keys {
		g, err := r.coord.Snapshot(ctx, key)
		if err != nil {
			continue
		}
		r.refreshOffsets(ctx, g)
		dlq := streams.DeadLetterStream(key.StreamPrefix)
		t, counted := tallies[dlq]
		if !counted {
			t = cmp.Or(r.tallies[dlq], &streams.DeadLetterTally{})
			tallies[dlq] = t
			if err := r.deadLetters.UpdateTally(ctx, dlq, t); err != nil {
				failed[dlq] = true
				if !errors.Is(err, context.Canceled) {
					r.log.Debug("counting the dead-letter stream", "stream", dlq, "err", err)
				}
			}
		}
		if !failed[dlq] {
			r.m.DeadLetters(key, t.Of(key.ConsumerGroup))
		}
	}
	r.tallies = tallies
}

// refreshOffsets observes g's shards (renewing its offset cache entry) and sets its
// shard gauges from the observation, as an offsets read would
// (observedDataPlane), without building the rows of the shards that get no
// series.
func (r *lagRefresher) refreshOffsets(ctx context.Context, g *group.Group) {
	o, err := r.offsets.Refresh(ctx, g)
	if offsetsRead(r.m, err) {
		gauges := monitoring.Gauges(g, o, r.m.ShardSeries())
		r.m.SetShardOffsets(g.Key(), gauges.Lag, gauges.Pending, shardSamples(gauges.Rows))
	}
}
