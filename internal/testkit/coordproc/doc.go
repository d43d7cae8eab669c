// Package coordproc builds ./cmd/coordinator (or takes the binary make test
// built once, see Build) and runs coordinator processes for tests, the
// benchmarks (bench) and the fault suite (chaos): a configuration file per
// process, a free port, readiness, stop and kill.
package coordproc
