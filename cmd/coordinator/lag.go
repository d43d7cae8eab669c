package main

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/redis-stream-coordinator/coordinator/actors"
	"github.com/redis-stream-coordinator/coordinator/group"
	httpapi "github.com/redis-stream-coordinator/coordinator/http"
	"github.com/redis-stream-coordinator/coordinator/metrics"
	"github.com/redis-stream-coordinator/coordinator/streams"
)

// lagRefresher keeps the data-plane gauges of every group fresh without
// anyone reading /offsets: lag, pending (through the observed data plane,
// which sets the shard gauges and group_lag/group_pending) and the
// dead-letter stream's length (dead_letter_entries), so that the lag,
// pending and dead-letter alerts have series to evaluate.
type lagRefresher struct {
	coord *actors.Coordinator
	data  observedDataPlane
	ops   httpapi.StreamOperator
	m     *metrics.Metrics
	log   *slog.Logger
}

// run refreshes every interval until ctx ends. A failed offsets read is
// counted by the observed data plane; a failed length read is logged at
// debug level (the next round retries).
func (r lagRefresher) run(ctx context.Context, interval time.Duration) {
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

func (r lagRefresher) refresh(ctx context.Context) {
	views, err := r.coord.Groups(ctx)
	if err != nil {
		return
	}
	for _, v := range views {
		key := group.Key{StreamPrefix: v.StreamPrefix, ConsumerGroup: v.ConsumerGroup}
		g, err := r.coord.Snapshot(ctx, key)
		if err != nil {
			continue
		}
		_, _ = r.data.CachedGroupOffsets(ctx, g)
		n, err := r.ops.DeadLetterLength(ctx, streams.DeadLetterStream(key.StreamPrefix))
		if err != nil {
			if !errors.Is(err, context.Canceled) {
				r.log.Debug("reading the dead-letter stream", "stream", key.StreamPrefix, "group", key.ConsumerGroup, "err", err)
			}
			continue
		}
		r.m.DeadLetters(key, n)
	}
}
