package actors

import (
	"time"

	"github.com/asynkron/protoactor-go/actor"
)

// workerDispatcher is the protoactor dispatcher of the group actors: it
// runs each mailbox turn on an idle worker goroutine and starts a new
// worker only when none is idle, so a turn pays neither a goroutine start
// nor the stack growth of a fresh goroutine (protoactor's default
// dispatcher starts one goroutine per turn). A worker left idle for
// workerIdle exits, so the pool shrinks back after a burst. Turns never
// wait for a worker: concurrency is what it would be with the default
// dispatcher.
type workerDispatcher struct {
	throughput int
	idle       chan func() // unbuffered: a send succeeds only to a waiting worker
}

// workerIdle is how long a worker waits for a turn before it exits.
const workerIdle = 10 * time.Second

// dispatcherThroughput is protoactor's default: a turn handles at most
// this many messages before it yields the processor.
const dispatcherThroughput = 300

// newWorkerDispatcher returns a dispatcher whose turns each handle at most
// throughput messages before yielding.
func newWorkerDispatcher(throughput int) *workerDispatcher {
	return &workerDispatcher{throughput: throughput, idle: make(chan func())}
}

// Schedule implements actor.Dispatcher.
func (d *workerDispatcher) Schedule(turn func()) {
	select {
	case d.idle <- turn:
	default:
		go d.work(turn)
	}
}

// Throughput implements actor.Dispatcher.
func (d *workerDispatcher) Throughput() int { return d.throughput }

// work runs turn, then every turn handed to it, until it has been idle for
// workerIdle.
func (d *workerDispatcher) work(turn func()) {
	t := time.NewTimer(workerIdle)
	defer t.Stop()
	for {
		turn()
		t.Reset(workerIdle)
		select {
		case turn = <-d.idle:
		case <-t.C:
			return
		}
	}
}

var _ actor.Dispatcher = (*workerDispatcher)(nil)
