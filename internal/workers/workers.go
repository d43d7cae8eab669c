package workers

import "time"

// Idle is how long a worker waits for another job before it exits.
const Idle = 10 * time.Second

// Pool is a set of kept workers; the zero value is not usable (New).
type Pool struct {
	idle chan func() // unbuffered: a send succeeds only to a waiting worker
}

// New returns an empty pool.
func New() *Pool { return &Pool{idle: make(chan func())} }

// Go runs job on an idle worker, or on a new one when none is idle.
func (p *Pool) Go(job func()) {
	select {
	case p.idle <- job:
	default:
		go p.work(job)
	}
}

// work runs job, then every job handed to it, until it has been idle for
// Idle.
func (p *Pool) work(job func()) {
	t := time.NewTimer(Idle)
	defer t.Stop()
	for {
		job()
		t.Reset(Idle)
		select {
		case job = <-p.idle:
		case <-t.C:
			return
		}
	}
}
