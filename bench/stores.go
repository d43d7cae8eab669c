package bench

import (
	"context"
	"slices"

	"github.com/redis-stream-coordinator/coordinator/internal/testkit/coordproc"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/pgproc"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/redisproc"
)

// The shared servers of the development machine: the fallback when a
// throwaway server cannot start.
const (
	SharedRedisAddr   = "127.0.0.1:6379"
	SharedPostgresURL = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
)

// Where a phase's store counters come from (Phase.StoreServer). The
// counters are server-wide, so only on StoreOwn are they the run's alone.
const (
	// StoreOwn is a throwaway server the run started for itself.
	StoreOwn = "own"
	// StoreExternal is a server given by -redis or -postgres: every other
	// client of it counts too.
	StoreExternal = "external"
	// StoreShared is the shared server the run fell back to when its own
	// did not start: the store-traffic goals are not valid (INVALID).
	StoreShared = "shared"
)

// pgSettings are the throwaway PostgreSQL's settings: those of the shared
// development server that change what the WAL carries or when
// (autovacuum off, the defaults of full_page_writes, wal_level,
// checkpoint_timeout), so that the figures compare with earlier runs.
var pgSettings = []string{"autovacuum=off", "shared_buffers=128MB"}

// storeServer is the Redis or PostgreSQL server of the run's coordinators.
type storeServer struct {
	addr string // Redis host:port or PostgreSQL URL
	kind string // StoreOwn, StoreExternal or StoreShared
	stop func() // stops a throwaway server; nil otherwise
}

// startStores decides the Redis and PostgreSQL servers of the run: the
// addresses given in Options, else throwaway servers started in r.tmp
// (Redis whenever a coordinator or the peer scheme runs, PostgreSQL when a
// scenario runs on it), else, with a warning, the shared servers.
func (r *Runner) startStores(ctx context.Context) {
	o := r.opts
	r.redis = storeServer{addr: o.RedisAddr, kind: StoreExternal}
	if o.RedisAddr == "" && r.needsRedis() {
		srv, err := redisproc.Start(ctx, r.tmp)
		if err == nil {
			r.redis = storeServer{addr: srv.Addr, kind: StoreOwn, stop: srv.Kill}
			r.logf("Redis: throwaway redis-server pid %d on %s (no persistence), for this run alone", srv.Pid(), srv.Addr)
		} else {
			r.redis = storeServer{addr: SharedRedisAddr, kind: StoreShared}
			r.logf("WARNING: the throwaway redis-server did not start (%v): using the shared Redis at %s; its counters include every other client, so P2a and P7a are INVALID", err, SharedRedisAddr)
		}
	}
	r.postgres = storeServer{addr: o.PostgresURL, kind: StoreExternal}
	if o.PostgresURL == "" && r.usesStore(coordproc.StoreJDBC) {
		srv, err := pgproc.Start(ctx, pgSettings...)
		if err == nil {
			r.postgres = storeServer{addr: srv.URL, kind: StoreOwn, stop: srv.Stop}
			r.logf("PostgreSQL: throwaway server %s pid %d at %s, for this run alone", srv.Version, srv.Pid(), srv.URL)
		} else {
			r.postgres = storeServer{addr: SharedPostgresURL, kind: StoreShared}
			r.logf("WARNING: the throwaway PostgreSQL did not start (%v): using the shared server at %s; its WAL includes every other client's, so P7b is INVALID", err, SharedPostgresURL)
		}
	}
	r.env.RedisServer, r.env.PostgresServer = r.redis.kind, r.postgres.kind
}

// stopStores stops the throwaway servers.
func (r *Runner) stopStores() {
	for _, s := range []storeServer{r.redis, r.postgres} {
		if s.stop != nil {
			s.stop()
		}
	}
}

// needsRedis reports whether a selected scenario starts a coordinator
// (every coordinator is configured with a Redis, whatever its store) or
// runs the peer scheme.
func (r *Runner) needsRedis() bool { return r.startsCoordinators() || r.opts.runs(ScenarioPeer) }

// startsCoordinators reports whether a selected scenario starts a
// coordinator process.
func (r *Runner) startsCoordinators() bool {
	o := r.opts
	for _, s := range Scenarios {
		if s != ScenarioAssignor && s != ScenarioHeap && s != ScenarioPeer && o.runs(s) {
			return true
		}
	}
	return false
}

// usesStore reports whether a selected scenario runs coordinators on store
// (or, for jdbc, writes to PostgreSQL: the sinks scenario).
func (r *Runner) usesStore(store string) bool {
	o := r.opts
	if o.runs(ScenarioStore) && slices.Contains(o.storeList(), store) {
		return true
	}
	if o.runs(ScenarioSinks) && store == coordproc.StoreJDBC { // the PostgreSQL sink
		return true
	}
	for _, s := range []string{ScenarioCeiling, ScenarioSteady, ScenarioBaseline, ScenarioMulti, ScenarioCluster, ScenarioChurn, ScenarioGroups} {
		if o.runs(s) && o.Store == store {
			return true
		}
	}
	return false
}
