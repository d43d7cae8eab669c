package actors

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"golang.org/x/sync/singleflight"

	"github.com/redis-stream-coordinator/coordinator/cluster"
	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
)

// System is the facade over the actor system: every method sends one
// message to the group's actor and waits for its reply or ctx. It is safe
// for concurrent use.
type System struct {
	opts    Options
	system  *actor.ActorSystem
	manager *actor.PID
	// dispatcher runs the group actors' mailbox turns on reused goroutines.
	dispatcher *workerDispatcher

	// registry maps group.Key → *child. Only the manager writes it; senders
	// read it to reach a group actor without a hop through the manager.
	registry sync.Map
	// snapshots maps group.Key → *snapshotCell of the group's live actor;
	// builds single-flights the snapshot reads that enter the mailbox
	// (coordinator_read.go).
	snapshots sync.Map
	builds    singleflight.Group

	// mu orders sends against Shutdown: senders hold it shared while they
	// check terminating and enqueue, so once Shutdown has set terminating
	// under the exclusive lock every accepted request is in a mailbox.
	mu          sync.RWMutex
	terminating bool

	stopTicker chan struct{}
	tickerDone chan struct{}

	// handingOver holds the keys HandOver queued and has not handed over
	// yet; handOverSlots a token per hand-over in flight.
	handingOver   sync.Map
	handOverSlots chan struct{}

	// caps admits creates under MaxGroups and MaxGroupsPerPrefix.
	caps groupCaps
}

// New validates o, starts the actor system, the manager and (if enabled)
// the ticker.
func New(o Options) (*System, error) {
	o = o.withDefaults()
	if err := o.validate(); err != nil {
		return nil, err
	}
	c := &System{opts: o, dispatcher: newWorkerDispatcher(dispatcherThroughput),
		stopTicker: make(chan struct{}), tickerDone: make(chan struct{}), handOverSlots: make(chan struct{}, handOverParallelism),
		caps: newGroupCaps()}
	c.system = actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
		return slog.New(warnHandler{o.Logger.Handler()}).With("lib", "protoactor")
	}))
	manager, err := c.system.Root.SpawnNamed(managerProps(c), "groups")
	if err != nil {
		c.system.Shutdown()
		return nil, fmt.Errorf("actors: spawn group manager: %w", err)
	}
	c.manager = manager
	if o.TickEnabled {
		go c.runTicker()
	} else {
		close(c.tickerDone)
	}
	return c, nil
}

// Heartbeat runs a member heartbeat, at the time it was called (its
// arrival). It is answered once the change it made is stored. It fails
// with contract.ErrNotStored when the store failed in a way that may pass,
// and with contract.ErrShed, reported to Observer.HeartbeatShed, when its
// group has MaxQueuedHeartbeats heartbeats already queued (at once,
// without queueing this one: load shedding) or did not answer within
// StoreTimeout; the HTTP layer answers both with status RETRY.
func (c *System) Heartbeat(ctx context.Context, key group.Key, req *contract.HeartbeatRequest) (contract.HeartbeatResponse, error) {
	if ch, ok := c.registry.Load(key); ok && ch.(*child).depth.heartbeats.Load() >= int64(c.opts.MaxQueuedHeartbeats) {
		c.opts.Observer.HeartbeatShed(key)
		return contract.HeartbeatResponse{}, contract.ErrShed
	}
	r := newReplyTo[contract.HeartbeatResponse]()
	msg := &heartbeatMsg{routed: routed{Key: key}, Request: req, Reply: r, Arrived: c.opts.Clock()}
	resp, err := ask(ctx, c, msg, r, c.opts.StoreTimeout)
	if errors.Is(err, errNoAnswer) {
		c.opts.Observer.HeartbeatShed(key)
		return contract.HeartbeatResponse{}, fmt.Errorf("%w: %w", contract.ErrShed, err)
	}
	return resp, err
}

// CreateGroup creates a group (endpoint #4), or with streamLevel the group
// G = P of a new stream prefix (endpoint #2, key.ConsumerGroup is ignored).
func (c *System) CreateGroup(ctx context.Context, key group.Key, req contract.CreateRequest, streamLevel bool) (contract.GroupView, error) {
	if streamLevel {
		key.ConsumerGroup = key.StreamPrefix
	}
	r := newReplyTo[contract.GroupView]()
	return ask(ctx, c, &createMsg{routed: routed{Key: key}, Request: req, StreamLevel: streamLevel, Reply: r}, r, c.opts.RequestTimeout)
}

// DeleteGroup deletes a group's metadata and returns its pre-delete view.
func (c *System) DeleteGroup(ctx context.Context, key group.Key, req contract.DeleteRequest) (contract.GroupView, error) {
	r := newReplyTo[contract.GroupView]()
	return ask(ctx, c, &deleteMsg{routed: routed{Key: key}, Request: req, Reply: r}, r, c.opts.RequestTimeout)
}

// TickNow sweeps: it sends Tick{now} to every group placed here that has
// an actor or is stored (so leases of groups nobody talks to here still
// expire; the group actors' own timers handle the rest), and a strayMsg
// to every stored group placed elsewhere whose ownership record names
// this process (a failed release must not keep the group from its
// coordinator while both live). It does not wait for the messages to be
// handled.
func (c *System) TickNow() {
	now := c.opts.Clock()
	keys := map[group.Key]bool{}
	c.registry.Range(func(k, _ any) bool {
		if key := k.(group.Key); c.placedHere(key) {
			keys[key] = true
		}
		return true
	})
	ctx, cancel := context.WithTimeout(context.Background(), c.opts.StoreTimeout)
	defer cancel()
	listed, err := c.opts.Store.List(ctx)
	if err != nil {
		c.opts.Logger.Warn("tick: list groups", "err", err)
	}
	var elsewhere []group.Key
	for _, k := range listed {
		if c.placedHere(k) {
			keys[k] = true
		} else {
			elsewhere = append(elsewhere, k)
		}
	}
	for k := range keys {
		if c.send(&tickMsg{routed: routed{Key: k}, Now: now}) != nil {
			return
		}
	}
	c.releaseStrays(ctx, elsewhere)
}

// releaseStrays sends a strayMsg to every group of keys (placed elsewhere)
// whose ownership record names this process.
func (c *System) releaseStrays(ctx context.Context, keys []group.Key) {
	if len(keys) == 0 {
		return
	}
	held, err := c.opts.Ownership.Held(ctx, keys)
	if err != nil {
		c.opts.Logger.Warn("tick: read ownership records", "err", err)
		return
	}
	for _, k := range held {
		if c.send(&strayMsg{routed{Key: k}}) != nil {
			return
		}
	}
}

// PlacedKeys lists the stored groups placed on this process: every group
// outside a cluster, those of the stream prefixes placement gives this
// coordinator inside one (the groups whose leases it expires and whose
// data-plane gauges it keeps).
func (c *System) PlacedKeys(ctx context.Context) ([]group.Key, error) {
	keys, err := c.opts.Store.List(ctx)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(keys, func(k group.Key) bool { return !c.placedHere(k) }), nil
}

// placedHere reports whether key's group is placed on this process.
func (c *System) placedHere(key group.Key) bool {
	own := c.opts.Ownership
	return own == nil || own.PlacedHere(key.StreamPrefix)
}

// HandOver orders every group actor whose group is no longer placed on
// this process (all of them once it leaves the cluster or stops serving)
// to flush, release its group and passivate, at most handOverParallelism
// at a time over all calls; a group already queued by an earlier call is
// not queued again. It does not wait.
func (c *System) HandOver() {
	own := c.opts.Ownership
	if own == nil {
		return
	}
	var keys []group.Key
	c.registry.Range(func(k, _ any) bool {
		key := k.(group.Key)
		if own.Serving() && own.PlacedHere(key.StreamPrefix) {
			return true
		}
		if _, queued := c.handingOver.LoadOrStore(key, true); !queued {
			keys = append(keys, key)
		}
		return true
	})
	go func() {
		for _, key := range keys {
			c.handOverSlots <- struct{}{}
			go func() {
				defer func() {
					c.handingOver.Delete(key)
					<-c.handOverSlots
				}()
				c.handOver(key)
			}()
		}
	}()
}

// handOverParallelism bounds the group actors handing over at once. Each
// hand-over is store calls (a commit of what is pending, the release):
// ten thousand at once would only queue on the store client's connections
// (and time out there) and on each other.
const handOverParallelism = 32

// handOver orders key's live actor, if any, to hand its group over unless
// the group is placed here again, and waits until it has, or until three
// store calls' time has passed (an actor that stops first never answers).
// Once Shutdown has begun it sends nothing.
func (c *System) handOver(key group.Key) {
	own := c.opts.Ownership
	v, ok := c.registry.Load(key)
	if !ok || own.Serving() && own.PlacedHere(key.StreamPrefix) {
		return
	}
	c.mu.RLock()
	if c.terminating {
		c.mu.RUnlock()
		return
	}
	f := c.system.Root.RequestFuture(v.(*child).pid, handOver{}, 3*c.opts.StoreTimeout)
	c.mu.RUnlock()
	_, _ = f.Result()
}

// Actors reports how many group actors are live (for a graceful leave,
// which waits for the handed-over ones to stop).
func (c *System) Actors() int {
	n := 0
	c.registry.Range(func(any, any) bool { n++; return true })
	return n
}

// Shutdown stops the ticker, rejects new requests with
// contract.ErrTerminating, lets every group actor answer what is already in
// its mailbox (committing pending batches), then stops the actor system.
// It does not close the store. If ctx ends first, the actors are stopped
// without draining and ctx's error is returned. Later calls return nil at
// once.
func (c *System) Shutdown(ctx context.Context) error {
	c.mu.Lock()
	already := c.terminating
	c.terminating = true
	c.mu.Unlock()
	if already {
		return nil
	}
	close(c.stopTicker)
	<-c.tickerDone

	drained := make(chan struct{})
	c.system.Root.Send(c.manager, drain{done: drained})
	defer c.system.Shutdown()
	select {
	case <-drained:
	case <-ctx.Done():
		c.system.Root.Stop(c.manager)
		return fmt.Errorf("actors: shutdown: %w", ctx.Err())
	}
	if err := c.system.Root.PoisonFuture(c.manager).Wait(); err != nil {
		return fmt.Errorf("actors: stop group manager: %w", err)
	}
	return nil
}

// send enqueues a group message unless the coordinator is terminating.
func (c *System) send(msg request) error {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.terminating {
		return c.terminatingErr()
	}
	if ch, ok := c.registry.Load(msg.GroupKey()); ok {
		c.system.Root.Send(ch.(*child).pid, msg)
	} else {
		c.system.Root.Send(c.manager, msg)
	}
	return nil
}

// terminatingErr refuses requests once Shutdown began: another
// coordinator serves the group when this one left the cluster
// (cluster.ErrNotServing), else contract.ErrTerminating.
func (c *System) terminatingErr() error {
	if o := c.opts.Ownership; o != nil && o.Leaving() {
		return cluster.ErrNotServing
	}
	return contract.ErrTerminating
}

// requestTimers recycles the stopped timers of ask (saving a timer and its
// channel per request). Since Go 1.23 a stopped or reset timer never
// delivers a stale tick, so a recycled timer is as good as a new one.
var requestTimers = sync.Pool{New: func() any {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return t
}}

// errNoAnswer marks ask's error when the actor did not answer within the
// wait it was given.
var errNoAnswer = errors.New("no answer in time")

// ask sends msg and waits for its reply on r, for ctx, or at most wait
// (an error that is errNoAnswer and context.DeadlineExceeded).
//
// A heartbeat waits at most StoreTimeout: an actor held up by store calls
// of earlier requests (with a frozen store each takes the whole timeout,
// and a failed write is followed by a reload) would otherwise keep it for
// several. Heartbeat then fails with contract.ErrShed (its member is
// answered RETRY), which is what a lost answer costs (docs/protocol.md,
// improvement 8: the retry with the previous epoch is accepted), and the
// actor's later answer is dropped. Every other request waits at most
// RequestTimeout.
func ask[T any](ctx context.Context, c *System, msg request, r replyTo[T], wait time.Duration) (T, error) {
	var zero T
	if err := c.send(msg); err != nil {
		return zero, err
	}
	timer := requestTimers.Get().(*time.Timer)
	timer.Reset(wait)
	defer func() {
		timer.Stop()
		requestTimers.Put(timer)
	}()
	select {
	case rep := <-r:
		return rep.Value, rep.Err
	case <-ctx.Done():
		return zero, ctx.Err()
	case <-timer.C:
		return zero, fmt.Errorf("group %s did not answer in %s: %w (%w)", msg.GroupKey(), wait, errNoAnswer, context.DeadlineExceeded)
	}
}

// runTicker sweeps (TickNow) at start and every SweepInterval until
// Shutdown. After the first sweep it prunes the ownership records, and
// after each later one until a prune succeeded.
func (c *System) runTicker() {
	defer close(c.tickerDone)
	c.TickNow()
	pruned := c.pruneOwners()
	t := time.NewTicker(c.opts.SweepInterval)
	defer t.Stop()
	for {
		select {
		case <-c.stopTicker:
			return
		case <-t.C:
			c.TickNow()
			if !pruned {
				pruned = c.pruneOwners()
			}
		}
	}
}

// pruneOwners removes the ownership records left for groups that are not
// stored, by releases of earlier versions and by coordinators that
// stopped between an acquire and its release (Ownership.PruneOwners: a
// pass over every record, once per process). It waits at most
// RequestTimeout, and not past Shutdown's start; it reports whether the
// prune succeeded (true without Ownership).
func (c *System) pruneOwners() bool {
	o := c.opts.Ownership
	if o == nil {
		return true
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.opts.RequestTimeout)
	defer cancel()
	go func() {
		select {
		case <-c.stopTicker:
			cancel()
		case <-ctx.Done():
		}
	}()
	n, err := o.PruneOwners(ctx)
	if err != nil {
		c.opts.Logger.Warn("prune ownership records", "err", err)
		return false
	}
	if n > 0 {
		c.opts.Logger.Info("pruned the ownership records of groups that are not stored", "records", n)
	}
	return true
}

// compareKeys orders keys by stream prefix, then consumer group.
func compareKeys(a, b group.Key) int {
	return cmp.Or(cmp.Compare(a.StreamPrefix, b.StreamPrefix), cmp.Compare(a.ConsumerGroup, b.ConsumerGroup))
}
