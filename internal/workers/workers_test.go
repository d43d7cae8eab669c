package workers_test

import (
	"sync"
	"testing"

	"github.com/redis-stream-coordinator/coordinator/internal/workers"
)

func TestEveryJobRuns(t *testing.T) {
	p := workers.New()
	var wg sync.WaitGroup
	var mu sync.Mutex
	ran := map[int]bool{}
	for i := range 1000 {
		wg.Add(1)
		p.Go(func() {
			defer wg.Done()
			mu.Lock()
			ran[i] = true
			mu.Unlock()
		})
	}
	wg.Wait()
	if len(ran) != 1000 {
		t.Fatalf("%d of 1000 jobs ran", len(ran))
	}
}

// A job that blocks (a group actor waiting on its store) never holds up
// another job.
func TestNoJobQueuesBehindABlockedOne(t *testing.T) {
	p := workers.New()
	release, blocked, other := make(chan struct{}), make(chan struct{}), make(chan struct{})
	p.Go(func() { close(blocked); <-release })
	<-blocked
	p.Go(func() { close(other) })
	<-other
	close(release)
}
