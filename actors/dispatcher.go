package actors

import (
	"github.com/asynkron/protoactor-go/actor"

	"github.com/redis-stream-coordinator/coordinator/internal/workers"
)

// workerDispatcher is the protoactor dispatcher of the group actors: it
// runs each mailbox turn on a kept worker (package workers), so a turn
// pays neither a goroutine start nor the stack growth of a fresh goroutine
// (protoactor's default dispatcher starts one goroutine per turn), and a
// turn never waits for a worker.
type workerDispatcher struct {
	throughput int
	pool       *workers.Pool
}

// dispatcherThroughput is protoactor's default: a turn handles at most
// this many messages before it yields the processor.
const dispatcherThroughput = 300

// newWorkerDispatcher returns a dispatcher whose turns each handle at most
// throughput messages before yielding.
func newWorkerDispatcher(throughput int) *workerDispatcher {
	return &workerDispatcher{throughput: throughput, pool: workers.New()}
}

// Schedule implements actor.Dispatcher.
func (d *workerDispatcher) Schedule(turn func()) { d.pool.Go(turn) }

// Throughput implements actor.Dispatcher.
func (d *workerDispatcher) Throughput() int { return d.throughput }

var _ actor.Dispatcher = (*workerDispatcher)(nil)
