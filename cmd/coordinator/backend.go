package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"

	goredis "github.com/redis/go-redis/v9"

	"github.com/redis-stream-coordinator/coordinator/cluster"
	"github.com/redis-stream-coordinator/coordinator/config"
	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	httpapi "github.com/redis-stream-coordinator/coordinator/http"
	"github.com/redis-stream-coordinator/coordinator/observe"
	"github.com/redis-stream-coordinator/coordinator/persistence"
	"github.com/redis-stream-coordinator/coordinator/persistence/breaker"
	"github.com/redis-stream-coordinator/coordinator/persistence/memory"
	redisstore "github.com/redis-stream-coordinator/coordinator/persistence/redis"
	sqlstore "github.com/redis-stream-coordinator/coordinator/persistence/sql"
)

// backend is what the coordinator persists to and depends on: the metadata
// store, its state mutex and the shared Redis client.
type backend struct {
	// store is the configured store behind breaker.
	store persistence.Store
	// direct is the configured store without the breaker, for the
	// readiness probe (which must not use up the breaker's probe calls).
	direct persistence.Store
	// cluster is direct's coordinator registry and ownership records.
	cluster cluster.Store
	// locker is the Redis state mutex behind breaker; nil means none
	// (persistence.NoLocker).
	locker persistence.Locker
	// breaker guards store and locker (store.breaker, store.timeout): a
	// backend that is down costs one fast ErrUnavailable per call, so
	// heartbeats answer RETRY and admin calls 503 without waiting.
	breaker *breaker.Breaker
	// redis is the Redis client shared by every Redis user; nil when Redis
	// is not required (config.RedisRequired).
	redis goredis.UniversalClient
}

// openBackend opens the configured store and puts the breaker in front of
// it and its mutex; breaker transitions are logged. The Redis client dials
// lazily; the SQL store connects at once (it creates its tables) within ctx.
func openBackend(ctx context.Context, cfg *config.Config, logger *slog.Logger) (*backend, error) {
	br, err := breaker.New(breaker.Options{
		Name:                cfg.Store.Type,
		ConsecutiveFailures: uint32(cfg.Store.Breaker.FailureThreshold), // #nosec G115 -- config validation bounds it to 1..MaxUint32
		OpenTimeout:         cfg.Store.Breaker.OpenTimeout.Duration(),
		CallTimeout:         cfg.Store.Timeout.Duration(),
		OnStateChange: func(from, to string) {
			logger.Warn("store circuit breaker", "store", cfg.Store.Type, "from", from, "to", to)
		},
	})
	if err != nil {
		return nil, err
	}
	b := &backend{breaker: br}
	if cfg.RedisRequired() {
		b.redis = newRedisClient(cfg)
	}
	store, locker, err := openStore(ctx, cfg, b.redis)
	if err != nil {
		return nil, errors.Join(err, b.Close())
	}
	b.direct, b.store = store, br.Store(store)
	cs, ok := store.(cluster.Store)
	if !ok {
		return nil, errors.Join(fmt.Errorf("store %s keeps no coordinator registry", cfg.Store.Type), b.Close())
	}
	b.cluster = cs
	if locker != nil {
		b.locker = br.Locker(locker)
	}
	return b, nil
}

// openStore opens the store of store.type and, for Redis with the state
// mutex enabled, its Locker (nil otherwise). On error nothing is left open
// but the Redis client, which the caller owns.
func openStore(ctx context.Context, cfg *config.Config, client goredis.UniversalClient) (persistence.Store, persistence.Locker, error) {
	switch cfg.Store.Type {
	case config.StoreMemory:
		return memory.New(), nil, nil
	case config.StoreRedis:
		store, err := redisstore.New(redisstore.Options{Client: client, KeyPrefix: cfg.Store.KeyPrefix})
		if err != nil {
			return nil, nil, err
		}
		m := cfg.Coordination.StateMutex
		if !m.Enabled {
			return store, nil, nil
		}
		locker, err := redisstore.NewLocker(redisstore.MutexOptions{
			Client: client, KeyPrefix: cfg.Store.KeyPrefix, CoordinatorID: cfg.ID,
			TTL: m.TTL(), AcquireTimeout: m.AcquireTimeout(), RetryInterval: m.RetryInterval(),
		})
		if err != nil {
			return nil, nil, errors.Join(err, store.Close())
		}
		return store, locker, nil
	case config.StoreJDBC:
		ctx, cancel := context.WithTimeout(ctx, cfg.Store.Timeout.Duration())
		defer cancel()
		store, err := sqlstore.New(ctx, sqlstore.Options{DSN: cfg.Store.JDBC.URL})
		if err != nil {
			return nil, nil, err
		}
		return store, nil, nil
	}
	return nil, nil, fmt.Errorf("coordinator.store.type %q: unknown store type", cfg.Store.Type)
}

// newRedisClient builds the client for coordinator.redis: a cluster client
// when cluster-nodes are listed, else a single-node client. It never
// retries a command on its own, so store outcomes stay exact (see
// persistence/redis.Options), and dials once per connection, so a Redis
// that is down fails a call at once: the breaker and the callers (members
// get RETRY) do the retrying.
func newRedisClient(cfg *config.Config) goredis.UniversalClient {
	r := cfg.Redis
	o := &goredis.UniversalOptions{
		Addrs:         []string{cfg.RedisAddr()},
		DB:            r.Database,
		Username:      r.Username,
		Password:      r.Password,
		MaxRetries:    -1,
		DialerRetries: 1,
		// Every store call carries a deadline (store.timeout); without
		// this go-redis would wait its own read timeout on a frozen Redis.
		ContextTimeoutEnabled: true,
		DialTimeout:           cfg.Store.Timeout.Duration(),
	}
	if len(r.ClusterNodes) > 0 {
		o.Addrs, o.DB, o.IsClusterMode = r.ClusterNodes, 0, true
	}
	if r.TLS {
		o.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	return goredis.NewUniversalClient(o)
}

// health returns the docs/protocol.md §10.2 health checker with the store's
// type, breaker state and status, and the cluster membership (serving:
// whether this coordinator serves, cluster.Node.Serving), added: it
// pings Redis when Redis is required (every master of a Redis Cluster),
// otherwise it reports Redis NOT_CONFIGURED; it probes the store
// (probeStore, or the same ping for the Redis store) with the store
// timeout, the result cached for health.cache-ttl-ms. The first probes
// start here, so that the first reports need not say UNKNOWN. The status
// is DEGRADED while Redis or the store is DOWN or DEGRADED, or this
// coordinator does not serve.
func (b *backend) health(cfg *config.Config, serving func() bool) observe.HealthChecker {
	check := b.probeStore
	if cfg.Store.Type == config.StoreRedis {
		check = b.pingRedis
	}
	h := &health{
		report:  contract.HealthReport{Status: "UP", CoordinatorID: cfg.ID, Redis: contract.RedisNotConfigured, Loop: "UP"},
		store:   cfg.Store.Type,
		breaker: b.breaker,
		probe: httpapi.NewProbe(httpapi.ProbeOptions{
			Check:    check,
			Timeout:  cfg.Store.Timeout.Duration(),
			CacheTTL: cfg.Health.CacheTTL(),
		}),
		serving: serving,
	}
	if b.redis != nil {
		h.redis = httpapi.NewPingHealth(httpapi.PingHealthOptions{
			CoordinatorID: cfg.ID,
			Ping:          b.pingRedis,
			Timeout:       cfg.Health.RedisTimeout(),
			CacheTTL:      cfg.Health.CacheTTL(),
		})
	}
	h.Check(context.Background())
	return h
}

// pingRedis pings every master of a Redis Cluster, or the one Redis
// server (redisstore.Ping): a cluster with some masters down fails with a
// partial outage naming them.
func (b *backend) pingRedis(ctx context.Context) error { return redisstore.Ping(ctx, b.redis) }

// probeKey names a group that is never created (its prefix starts with
// underscores); probeStore reads its revision.
var probeKey = group.Key{StreamPrefix: "__coordinator", ConsumerGroup: "__readiness-probe"}

// probeStore checks that the store answers: one cheap revision read of
// probeKey, past the breaker. Not found is an answer.
func (b *backend) probeStore(ctx context.Context) error {
	if _, err := b.direct.Revision(ctx, probeKey); err != nil && !errors.Is(err, persistence.ErrNotFound) {
		return err
	}
	return nil
}

// health is the coordinator's HealthChecker. It never blocks: the Redis
// part comes from PingHealth's cache, the store probe from its Probe, the
// breaker state and the node's service from memory.
type health struct {
	// redis answers when Redis is required; nil → report.
	redis   *httpapi.PingHealth
	report  contract.HealthReport
	store   string
	breaker *breaker.Breaker
	probe   *httpapi.Probe
	serving func() bool
}

// Check returns the report; the store is DOWN while the breaker is open
// or the last probe failed, DEGRADED while it reached only some Redis
// Cluster masters.
func (h *health) Check(ctx context.Context) contract.HealthReport {
	r := h.report
	if h.redis != nil {
		r = h.redis.Check(ctx)
	}
	status, unreachable := h.probe.State()
	r.Store = contract.StoreHealth{Type: h.store, Breaker: h.breaker.State(), Status: status, Unreachable: unreachable}
	if r.Store.Breaker == "open" {
		r.Store.Status, r.Store.Unreachable = contract.StoreDown, nil
	}
	r.Cluster = contract.ClusterServing
	if !h.serving() {
		r.Cluster = contract.ClusterNotServing
	}
	if r.Store.Status == contract.StoreDown || r.Store.Status == contract.StoreDegraded || r.Cluster == contract.ClusterNotServing {
		r.Status = "DEGRADED"
	}
	return r
}

// Close closes the store, then the Redis client.
func (b *backend) Close() error {
	var errs []error
	if b.store != nil {
		errs = append(errs, b.store.Close())
	}
	if b.redis != nil {
		errs = append(errs, b.redis.Close())
	}
	return errors.Join(errs...)
}
