// Package attacktest holds the replay of issue 42's attacks (items 1–10 of
// "Least privilege") against real coordinator processes: coordinators
// built from ./cmd/coordinator (internal/testkit/coordproc, or the binary run
// directly where a test needs a configuration coordproc does not write,
// such as a non-loopback address or server.tls), on the shared Redis
// under key prefixes of their own (internal/testkit/testredis). Each attack is
// shown refused by what the coordinator answers and what it did (the
// store, Redis, /cluster, a counting proxy), and the two memory attacks
// (a far tail cursor, oversized batch bodies) by the coordinator's RSS,
// read from /proc, staying within 32 MiB of its baseline over 64 parallel
// attempts.
//
// The package has tests only; it runs in make test with the other
// packages (go test ./...).
package attacktest
