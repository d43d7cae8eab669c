package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/eventually"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/fakeclock"
)

// pinger answers each ping with the next error sent on results and counts
// the pings started.
type pinger struct {
	results chan error
	mu      sync.Mutex
	started int
}

func (p *pinger) ping(ctx context.Context) error {
	p.mu.Lock()
	p.started++
	p.mu.Unlock()
	select {
	case err := <-p.results:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (p *pinger) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.started
}

// waitFor polls h until its Redis state is want.
func waitFor(t *testing.T, h *PingHealth, want string) contract.HealthReport {
	t.Helper()
	var r contract.HealthReport
	eventually.True(t, "Redis "+want, func() bool {
		h.probe.mu.Lock()
		done := !h.probe.probing
		h.probe.mu.Unlock()
		r = h.Check(context.Background())
		return r.Redis == want && done
	})
	return r
}

func TestPingHealthNeverBlocksAndCaches(t *testing.T) {
	p := &pinger{results: make(chan error)}
	clock := fakeclock.New(time.Unix(1000, 0))
	h := NewPingHealth(PingHealthOptions{CoordinatorID: "c1", Ping: p.ping, Timeout: time.Hour, CacheTTL: time.Second, Now: clock.Now})

	// The first checks answer UNKNOWN at once while one ping is in flight.
	for range 3 {
		if r := h.Check(context.Background()); !reflect.DeepEqual(r, contract.HealthReport{Status: "UP", CoordinatorID: "c1", Redis: contract.RedisUnknown, Loop: "UP"}) {
			t.Fatalf("first report %+v", r)
		}
	}
	p.results <- nil
	waitFor(t, h, contract.RedisUp)
	if n := p.count(); n != 1 {
		t.Fatalf("%d pings started, want 1", n)
	}

	// Fresh result: served without pinging.
	h.Check(context.Background())
	if n := p.count(); n != 1 {
		t.Fatalf("fresh cache pinged again (%d)", n)
	}

	// Stale result: the old value is served while the next ping runs.
	clock.Advance(time.Second)
	if r := h.Check(context.Background()); r.Redis != contract.RedisUp {
		t.Fatalf("stale report %+v", r)
	}
	p.results <- errors.New("connection refused")
	r := waitFor(t, h, contract.RedisDown)
	if r.Status != "DEGRADED" || r.Loop != "UP" {
		t.Fatalf("down report %+v", r)
	}
}

func TestPingHealthServedOnTheEndpoint(t *testing.T) {
	p := &pinger{results: make(chan error, 1)}
	p.results <- nil
	h := NewPingHealth(PingHealthOptions{CoordinatorID: "c2", Ping: p.ping, CacheTTL: time.Hour})
	api := newTestAPI(&fakeCoord{}, func(o *Options) { o.Health = h })
	wantJSON(t, do(api, "GET", "/coord/v1/monitoring/health", ""), 200, `{"status":"UP","coordinatorId":"c2","redis":"UNKNOWN","loop":"UP"}`)
	waitFor(t, h, contract.RedisUp)
	wantJSON(t, do(api, "GET", "/coord/v1/monitoring/health", ""), 200, `{"status":"UP","coordinatorId":"c2","redis":"UP","loop":"UP"}`)
}

// partial is a PartialOutage naming nodes.
type partial []string

func (p partial) Error() string         { return "nodes unreachable" }
func (p partial) Unreachable() []string { return p }

// A ping that reaches only some Redis nodes (a Redis Cluster with a master
// down) is a partial outage: Redis DEGRADED naming the nodes, status
// DEGRADED; once every node answers it is UP again without them.
func TestPingHealthReportsAPartialOutage(t *testing.T) {
	p := &pinger{results: make(chan error, 1)}
	clock := fakeclock.New(time.Unix(1000, 0))
	h := NewPingHealth(PingHealthOptions{CoordinatorID: "c3", Ping: p.ping, CacheTTL: time.Second, Now: clock.Now})
	h.Check(context.Background())
	p.results <- fmt.Errorf("ping: %w", partial{"10.0.0.2:6379", "10.0.0.3:6379"})
	r := waitFor(t, h, contract.RedisDegraded)
	if want := (contract.HealthReport{Status: "DEGRADED", CoordinatorID: "c3", Redis: contract.RedisDegraded, RedisUnreachable: []string{"10.0.0.2:6379", "10.0.0.3:6379"}, Loop: "UP"}); !reflect.DeepEqual(r, want) {
		t.Fatalf("partial outage: %+v, want %+v", r, want)
	}
	body, err := json.Marshal(r)
	if err != nil || !strings.Contains(string(body), `"redis":"DEGRADED","redisUnreachable":["10.0.0.2:6379","10.0.0.3:6379"]`) {
		t.Errorf("partial outage body %s, %v", body, err)
	}
	clock.Advance(time.Second)
	h.Check(context.Background())
	p.results <- nil
	if r := waitFor(t, h, contract.RedisUp); r.Status != "UP" || r.RedisUnreachable != nil {
		t.Errorf("recovered: %+v", r)
	}
}
