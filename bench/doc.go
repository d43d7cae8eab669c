// Package bench is the load harness of cmd/coord-bench: it runs the
// coordinator as a separate process (built from ./cmd/coordinator, on a
// free loopback port, with a generated configuration) and drives its real
// HTTP API with simulated members that follow the heartbeat protocol
// (internal/testkit/membersim).
//
// Scenarios (Options.Scenarios):
//
//   - ceiling: the no-op heartbeat route of the same server stack
//     (debug.bench-endpoints) at maximum closed-loop load, and open loop at
//     a fraction of that rate: the denominator of the heartbeat figures;
//   - steady: heartbeats of settled members at maximum rate (closed loop)
//     and at a fixed offered rate (open loop);
//   - baseline: the steady closed loop with one critical section per
//     heartbeat (coordination.group-commit.enabled=false);
//   - churn: members join in waves, crash, leave and rejoin; it measures
//     convergence, shards moved against the minimum and double ownership;
//   - store: the steady closed loop on the memory, Redis and PostgreSQL
//     stores;
//   - multi: after steady, three coordinators of one cluster on the same
//     group, every heartbeat to one of them at random (goal P8a), then
//     the members following the group's owner (goal P8e);
//   - cluster: many groups, each on a stream prefix of its own, on one
//     coordinator and then on three with the members following the
//     groups' owners (X-Coordinator-Owner), a rolling restart and a
//     SIGKILL under load (goals P8b–d);
//   - dataplane: the Go client's data plane, client.Consumer (defaults,
//     no-op handler) against a plain go-redis loop (XREADGROUP COUNT 100
//     and the previous batch's XACK in one pipeline) on the same 200,000
//     entries of 4 shards, alternating runs, each on a consumer group of
//     its own (goals P12a–b: throughput and client CPU per entry);
//   - fleet: 10,000 groups of 16 shards, each on a stream prefix of its
//     own, created with defaults.max-groups set (P11e), then idle on three
//     coordinators: Redis CPU and round trips per 100 shards per lag
//     refresh (P11d); then 10 members per group (100,000), each
//     heartbeating every 10 s to its group's owner, driven open loop by a
//     pool of goroutines: the time until every group is settled (P11a),
//     each coordinator's peak RSS with them (P11c), and the SIGTERM of the
//     peer owning the most groups: the longest wait of a member for an OK,
//     FENCED answers and shard moves (P11b);
//   - scaling: one group of 16 shards read by client.Consumer members of
//     known capacity, a lag refresher round (the status and scaling
//     evaluation window) every second, 40 idle groups beside it: a step in
//     the ingest rate with a burst of entries, the windows until
//     desiredMembers reaches the members the bench computes (P13a), the
//     predicted against the measured drain time with that many members
//     (P13b), the changes of desiredMembers under a noisy steady rate
//     (P13c) and the refresher's round trips and commands per window
//     (P13d).
//
// Every coordinator of a run uses a Redis and, for the PostgreSQL store, a
// PostgreSQL of the run's own (internal/testkit/redisproc, internal/testkit/pgproc; see
// Runner.startStores), so that the server-wide store counters are the
// run's traffic alone; Options.RedisAddr and PostgresURL name external
// servers instead.
//
// Every coordinator process of a scenario has its own COORDINATOR_ID and
// COORDINATOR_CLUSTER_ADVERTISE_URL on the session's store and key
// prefix, so the processes of one session form one cluster.
//
// Every load phase reports throughput, a latency histogram (log-linear
// buckets, at most 1/64 relative error), heartbeat statuses and errors, the
// coordinator's CPU seconds and peak RSS (from /proc) and the bytes written
// to the store per heartbeat. A membersim.Oracle checks, over the members' read
// intervals, that no shard was read by two live members at once.
//
// Closed loop: Options.Connections workers each send back to back, every
// member driven by one worker only. Open loop: every member sends on its
// own schedule; latency is measured from the scheduled time, so a server
// that falls behind is charged for the wait (no coordinated omission).
package bench
