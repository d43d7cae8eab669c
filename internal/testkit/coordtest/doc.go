// Package coordtest starts in-process coordinators for tests: the store
// (memory, Redis under a key prefix of the test's own, or PostgreSQL on
// tables of the test's own), optionally a cluster node per coordinator,
// the actor system and the HTTP API on a loopback server, all stopped when
// the test ends. It owns that wiring, so that tests do not write it again,
// and the test-side views of a running coordinator: a protocol-following
// member whose heartbeat returns the decoded answer (Member), the first
// heartbeat of a member for tests that send it by hand (JoinHeartbeat), an
// admin client (Admin), waits on a condition with a message naming what
// was awaited (WaitFor), and fault injection into the store's group reads
// and writes (NewFaults, Faults: the test kit's one fault-injecting store,
// internal/testkit/faultstore).
//
// It wires what cmd/coordinator wires for the group API (store, node,
// actors, API, the node's hand-over hook) and stops it in the same order
// (Stop); cmd/coordinator's tests of that wiring hand in the pieces the
// process makes (Opened, Options.Node, Actors, API). Tests that need the
// process itself (configuration, signals, TLS files) start the binary
// through internal/testkit/coordproc instead.
package coordtest
