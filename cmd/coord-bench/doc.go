// Command coord-bench runs the coordinator's load scenarios (package bench)
// and prints a table of every load phase, the churn figures and goals
// P1–P5 of issue #7 with PASS/MISS; it writes the report as JSON to
// <out>/<date>-<name>.json.
//
//	go run ./cmd/coord-bench                                  # the default suite (make bench)
//	go run ./cmd/coord-bench -scenarios store -members 1000 -shards 10000
//	go run ./cmd/coord-bench -scenarios steady -profile 10s  # with a coordinator CPU profile
//
// It builds ./cmd/coordinator and runs it as a separate process on a free
// loopback port, on a throwaway redis-server and (for the PostgreSQL
// store) a throwaway PostgreSQL of the run's own; -redis and -postgres
// name external servers instead. When a throwaway server cannot start it
// warns and uses the shared one (127.0.0.1:6379, 127.0.0.1:5432), and the
// store-traffic goals it would measure are INVALID.
package main
