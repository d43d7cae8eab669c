package actors

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/persistence"
)

// Defaults applied by New to zero-valued Options fields.
const (
	DefaultMaxBatch       = 1024
	DefaultCommitAttempts = 3
	DefaultStoreTimeout   = 2 * time.Second
	DefaultRequestTimeout = 30 * time.Second
	DefaultSweepInterval  = time.Minute
	DefaultIdleTimeout    = 5 * time.Minute
	// DefaultMaxQueuedHeartbeats is one full batch (DefaultMaxBatch): a
	// full mailbox is answered with one commit, so a queued heartbeat
	// waits about one commit rather than a queue of them
	// (docs/benchmarks.md has the measured commit rates).
	DefaultMaxQueuedHeartbeats = 1024
)

// Options configure a System. Store and Settings are required; every
// other zero field gets its default.
type Options struct {
	// Store persists the groups. The System never closes it.
	Store persistence.Store
	// Locker is the per-group state mutex taken around critical sections
	// when Store.Shared(). It must bound acquisition itself (returning
	// persistence.ErrLockTimeout). nil → persistence.NoLocker{}.
	Locker persistence.Locker
	// Settings are the domain settings (lease TTL, intervals, shard limits).
	Settings group.Settings
	// Ownership is this process's membership of the coordinator cluster
	// (a *cluster.Node): a group actor acquires its group before serving
	// it, writes only while it owns it (the store fences the writes) and
	// answers only while the process serves. nil: this process owns every
	// group (one coordinator on a store nobody else writes, and tests).
	Ownership Ownership
	// Clock is the time source of every domain decision. nil → time.Now.
	Clock func() time.Time

	// TickEnabled turns on the time-driven work: each group actor arms a
	// timer for its group's next due event (lease expiry, release of a
	// fenced member, prune, rebalance deadline) and ticks itself then;
	// while a migration waits on Redis, or the group's bounds are unknown
	// after a load, it ticks every TickInterval (which must then be
	// positive). A sweep also ticks every group the store lists, at start
	// and every SweepInterval, so groups no member talks to here are still
	// maintained.
	TickInterval time.Duration
	TickEnabled  bool
	// SweepInterval is the pause between sweeps. 0 → DefaultSweepInterval.
	SweepInterval time.Duration
	// IdleTimeout retires the actor of a group that got no request (ticks
	// do not count) for this long and has nothing due: no pending batch and
	// no armed timer. A later request or sweep loads it again.
	// 0 → DefaultIdleTimeout.
	IdleTimeout time.Duration

	// GroupCommit batches the heartbeats and ticks queued in a group's
	// mailbox into one commit. false commits each one alone (the benchmark
	// baseline).
	GroupCommit bool
	// MaxBatch flushes a batch as soon as it holds this many requests.
	MaxBatch int
	// MaxQueuedHeartbeats bounds the heartbeats in one group actor's
	// mailbox, waiting or being handled (a heartbeat parked in a batch for
	// its commit no longer counts): a heartbeat that finds this many is
	// failed at once with contract.ErrShed (answered with status RETRY by
	// the HTTP layer, as a briefly unavailable store is) without entering
	// the mailbox, and reported to Observer.HeartbeatShed. The member keeps its lease and heartbeats
	// again one interval later, so overload does not build queues that
	// take longer than a lease to answer. Concurrent callers may overshoot
	// the bound by at most their number. 0 → DefaultMaxQueuedHeartbeats.
	MaxQueuedHeartbeats int
	// CommitAttempts bounds the commits of one batch or admin command that
	// end in a revision conflict.
	CommitAttempts int
	// StoreTimeout bounds each store call, each Redis call of Provisioner
	// and Drains, and how long a heartbeat waits for its actor (then it is
	// fails with contract.ErrShed, see ask).
	StoreTimeout time.Duration
	// RequestTimeout bounds how long a caller waits for a group actor's
	// answer (the caller's own context may end sooner). It is a safety net:
	// every request is answered, normally within a few store calls.
	RequestTimeout time.Duration
	// MaxGroups and MaxGroupsPerPrefix, when positive, refuse a create
	// (GROUP_LIMIT_REACHED) once this many groups exist in all, or under
	// its stream prefix (defaults.max-groups, max-groups-per-stream). The
	// creates are admitted one at a time where they are decided, so
	// creates running at once do not pass a cap together (see groupCaps
	// for what holds in a cluster). 0: no cap.
	MaxGroups, MaxGroupsPerPrefix int

	// Provisioner creates the Redis streams and consumer groups of the
	// groups' shards on create, scale and routing reads (docs/protocol.md §6.6); nil
	// disables provisioning (streams.provisioning-enabled=false).
	Provisioner Provisioner
	// Drains confirms that the removed shards of a scale-in are drained
	// (docs/protocol.md §6.4). Required when Settings.DrainCheck is set, unused otherwise.
	Drains DrainChecker
	// Positions reads and sets consumer group positions for live offset
	// resets (liveops.go); nil refuses them (no Redis).
	Positions Positions

	// Observer receives metrics hooks. nil → NopObserver.
	Observer Observer
	// Logger receives the coordinator's logs, and protoactor's own at warn
	// level and above. nil → discard.
	Logger *slog.Logger
}

// Ownership is what the group actors need of the cluster membership
// (cluster.Node implements it).
type Ownership interface {
	// Acquire makes this process key's owner (a store call) for a
	// request the routing decided to serve here; it does not place. It is
	// fencing: it fails with cluster.ErrNotServing while this process may
	// not answer for groups, and with a *cluster.NotOwnerError while the
	// store names another live owner.
	Acquire(ctx context.Context, key group.Key) (int64, error)
	// Release gives the group up after its last write; a record naming
	// another owner is left alone.
	Release(ctx context.Context, key group.Key) error
	// Held returns those of keys whose ownership record names this
	// process.
	Held(ctx context.Context, keys []group.Key) ([]group.Key, error)
	// PruneOwners removes the ownership records of groups that are not
	// stored and that no live coordinator holds, and returns how many it
	// removed.
	PruneOwners(ctx context.Context) (int, error)
	// Serving reports whether this process may still answer for the
	// groups it owns.
	Serving() bool
	// PlacedHere reports whether the groups of a stream prefix are placed
	// on this process.
	PlacedHere(prefix string) bool
	// Leaving reports whether this process is leaving the cluster.
	Leaving() bool
	// Created reports a group just created here, so that placement counts
	// it at once.
	Created(key group.Key)
	// ID is this process's coordinator id, the one its ownership records
	// name; the groups it takes record it as their holder
	// (group.TakeOver).
	ID() string
}

// withDefaults returns o with every zero optional field set to its default.
func (o Options) withDefaults() Options {
	if o.Locker == nil {
		o.Locker = persistence.NoLocker{}
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	if o.MaxBatch == 0 {
		o.MaxBatch = DefaultMaxBatch
	}
	if o.CommitAttempts == 0 {
		o.CommitAttempts = DefaultCommitAttempts
	}
	if o.MaxQueuedHeartbeats == 0 {
		o.MaxQueuedHeartbeats = DefaultMaxQueuedHeartbeats
	}
	if o.SweepInterval == 0 {
		o.SweepInterval = DefaultSweepInterval
	}
	if o.IdleTimeout == 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	if o.StoreTimeout == 0 {
		o.StoreTimeout = DefaultStoreTimeout
	}
	if o.RequestTimeout == 0 {
		o.RequestTimeout = DefaultRequestTimeout
	}
	if o.Observer == nil {
		o.Observer = NopObserver{}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// validate reports every invalid field of o (after withDefaults).
func (o Options) validate() error {
	var errs []error
	if o.Store == nil {
		errs = append(errs, errors.New("actors: Store is required"))
	}
	if o.Settings.MemberLeaseTTL <= 0 {
		errs = append(errs, errors.New("actors: Settings.MemberLeaseTTL must be positive"))
	}
	if o.TickEnabled && o.TickInterval <= 0 {
		errs = append(errs, errors.New("actors: TickInterval must be positive when TickEnabled"))
	}
	if o.SweepInterval < 0 || o.IdleTimeout < 0 {
		errs = append(errs, errors.New("actors: SweepInterval and IdleTimeout must not be negative"))
	}
	if o.MaxBatch < 1 {
		errs = append(errs, errors.New("actors: MaxBatch must be positive"))
	}
	if o.MaxQueuedHeartbeats < 1 {
		errs = append(errs, errors.New("actors: MaxQueuedHeartbeats must be positive"))
	}
	if o.CommitAttempts < 1 {
		errs = append(errs, errors.New("actors: CommitAttempts must be positive"))
	}
	if o.StoreTimeout < 0 {
		errs = append(errs, errors.New("actors: StoreTimeout must not be negative"))
	}
	if o.RequestTimeout < 0 {
		errs = append(errs, errors.New("actors: RequestTimeout must not be negative"))
	}
	if o.Settings.DrainCheck && o.Drains == nil {
		errs = append(errs, errors.New("actors: Drains is required when Settings.DrainCheck is set"))
	}
	return errors.Join(errs...)
}
