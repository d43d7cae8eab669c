package main

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/redis-stream-coordinator/coordinator/actors"
	"github.com/redis-stream-coordinator/coordinator/metrics"
	"github.com/redis-stream-coordinator/coordinator/streams"
)

// lagRefresher keeps the data-plane gauges of every group placed on this
// coordinator (each group's owner refreshes its own) fresh without
// anyone reading /offsets: lag, pending (through the observed data plane,
// which sets the shard gauges and group_lag/group_pending) and the group's
// entries in its prefix's dead-letter stream (dead_letter_entries: those
// it dead-lettered and those naming no group, as its dead-letter page
// lists them), so that the lag, pending and dead-letter alerts have series
// to evaluate.
type lagRefresher struct {
	coord       *actors.Coordinator
	data        observedDataPlane
	deadLetters deadLetterCounter
	m           *metrics.Metrics
	log         *slog.Logger
	// tallies are the dead-letter counts of the known groups' prefixes by
	// dead-letter stream, kept between rounds so that a round reads only
	// the entries added since the last.
	tallies map[string]*streams.DeadLetterTally
}

// deadLetterCounter counts a dead-letter stream's entries by group;
// streams.Operator implements it.
type deadLetterCounter interface {
	UpdateTally(ctx context.Context, dlq string, t *streams.DeadLetterTally) error
}

// run refreshes every interval until ctx ends. A failed offsets read is
// counted by the observed data plane; a failed dead-letter count is logged
// at debug level and leaves the gauge as it was (the next round retries).
func (r *lagRefresher) run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			r.refresh(ctx)
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
		_, _ = r.data.CachedGroupOffsets(ctx, g)
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
