// Command coordinator runs the Redis Stream Coordinator: the configuration,
// the metadata store, the actor system and the HTTP API, wired together
// with an ordered shutdown on SIGINT/SIGTERM.
//
// Usage:
//
//	coordinator [-config FILE] [-log-format json|text] [-log-level debug|info|warn|error]
//	coordinator -version | -help
//
// Without -config the file named by $COORDINATOR_CONFIG is read. The file is
// merged over the embedded default configuration (in-memory store,
// 127.0.0.1:8080), and COORDINATOR_* environment variables override both
// (package config).
package main
