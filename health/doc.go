// Package health decides how a group's consumption is going and how many
// members it needs (docs/observability.md, "Consumption status" and
// "Scaling signal"), from samples of its shards that others take.
//
// It owns the rules and nothing else: per shard, a sliding window of
// samples (time, lag, the group's position, the entries ever added, the
// live members holding the shard, whether it is paused and which reset
// last set it) and the status they give (OK, PAUSED, LAGGING, REWOUND,
// STALLED, STOPPED) with since-when and evidence; per group, the most
// severe shard status with counts; and the scaling signal desiredMembers,
// with its inputs and hysteresis. A Tracker holds one group's windows and
// signal; Observe takes one round of samples and returns the Report.
//
// It is pure: no I/O, no clock (every time is a sample's), no goroutine,
// no lock (a Tracker is not safe for concurrent use; its owner,
// monitoring.Statuses, serialises it). It imports contract only, for the
// status names and the views (views.go) the API answers with.
package health
