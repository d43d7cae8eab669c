package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"

	"github.com/redis-stream-coordinator/coordinator/internal/coordproc"
)

// cluster is the coordinator processes of a run. Slot i runs one process at
// a time; a killed slot is restarted with the same configuration (on a new
// port, as coordproc.StartServer picks one). It is safe for concurrent use:
// members pick a live coordinator while the scheduler kills and restarts.
type cluster struct {
	bin, dir string
	cfg      coordproc.ServerConfig

	mu    sync.Mutex
	slots []*slot
}

// slot is one coordinator of the cluster.
type slot struct {
	name string
	srv  *coordproc.Server // nil while down
	runs int               // processes started so far
	// busy serialises kill and restart of the slot.
	busy sync.Mutex
}

// startCluster starts n coordinators concurrently.
func startCluster(ctx context.Context, bin, dir string, cfg coordproc.ServerConfig, n int) (*cluster, error) {
	c := &cluster{bin: bin, dir: dir, cfg: cfg}
	for i := range n {
		c.slots = append(c.slots, &slot{name: fmt.Sprintf("c%d", i)})
	}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { errs[i] = c.start(ctx, i) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			c.close()
			return nil, err
		}
	}
	return c, nil
}

// start runs a new process in slot i, which must be down.
func (c *cluster) start(ctx context.Context, i int) error {
	s := c.slots[i]
	c.mu.Lock()
	s.runs++
	name := fmt.Sprintf("%s.%d", s.name, s.runs)
	c.mu.Unlock()
	cfg := c.cfg
	srv, err := coordproc.StartServer(ctx, c.bin, c.dir, name, cfg)
	if err != nil {
		return fmt.Errorf("coordinator %s: %w", name, err)
	}
	c.mu.Lock()
	s.srv = srv
	c.mu.Unlock()
	return nil
}

// kill SIGKILLs the process of slot i; false when it was down already.
func (c *cluster) kill(i int) bool {
	s := c.slots[i]
	s.busy.Lock()
	defer s.busy.Unlock()
	c.mu.Lock()
	srv := s.srv
	s.srv = nil // members stop choosing it before it dies
	c.mu.Unlock()
	if srv == nil {
		return false
	}
	srv.Kill()
	return true
}

// restart starts slot i again if it is down, retrying up to 10 times
// (a coordinator may fail to start while the store is down).
func (c *cluster) restart(ctx context.Context, i int) error {
	s := c.slots[i]
	s.busy.Lock()
	defer s.busy.Unlock()
	for attempt := 1; ; attempt++ {
		c.mu.Lock()
		up := s.srv != nil
		c.mu.Unlock()
		if up {
			return nil
		}
		err := c.start(ctx, i)
		if err == nil || ctx.Err() != nil || attempt == 10 {
			return err
		}
	}
}

// pick returns the name and base URL of a live coordinator chosen with
// rng, or false when none is up.
func (c *cluster) pick(rng *rand.Rand) (string, string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var live []*slot
	for _, s := range c.slots {
		if s.srv != nil {
			live = append(live, s)
		}
	}
	if len(live) == 0 {
		return "", "", false
	}
	s := live[rng.IntN(len(live))]
	return s.name, s.srv.Base, true
}

// up reports how many coordinators are up.
func (c *cluster) up() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, s := range c.slots {
		if s.srv != nil {
			n++
		}
	}
	return n
}

// close kills every process.
func (c *cluster) close() {
	for i := range c.slots {
		c.kill(i)
	}
}
