// Package metrics is the coordinator's Prometheus instrumentation
// (docs/protocol.md §10.1, the seed's "Metrics"). There are no globals: New
// builds every collector and registers it with the Registerer it is given,
// wrapped so that every series carries the constant label
// coordinator=<coordinator id>. docs/observability.md lists every metric.
//
// # Sources
//
//   - The actor runtime: *Metrics implements actors.Observer (message
//     latency by type, group commit batch size and duration, mailbox depth,
//     restarts, live actors, revision conflicts, and the committed state of
//     every group through GroupCommitted and GroupStats).
//   - The HTTP edge: *Metrics implements observe.RequestObserver, which
//     the edge reports to (metrics does not import the edge); wire
//     httpapi.ObserveRequests (first middleware) and
//     httpapi.ObserveRuntime to get api_request_*, heartbeat_total,
//     producer routing, admin mutation and scale counters; Health
//     decorates the edge's observe.HealthChecker.
//   - Persistence: Store and Locker decorate a persistence.Store and
//     Locker (write latency and results, mutex latency and timeouts);
//     WatchBreaker exports a persistence/breaker state.
//   - Health and monitoring: SetUp (redis_stream_coord_up, set by every
//     health check), ShardOffsets (the offset gauges, fed by the code that
//     computes stream offsets), SetHealth (the consumption status and
//     scaling gauges, fed by the lag refresher) and
//     MonitoringRefreshFailed.
//
// # Cost and label bounds
//
// GroupCommitted runs after every commit — many per second for a large
// group — and does O(records) work: expiries and fencings are counted
// exactly, from the records that carry them out
// (group.MemberRecord.Event), once, by the coordinator that decided them,
// as soon as they are committed; a group commit that raised the
// assignment epoch counts a rebalance. GroupStats keeps the group's
// group.Stats (kept up to date by Apply, no pass over the members) and
// counts in invariant_violation_total the
// violations each commit introduced.
//
// Every gauge is computed at scrape time by one collector: the group
// gauges from the last stats (O(1) per group); the per-member and
// per-progress gauges, when WithMemberSeries is on, from each group's
// committed snapshot read through the Source given to SetSource or Run
// (the actors.System), for at most that many members per group; the
// shard gauges from the last ShardOffsets. Age gauges are computed against
// the clock when scraped, a pruned member's series vanish with it, and a
// deleted group (GroupCommitted with Exists() false) loses every series,
// its counters included. Only the first WithGroupSeries groups by key
// have series of their own (and member and shard series); the others are
// added up into series labelled LabelOther, so a scrape is bounded however
// many groups there are. Stream and group names taken from requests become label values only for groups the
// coordinator knows; other requests are labelled "unknown", and routes
// without a group "none", so clients cannot grow the label space.
//
// # Timers
//
// docs/protocol.md §10.1 timers expose _count and _sum. api_request_duration_seconds is a
// Summary with the 0.5, 0.95 and 0.99 quantiles over a one-minute window,
// labelled by route, method, status and outcome only (a summary per group
// would cost ~46 KB of memory per group and status);
// every other timer is a Histogram (0.5 ms to 16 s buckets), so quantiles
// aggregate across coordinators with histogram_quantile. No _max gauge is
// exported: a correct decaying maximum per series costs more than it
// tells beyond the 0.99 quantile.
package metrics
