package client

import (
	"context"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-stream-coordinator/coordinator/internal/testkit/coordproc"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/testredis"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// coordinatorBin builds ./cmd/coordinator once per test binary.
func coordinatorBin(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "client-coord-*")
		if err != nil {
			buildErr = err
			return
		}
		binPath, buildErr = coordproc.Build(context.Background(), dir, "coordinator")
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// startCoordinator starts a real coordinator process with a short
// interval and lease on the given store, with env added to its
// environment.
func startCoordinator(t *testing.T, store, redisAddr, keyPrefix string, lease time.Duration, env ...string) *coordproc.Server {
	t.Helper()
	s, err := coordproc.StartServer(context.Background(), coordinatorBin(t), t.TempDir(), "coord", coordproc.ServerConfig{
		Store: store, KeyPrefix: keyPrefix, RedisAddr: redisAddr,
		Interval: 200 * time.Millisecond, LeaseTTL: lease, RebalanceTimeout: 10 * time.Second, Env: env,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Stop() })
	return s
}

// readers records which member reads which shard and fails the test when
// two read one shard at once.
type readers struct {
	t  *testing.T
	mu sync.Mutex
	by map[int]string
}

func newReaders(t *testing.T) *readers { return &readers{t: t, by: map[int]string{}} }

func (r *readers) hooks(id string) Hooks {
	return Hooks{
		OnAssigned: func(s int) {
			r.mu.Lock()
			defer r.mu.Unlock()
			if o, ok := r.by[s]; ok {
				r.t.Errorf("shard %d assigned to %s while %s reads it", s, id, o)
			}
			r.by[s] = id
		},
		OnRevoked: func(s int) {
			r.mu.Lock()
			defer r.mu.Unlock()
			if r.by[s] == id {
				delete(r.by, s)
			}
		},
	}
}

func (r *readers) count(id string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, o := range r.by {
		if o == id {
			n++
		}
	}
	return n
}

func redisClient(t *testing.T, addr string) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func itoa(i int) string { return strconv.Itoa(i) }

// provisioning turns stream provisioning on in a coordinator process
// (startCoordinator's env): a parallel test cannot t.Setenv it.
const provisioning = "COORDINATOR_STREAMS_PROVISIONING_ENABLED=true"

// provisionedGroup starts a coordinator with stream provisioning on a
// throwaway Redis of its own (so its callers may run in parallel), creates
// group g of prefix with 4 shards, and returns the
// coordinator client and a Redis client.
func provisionedGroup(t *testing.T, prefix, keyPrefix string) (*Coordinator, *redis.Client) {
	t.Helper()
	rs := testredis.Start(t)
	srv := startCoordinator(t, "redis", rs.Addr, keyPrefix, 3*time.Second, provisioning)
	coord := NewCoordinator(srv.Base, WithBasicAuth("admin", "password"))
	if _, err := coord.CreateGroup(context.Background(), prefix, "g", 4, "test"); err != nil {
		t.Fatal(err)
	}
	return coord, redisClient(t, rs.Addr)
}
