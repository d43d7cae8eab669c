package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/url"
	"strings"
	"sync"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/coordproc"
)

// cluster is the coordinator processes of a run. Slot i runs one process at
// a time; a stopped slot is restarted with the same configuration (on a new
// port, as coordproc.StartServer picks one). Each slot reaches Redis (and
// PostgreSQL, on the jdbc store) through links of its own, so that it can
// be cut off from the store while members still reach it. It is safe for
// concurrent use: members pick a live coordinator while the scheduler
// stops, restarts, cuts off and reconnects.
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
	// links carry the slot's store traffic: Redis, then PostgreSQL.
	links []*link
	// busy serialises kill and restart of the slot.
	busy sync.Mutex
}

// startCluster starts n coordinators concurrently.
func startCluster(ctx context.Context, bin, dir string, cfg coordproc.ServerConfig, n int) (*cluster, error) {
	c := &cluster{bin: bin, dir: dir, cfg: cfg}
	for i := range n {
		s := &slot{name: fmt.Sprintf("c%d", i)}
		c.slots = append(c.slots, s)
		targets := []string{cfg.RedisAddr}
		if cfg.JDBCURL != "" {
			u, err := url.Parse(cfg.JDBCURL)
			if err != nil {
				c.close()
				return nil, fmt.Errorf("jdbc url: %w", err)
			}
			targets = append(targets, u.Host)
		}
		for _, t := range targets {
			l, err := newLink(t)
			if err != nil {
				c.close()
				return nil, err
			}
			s.links = append(s.links, l)
		}
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
	cfg.RedisAddr = s.links[0].addr()
	if cfg.JDBCURL != "" {
		u, _ := url.Parse(cfg.JDBCURL) // parsed by startCluster
		u.Host = s.links[1].addr()
		cfg.JDBCURL = u.String()
	}
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
func (c *cluster) kill(i int) bool { return c.stop(i, (*coordproc.Server).Kill) }

// terminate stops the process of slot i with SIGTERM and waits for its
// ordered shutdown (its groups are handed over); false when it was down
// already.
func (c *cluster) terminate(i int) bool {
	return c.stop(i, func(srv *coordproc.Server) { _ = srv.Stop() })
}

// stop takes slot i out of the members' choice and ends its process with
// end; false when it was down already.
func (c *cluster) stop(i int, end func(*coordproc.Server)) bool {
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
	end(srv)
	return true
}

// isolate cuts slot i off from the store; members still reach it.
func (c *cluster) isolate(i int) {
	for _, l := range c.slots[i].links {
		l.cut()
	}
}

// reconnect ends the isolation of slot i.
func (c *cluster) reconnect(i int) {
	for _, l := range c.slots[i].links {
		l.heal()
	}
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

// route returns the name and root URL (scheme://host:port) of the
// coordinator a member's heartbeat goes to: the one at root owner when it
// is set (a process that is gone is named by its root: the heartbeat
// fails there, as a real member's would), else a live one chosen with rng
// (false when none is up).
func (c *cluster) route(owner string, rng *rand.Rand) (string, string, bool) {
	if owner == "" {
		name, base, ok := c.pick(rng)
		return name, strings.TrimSuffix(base, contract.BasePath), ok
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.slots {
		if s.srv != nil && s.srv.Root == owner {
			return s.name, owner, true
		}
	}
	return owner, owner, true
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

// close kills every process and closes the links.
func (c *cluster) close() {
	for i, s := range c.slots {
		c.kill(i)
		for _, l := range s.links {
			l.close()
		}
	}
}
