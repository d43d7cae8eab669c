package main

import (
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/monitoring"
)

// rebalance hands a group assigned by work the measure of its shards that
// the refresher just read (docs/assignment.md): each shard's ingest rate
// and backlog. The group actor weighs the shards and may move some
// (actors.System.Rebalance); it is not waited for. Groups assigned by
// count get nothing.
func (r *lagRefresher) rebalance(g *group.Group, o monitoring.Observation) {
	if g.AssignorOf() != group.AssignorWork {
		return
	}
	if err := r.coord.Rebalance(g.Key(), measureOf(o)); err != nil {
		r.log.Debug("sending a work measure", "group", g.Key().String(), "err", err)
	}
}

// measureOf is o as a work measure: the produced rate, the lag and the
// pending count of each shard (nil where Redis could not tell, or before
// the rate's second sample).
func measureOf(o monitoring.Observation) group.Measure {
	m := group.Measure{Shards: make([]group.ShardMeasure, len(o.Shards))}
	for i, s := range o.Shards {
		m.Shards[i] = group.ShardMeasure{Shard: s.Shard, Rate: s.Produced, Lag: s.Lag, Pending: s.GroupPending}
	}
	return m
}
