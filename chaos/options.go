package chaos

import (
	"fmt"
	"time"

	"github.com/redis-stream-coordinator/coordinator/internal/testkit/coordproc"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/membersim"
)

// Options configure one run; start from Defaults. Run replaces zero
// durations, sizes and store settings by their defaults; the rates are
// used as given (0: no lost or duplicated heartbeats). Seed 0 is a seed.
type Options struct {
	// Seed drives the fault schedule and every random choice of the
	// members (routing, lost and duplicated heartbeats).
	Seed int64
	// Duration is the fault phase; the heal phase follows it.
	Duration time.Duration
	// Store is coordproc.StoreRedis or coordproc.StoreJDBC.
	Store string
	// PostgresURL is the PostgreSQL server of the jdbc store; each run
	// creates a schema of its own there and drops it afterwards.
	PostgresURL string
	// Coordinators, Members and Shards size the run.
	Coordinators, Members, Shards int
	// Interval, LeaseTTL and RebalanceTimeout are the coordinators'
	// coordination.* settings; members use Interval and LeaseTTL too.
	Interval, LeaseTTL, RebalanceTimeout time.Duration
	// LostRate is the share of heartbeats whose answer is lost; DupRate the
	// share re-sent later as a duplicate.
	LostRate, DupRate float64
	// Routing is how the simulated members choose the coordinator of each
	// heartbeat: membersim.Spread (a live one at random, the default) or
	// membersim.Follow (the owner the last answer named, while it
	// answers; see membersim.Route). Delayed duplicates go to a live
	// coordinator at random either way.
	Routing membersim.Routing
	// RealMembers is how many real client.Consumers run beside the
	// simulated members, in a group of their own over real shard streams
	// (-1: none).
	RealMembers int
	// IgnoreLease turns the members' local lease rule off (a partitioned
	// member reads until it is healed): a control that must make the
	// overlap oracle fire, never a setting for a real run.
	IgnoreLease bool
	// SettleTimeout bounds the heal phase.
	SettleTimeout time.Duration
	// Binary is the coordinator executable (coordproc.BuildCoordinator).
	Binary string
	// Dir holds the run's files (configurations, logs, Redis data); a
	// temporary directory when empty, removed after a passing run.
	Dir string
}

// Defaults returns the default options: 3 coordinators, 10 simulated and
// 3 real members, 24 shards, 60 s of faults on Redis, 300 ms heartbeats, a 3 s lease, a 4 s
// rebalance timeout, 10 % lost answers and 5 % duplicates, the simulated
// members spread at random over the coordinators.
func Defaults() Options {
	return Options{
		Duration: 60 * time.Second, Store: coordproc.StoreRedis,
		PostgresURL:  "postgres://postgres@127.0.0.1:5432/test?sslmode=disable",
		Coordinators: 3, Members: 10, Shards: 24, RealMembers: 3, Routing: membersim.Spread,
		Interval: 300 * time.Millisecond, LeaseTTL: 3 * time.Second, RebalanceTimeout: 4 * time.Second,
		LostRate: 0.10, DupRate: 0.05, SettleTimeout: 30 * time.Second,
	}
}

// withDefaults fills the zero fields of o from Defaults.
func (o Options) withDefaults() Options {
	d := Defaults()
	set := func(v *time.Duration, def time.Duration) {
		if *v == 0 {
			*v = def
		}
	}
	seti := func(v *int, def int) {
		if *v == 0 {
			*v = def
		}
	}
	set(&o.Duration, d.Duration)
	set(&o.Interval, d.Interval)
	set(&o.LeaseTTL, d.LeaseTTL)
	set(&o.RebalanceTimeout, d.RebalanceTimeout)
	set(&o.SettleTimeout, d.SettleTimeout)
	seti(&o.Coordinators, d.Coordinators)
	seti(&o.Members, d.Members)
	seti(&o.Shards, d.Shards)
	seti(&o.RealMembers, d.RealMembers)
	if o.Store == "" {
		o.Store = d.Store
	}
	if o.Routing == "" {
		o.Routing = d.Routing
	}
	if o.PostgresURL == "" {
		o.PostgresURL = d.PostgresURL
	}
	return o
}

func (o Options) validate() error {
	switch {
	case o.Store != coordproc.StoreRedis && o.Store != coordproc.StoreJDBC:
		return fmt.Errorf("store %q: want %s or %s", o.Store, coordproc.StoreRedis, coordproc.StoreJDBC)
	case o.Coordinators < 1 || o.Members < 1 || o.Shards < 1:
		return fmt.Errorf("coordinators %d, members %d, shards %d: each must be at least 1", o.Coordinators, o.Members, o.Shards)
	case o.Routing != membersim.Spread && o.Routing != membersim.Follow:
		return fmt.Errorf("routing %q: want %s or %s", o.Routing, membersim.Spread, membersim.Follow)
	case o.LostRate < 0 || o.LostRate >= 1 || o.DupRate < 0 || o.DupRate >= 1:
		return fmt.Errorf("lost rate %v, duplicate rate %v: each must be in [0,1)", o.LostRate, o.DupRate)
	case o.Binary == "":
		return fmt.Errorf("no coordinator binary")
	}
	return nil
}
