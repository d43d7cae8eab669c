// Package chaos is the fault-injection suite of cmd/coord-chaos and of
// TestChaosShort: it runs several coordinator processes (coordproc.StartServer)
// on one shared store (a throwaway redis-server with appendfsync always,
// or a schema of its own in PostgreSQL), drives simulated members
// (internal/testkit/membersim) that send every heartbeat to a randomly chosen live
// coordinator (Options.Routing membersim.Spread, the default) or to the
// group's owner named by the last answer, falling back to a random live
// one (membersim.Follow; coord-chaos -routing follow), and injects a
// seeded schedule of faults:
//
//   - coordinator SIGKILL and restart (on a new port);
//   - coordinator cut off from the store and reconnected: each coordinator
//     reaches Redis (and PostgreSQL) through a relay of its own that a
//     fault cuts like a network partition (no byte through, nothing
//     refused), while members still reach the coordinator;
//   - rolling restart: every coordinator in turn stopped with SIGTERM
//     (ordered shutdown, its groups handed over) and started again before
//     the next;
//   - Redis SIGKILL and restart (same port and data directory; Redis store
//     only, the shared PostgreSQL is never stopped);
//   - member crash (the process stops heartbeating and reading at once and
//     comes back later as a new process, epoch 0);
//   - member partition and heal (no heartbeat gets through, but the member
//     keeps reading until its local lease ends; on heal it carries on with
//     its old epoch and sets);
//   - lost answers (the coordinator processed the heartbeat, the member
//     never sees the answer), and duplicated, delayed heartbeats (an old
//     request body re-sent later; the member ignores the answer);
//   - scale-out and scale-in of the group's shard count;
//   - shards paused and resumed, and live offset resets of the real
//     consumers' group that move a shard back (liveops.go).
//
// The members run the one member state machine (package client/member, through
// internal/testkit/membersim), local lease rule included (docs/protocol.md, the
// deliberate improvement 3): a member stops reading every shard once no
// heartbeat has been answered (OK, REVOKE_PENDING or SYNC_METADATA) for one
// lease TTL since the send time of its last answered heartbeat. Reads are
// recorded as the members really perform them, so a partitioned member
// reads until its local lease ends.
//
// Beside the simulated members, Options.RealMembers real client.Consumers
// (3 by default) run in a group of their own ("real") over real shard
// streams in the run's Redis, fed by a client.Producer: slow handlers,
// graceful shutdowns (the context cancelled: drain under a live lease,
// then leave) and crashes (every connection fails at once, what was being
// handled is cut short), each process replaced by a new one. Their
// heartbeats go through a proxy to a random live coordinator, so they see
// the coordinator and Redis faults too.
//
// A run fails on any of (see Result.Failed):
//
//   - a real entry handled by two processes at overlapping times, a key's
//     first deliveries handled out of stream order within one process's
//     tenure, or a written entry never handled by the end of the heal
//     phase;
//   - an overlap: two members reading one shard at the same time (strict:
//     membersim.Oracle with every member live for the whole run);
//   - no balanced settle within Options.SettleTimeout after the faults
//     stop: every member reads exactly its target, target sizes differ by
//     at most one, the target covers every shard and the assignments view
//     has no invariant violations;
//   - a lost admin change: the final shard count is not the last
//     acknowledged scale target (or a later unacknowledged one), or an
//     acknowledged migration is missing from the migrations view;
//   - an epoch that moves back: an answer whose groupEpoch,
//     assignmentEpoch or metadataVersion (or, per member, memberEpoch) is
//     lower than that of an answer received before it was sent.
//
// Every violation is reported with the timeline of the members involved
// (heartbeats sent and answered with status, epochs and sets, lease lapses
// and faults), so a failing seed can be replayed with -seed.
//
// The sink scenario (RunSinks, sinks.go; TestChaosSinksShort and
// coord-chaos -sinks) runs consumer processes (the running executable
// again, SinkConsumerEnv) that write every entry's effect through the
// fenced Redis and PostgreSQL sinks (client/sink/...) while it SIGKILLs
// them, stops one past its lease in a handler call (SIGSTOP) and resumes
// it (SIGCONT) once its shards were written under a later grant, cuts one
// off from the coordinators past its lease, kills coordinators and moves
// shards back with live resets. Its oracle splits
// each sink's per-shard log of applied entries into reset generations and
// fails a run on an entry applied twice in one generation, an entry never
// applied, a replay no live reset explains, a zombie write the fence
// accepted, or a run without zombie writes.
package chaos
