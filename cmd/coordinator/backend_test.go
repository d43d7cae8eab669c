package main

import (
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/sony/gobreaker/v2"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/observe"
	"github.com/redis-stream-coordinator/coordinator/persistence"
)

// openTestBackend opens the backend of the configuration yaml, closed at
// cleanup, and returns it with its health checker (of a coordinator that
// serves).
func openTestBackend(t *testing.T, yaml string) (*backend, observe.HealthChecker) {
	t.Helper()
	cfg := loadConfig(t, yaml)
	back, err := openBackend(t.Context(), cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = back.Close() })
	return back, back.health(cfg, func() bool { return true })
}

func TestActorOptionsFollowConfig(t *testing.T) {
	cfg := loadConfig(t, `coordinator:
  store: {timeout: 3s}
  coordination:
    event-loop: {interval: 2s}
    group-commit: {enabled: false, max-batch: 1}
`)
	back, err := openBackend(t.Context(), cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer back.Close()
	o := actorOptions(cfg, back, slog.New(slog.DiscardHandler))
	if o.GroupCommit || o.MaxBatch != 1 || o.StoreTimeout != 3*time.Second || !o.TickEnabled || o.TickInterval != 2*time.Second ||
		o.Store != back.store || o.Locker != nil || o.Settings != domainSettings(cfg) {
		t.Errorf("actor options %+v", o)
	}
}

// TestBreakerGuardsStoreAndMutex opens the Redis store on a port where
// nothing listens: the mutex and the store share one breaker, which opens
// after store.breaker.failure-threshold failures, then fails calls without
// trying Redis; health shows it.
func TestBreakerGuardsStoreAndMutex(t *testing.T) {
	back, health := openTestBackend(t, `coordinator:
  store: {type: redis, breaker: {failure-threshold: 2, open-timeout: 1h}}
  redis: {host: 127.0.0.1, port: 1}
`)
	ctx, key := t.Context(), group.Key{StreamPrefix: "orders", ConsumerGroup: "workers"}
	if h := health.Check(ctx); h.Store.Type != "redis" || h.Store.Breaker != "closed" {
		t.Fatalf("health before any call: %+v", h)
	}
	if _, err := back.locker.Lock(ctx, key); !errors.Is(err, persistence.ErrUnavailable) {
		t.Fatalf("lock: %v", err)
	}
	if _, err := back.store.Revision(ctx, key); !errors.Is(err, persistence.ErrUnavailable) {
		t.Fatalf("revision: %v", err)
	}
	if _, err := back.store.Revision(ctx, key); !errors.Is(err, gobreaker.ErrOpenState) || !errors.Is(err, persistence.ErrUnavailable) {
		t.Fatalf("revision after two failures: %v, want the open breaker", err)
	}
	if _, err := back.locker.Lock(ctx, key); !errors.Is(err, gobreaker.ErrOpenState) {
		t.Fatalf("lock after two failures: %v, want the open breaker", err)
	}
	if h := health.Check(ctx); h.Store.Breaker != "open" || h.Store.Status != contract.StoreDown || h.Status != "DEGRADED" {
		t.Errorf("health with the breaker open: %+v", h)
	}
}

func TestStateMutexFollowsConfig(t *testing.T) {
	for yaml, want := range map[string]bool{
		"coordinator:\n  store: {type: redis}\n":                                                  true,
		"coordinator:\n  store: {type: redis}\n  coordination: {state-mutex: {enabled: false}}\n": false,
		"coordinator:\n  store: {type: memory}\n":                                                 false,
	} {
		back, health := openTestBackend(t, yaml)
		if h := health.Check(t.Context()); (back.locker != nil) != want || h.Store.Type == "" || h.Store.Breaker != "closed" {
			t.Errorf("%q: locker %v, health %+v", yaml, back.locker, h)
		}
	}
}
