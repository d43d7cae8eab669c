package actors

import (
	"sync"
	"testing"
)

func TestWorkerDispatcherRunsEveryTurn(t *testing.T) {
	d := newWorkerDispatcher(dispatcherThroughput)
	var wg sync.WaitGroup
	var mu sync.Mutex
	ran := map[int]bool{}
	for i := range 1000 {
		wg.Add(1)
		d.Schedule(func() {
			defer wg.Done()
			mu.Lock()
			ran[i] = true
			mu.Unlock()
		})
	}
	wg.Wait()
	if len(ran) != 1000 {
		t.Fatalf("%d of 1000 turns ran", len(ran))
	}
}

// A turn that blocks (a group actor waiting on its store) never holds up
// another group's turn.
func TestWorkerDispatcherNeverQueuesBehindABlockedTurn(t *testing.T) {
	d := newWorkerDispatcher(dispatcherThroughput)
	release, blocked, other := make(chan struct{}), make(chan struct{}), make(chan struct{})
	d.Schedule(func() { close(blocked); <-release })
	<-blocked
	d.Schedule(func() { close(other) })
	<-other
	close(release)
}
