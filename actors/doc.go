// Package actors is the coordinator's runtime: it turns the pure domain of
// package group into a concurrent, persistent service.
//
// A [System] owns a protoactor-go actor system with one GroupManager
// actor and one GroupActor child per consumer group. Each GroupActor
// serialises everything that touches its group (heartbeats, admin commands,
// reads, ticks) and persists through a persistence.Store:
//
//   - With a cluster (Options.Ownership), an actor serves its group only
//     as its owner. Where a request is served was decided at the HTTP edge
//     (cluster.Node.Route) and the actor does not decide it again; it
//     applies the fencing: it acquires the group before its first request
//     (a refusal names the owner the store knows), its writes are fenced by the ownership
//     epoch, it answers nothing once the process stops serving, and on a
//     placement change it flushes, releases the group and passivates
//     (docs/cluster.md).
//   - Each actor is a thin loop around its pure core (package core, in the
//     shape of etcd raft's RawNode): the core keeps two copies of the
//     group, committed (what the store holds, plus the lease renewals,
//     which are never written: liveness lives in the owner's memory) and
//     working (committed plus the changes of the pending batch), the
//     stored revision and the pending entries. The actor steps heartbeats,
//     ticks, flushes and admin commands into it (typed values,
//     core.Command, which the core interprets by calling the domain); each
//     Ready says what to load or write, whom to answer with what (a
//     command's outcome and answer in Ready.Done) and what to report; the
//     actor performs that I/O and reports the outcome with Advance
//     (group_actor.go drive; store.go holds the I/O, admin.go and
//     liveops.go the admin requests, with their Redis steps between the
//     commands, caps.go the admission of creates under the group caps).
//     Handlers run on working; reads answer from committed.
//   - Reads do not enter the mailbox while the group's published snapshot
//     (an immutable clone of committed, built lazily once per version and
//     dropped at the next commit) is current: every commit bumps a version
//     before anyone is answered, so a coordinator reads its own writes.
//     Admin commands publish before they answer. After
//     each commit the actor reports the group's stats (group.Stats, kept
//     up to date by Apply) for the metrics gauges.
//   - Heartbeats and ticks are group-committed (docs/architecture.md principle 5):
//     their records join a batch, the first request of a batch sends the
//     actor a flush message, and because the mailbox is FIFO everything
//     queued before it joins the same commit. No request is answered before
//     the commit holding its change returns.
//   - Commit outcomes follow persistence.Classify: a revision conflict
//     reloads the group and re-runs the whole batch (bounded attempts); an
//     unavailable store or mutex timeout discards the batch and fails its
//     heartbeats with contract.ErrNotStored (the HTTP layer answers status
//     RETRY); an unknown outcome fails them the same way and reloads the
//     group before its next request; a corrupt group fails closed.
//   - A panic while handling a message answers that message and every parked
//     request with contract.ErrInternal, then lets the supervisor restart
//     the actor, which reloads its state from the store.
//   - Resharding (docs/protocol.md §6) reaches the data plane through two narrow interfaces:
//     a Provisioner creates shard streams and consumer groups once the
//     metadata naming them is stored (create, scale, routing reads), and a
//     DrainChecker confirms on ticks that a scale-in's removed shards are
//     drained. Each Redis call is bounded by StoreTimeout.
//
// The System is the facade the HTTP layer calls (its methods are in
// the coordinator*.go files, run on the caller's goroutine; the actor's side
// is in the others): each command sends one message straight to the group's
// actor (a concurrent registry maps group
// keys to PIDs; only a missing actor costs a hop through the manager) and
// waits for the reply, the caller's context or RequestTimeout. The actor of
// a group that does not exist (an unknown key, a deleted group) passivates
// once idle; the manager holds requests for the key until it has stopped, so
// a group never has two actors. A ticker drives time-based maintenance;
// Shutdown drains every actor before returning.
package actors
