// Package workers runs short jobs that may block (a group actor's mailbox
// turn waiting on its store, a forwarded heartbeat waiting on its group
// actor) on kept goroutines: a job goes to an idle worker, and a new
// worker starts only when none is idle, so a job pays neither a goroutine
// start nor the stack growth of a fresh goroutine. A worker left idle for
// Idle exits, so the pool shrinks back after a burst. Jobs never wait for
// a worker: concurrency is what it would be with one goroutine per job.
package workers
