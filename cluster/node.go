package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/persistence"
	"github.com/redis-stream-coordinator/coordinator/placement"
)

// Defaults of Options.
const (
	DefaultLeaseTTL = 5 * time.Second
	// DefaultRenewFraction: the lease is renewed every LeaseTTL/5.
	DefaultRenewFraction = 5
)

// safetyFactor is the share of the lease a node serves after a renewal
// was sent: it stops answering at 90 % of the TTL, which tolerates a drift
// rate of its clock against the store's of up to 10 %.
const safetyFactor = 0.9

// Options configure a Node.
type Options struct {
	// Store keeps the registry, the ownership records and the groups.
	Store Store
	// ID names this coordinator (stable across restarts: a pod or host
	// name); URL is where other coordinators reach its HTTP API
	// (scheme://host:port).
	ID, URL string
	// LeaseTTL is the registry lease; a crashed coordinator's groups move
	// after it. 0 → DefaultLeaseTTL.
	LeaseTTL time.Duration
	// RenewInterval is the pause between renewals, which also refresh the
	// list of live coordinators (and every 5th the stream prefixes to place).
	// 0 → LeaseTTL/DefaultRenewFraction.
	RenewInterval time.Duration
	// StoreTimeout bounds each registry call. 0 → 2 s.
	StoreTimeout time.Duration
	// Observer receives metrics hooks; nil → none.
	Observer Observer
	// Logger; nil → discard.
	Logger *slog.Logger
}

// Store is the part of a store the node uses.
type Store interface {
	persistence.Cluster
	List(ctx context.Context) ([]group.Key, error)
}

// Observer receives the node's events (package metrics implements it).
type Observer interface {
	// Renewed reports a renewal of the registry lease (err nil) or its
	// failure.
	Renewed(err error)
	// MembershipChanged reports the live coordinators after a change.
	MembershipChanged(live []persistence.Peer)
}

// NotOwnerError refuses a request for a group this node does not own:
// Owner is the coordinator that owns it or should (its URL may be empty
// when unknown). It matches persistence.ErrNotOwner, the one error for
// "not the group's owner".
type NotOwnerError struct{ Owner persistence.Peer }

func (e *NotOwnerError) Error() string {
	if e.Owner.ID == "" {
		return "no live coordinator owns the group"
	}
	return "group owned by coordinator " + e.Owner.ID
}

// Is makes errors.Is(err, persistence.ErrNotOwner) hold.
func (e *NotOwnerError) Is(target error) bool { return target == persistence.ErrNotOwner }

// ErrNotServing: the node is not registered yet (an earlier run of its id
// still holds the registry entry, another live process holds the id, or
// the store is down), its registry lease may have ended (a renewal did not
// get through in time), or it is leaving; it answers for no group until it
// is registered again. It matches persistence.ErrNotOwner.
var ErrNotServing = fmt.Errorf("coordinator not serving: %w", persistence.ErrNotOwner)

// Node is this process's cluster membership. It is safe for concurrent use.
type Node struct {
	opts Options
	base time.Time // monotonic origin of validUntil

	// self is this coordinator's run: its entry with its current token
	// and the key pair that token is the public key of; every request
	// reads it (forwarding), so it is swapped, not locked.
	self atomic.Pointer[run]

	validUntil atomic.Int64 // ns since base; 0 = not serving
	live       atomic.Pointer[[]persistence.Peer]
	leaving    atomic.Bool
	// placing is the placement Placed reads, recomputed by place from
	// live, leaving, self and prefixes whenever one of them changes.
	placing atomic.Pointer[placements]
	// placeMu serializes place; it guards prefixes, the stream prefixes
	// to place with their number of consumer groups, as last listed plus
	// those created here since.
	placeMu  sync.Mutex
	prefixes map[string]int
	// changed is called (outside locks) after every renewal, refresh and
	// placement, and after the node's service changes: the runtime then
	// hands over what is not placed here.
	changed atomic.Pointer[func()]

	stop    chan struct{}
	done    chan struct{}
	poke    chan struct{} // asks run to refresh at once
	created chan struct{} // asks run to place at once (Created)
	started atomic.Bool
	// registered: the registry holds this run's entry.
	registered atomic.Bool
	// refused: the registrations since the last success failed; held: they
	// have found the id held by a live entry with another token since
	// heldSince; reportedAt is when that was last logged as an ERROR
	// (since base). Run's goroutine, and Start before it.
	refused, held         bool
	heldSince, reportedAt time.Duration
	// nextList: when refresh lists the groups next (since base; run's
	// goroutine, and Start before it).
	nextList time.Duration

	handovers handoverLog
	// refusals are the forwards refused per peer id (ForwardRefused).
	refusals refusalLog
}

// run is one registration of this node: its registry entry and the key
// pair whose public key is the entry's token (ForwardKeys).
type run struct {
	entry persistence.Peer
	keys  *ForwardKeys
}

// newRun returns a run of the coordinator id at url with a new key pair.
func newRun(id, url string) *run {
	keys := NewForwardKeys()
	return &run{entry: persistence.Peer{ID: id, URL: url, Token: keys.Token()}, keys: keys}
}

// New returns a node; Start registers it.
func New(o Options) (*Node, error) {
	if o.Store == nil || o.ID == "" || o.URL == "" {
		return nil, errors.New("cluster: Store, ID and URL are required")
	}
	if o.LeaseTTL <= 0 {
		o.LeaseTTL = DefaultLeaseTTL
	}
	if o.RenewInterval <= 0 {
		o.RenewInterval = o.LeaseTTL / DefaultRenewFraction
	}
	if o.RenewInterval >= o.LeaseTTL/2 {
		return nil, fmt.Errorf("cluster: RenewInterval %s must be below half of LeaseTTL %s", o.RenewInterval, o.LeaseTTL)
	}
	if o.StoreTimeout <= 0 {
		o.StoreTimeout = 2 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Observer == nil {
		o.Observer = nopObserver{}
	}
	n := &Node{opts: o, base: time.Now(), stop: make(chan struct{}), done: make(chan struct{}), poke: make(chan struct{}, 1), created: make(chan struct{}, 1), prefixes: map[string]int{}}
	n.self.Store(newRun(o.ID, o.URL))
	n.live.Store(&[]persistence.Peer{})
	n.place()
	return n, nil
}

// OnChange sets the function called after every renewal and refresh,
// after the placement or the node's service change: the runtime hands over
// every group not placed here.
func (n *Node) OnChange(f func()) { n.changed.Store(&f) }

// Start registers the node and renews its lease in the background until
// Stop. A registration that fails (the store is down, or an earlier run of
// the id still holds a live lease after a crash: at most LeaseTTL) is
// retried every RenewInterval; the node serves nothing until it succeeds.
func (n *Node) Start(ctx context.Context) {
	n.register(ctx)
	n.refresh(ctx)
	n.started.Store(true)
	// #nosec G118 -- run lives from Start to Stop (it returns when Stop closes n.stop), not for the ctx of Start, which bounds the first registration only
	go n.run()
}

// register sends a registration and, once it succeeds, serves until the
// lease measured from the send time nears its end. A failure is logged
// once (WARN) until a registration succeeds. An id still held by a live
// entry more than a lease (and a renewal) after the refusals began is not
// an earlier run's, whose lease would have ended: another live process
// renews it, and that is logged as an ERROR every LeaseTTL.
func (n *Node) register(ctx context.Context) {
	err := n.renewWith(ctx, n.opts.Store.Register)
	if err == nil {
		n.registered.Store(true)
		n.refused, n.held = false, false
		n.notify()
		return
	}
	if !n.refused {
		n.refused = true
		n.opts.Logger.Warn("cluster: registration refused; retrying (an earlier run of this id holds the registry entry until its lease ends, or the store is down)",
			"id", n.opts.ID, "err", err)
	}
	if !errors.Is(err, persistence.ErrIdentityInUse) {
		n.held = false
		return
	}
	now := time.Since(n.base)
	if !n.held {
		n.held, n.heldSince, n.reportedAt = true, now, now
		return
	}
	if now-n.heldSince > n.opts.LeaseTTL+n.opts.RenewInterval && now-n.reportedAt >= n.opts.LeaseTTL {
		n.reportedAt = now
		n.opts.Logger.Error("cluster: coordinator id in use by another live process; this one serves nothing while that one runs: give each coordinator its own coordinator.id (COORDINATOR_ID)",
			"id", n.opts.ID, "otherUrl", n.holderURL(), "url", n.opts.URL)
	}
}

// holderURL is the URL of the live entry of this node's id that has
// another token, as last read ("unknown" when none was read).
func (n *Node) holderURL() string {
	token := n.Self().Token
	for _, c := range n.Live() {
		if c.ID == n.opts.ID && c.Token != token {
			return c.URL
		}
	}
	return "unknown"
}

func (n *Node) renewWith(ctx context.Context, call func(context.Context, persistence.Peer, time.Duration) error) error {
	self := n.Self()
	sent := time.Since(n.base)
	cctx, cancel := context.WithTimeout(ctx, n.opts.StoreTimeout)
	err := call(cctx, self, n.opts.LeaseTTL)
	cancel()
	if err == nil {
		n.validUntil.Store(int64(sent + time.Duration(float64(n.opts.LeaseTTL)*safetyFactor)))
	}
	return err
}

// run renews the lease and refreshes the live set every RenewInterval.
// A refused renewal (the lease ended: the process was paused or cut off
// from the store) stops service at once and registers a new run of the
// id, with a new token; the groups are then taken anew.
func (n *Node) run() {
	defer close(n.done)
	t := time.NewTicker(n.opts.RenewInterval)
	defer t.Stop()
	ctx := context.Background()
	for {
		select {
		case <-n.stop:
			return
		case <-n.poke:
			n.refresh(ctx)
		case <-n.created:
			n.place()
		case <-t.C:
			n.renew(ctx)
			n.refresh(ctx)
		}
		// After every event, not only after a change: a group acquired
		// here because the coordinator it is placed on forwarded it (their
		// views differed) is handed over if it is still not placed here,
		// so views that converge leave no group behind.
		n.notify()
	}
}

// renew renews the registry lease, or registers when not registered.
func (n *Node) renew(ctx context.Context) {
	if !n.registered.Load() {
		n.register(ctx)
		return
	}
	err := n.renewWith(ctx, n.opts.Store.Renew)
	n.opts.Observer.Renewed(err)
	if errors.Is(err, persistence.ErrNotRegistered) {
		n.opts.Logger.Warn("cluster: registry lease lost; registering anew", "id", n.opts.ID)
		n.registered.Store(false)
		n.validUntil.Store(0)
		n.self.Store(newRun(n.opts.ID, n.opts.URL))
		n.place()
		n.notify()
		n.register(ctx)
	} else if err != nil {
		n.opts.Logger.Warn("cluster: renew registry lease", "err", err)
	}
}

// The groups are listed every listEvery renewals, and no sooner than
// listBudget × d after a List that took d: a List touches every group
// (the Redis store checks that each indexed hash exists, and reads the
// aggregates of groups stored before names were validated), a cost that
// grows with the number of groups on every coordinator at once.
const (
	listEvery  = 5
	listBudget = 20
)

// refresh reads the live coordinators (kept with their current lease
// ends) and, when due (listEvery), the stream prefixes; it reports a
// change of membership (an id, token or URL) and recomputes the placement
// when the membership or the prefixes changed. It runs on run's goroutine
// (and in Start before it).
func (n *Node) refresh(ctx context.Context) {
	cctx, cancel := context.WithTimeout(ctx, n.opts.StoreTimeout)
	defer cancel()
	live, err := n.opts.Store.Coordinators(cctx)
	if err != nil {
		n.opts.Logger.Warn("cluster: list coordinators", "err", err)
		return
	}
	changed := !slices.EqualFunc(*n.live.Load(), live, func(a, b persistence.Peer) bool {
		return a.ID == b.ID && a.Token == b.Token && a.URL == b.URL
	})
	n.live.Store(&live)
	if changed {
		n.opts.Observer.MembershipChanged(live)
	}
	if n.listPrefixes(cctx) {
		changed = true
	}
	if changed {
		n.place()
	}
}

// listPrefixes reads the stream prefixes from the store's groups when due
// and reports whether they changed.
func (n *Node) listPrefixes(ctx context.Context) bool {
	start := time.Since(n.base)
	if start < n.nextList {
		return false
	}
	keys, err := n.opts.Store.List(ctx)
	n.nextList = start + max(listEvery*n.opts.RenewInterval, listBudget*(time.Since(n.base)-start))
	if err != nil {
		n.opts.Logger.Warn("cluster: list groups", "err", err)
		return false
	}
	prefixes := map[string]int{}
	for _, k := range keys {
		prefixes[k.StreamPrefix]++
	}
	n.placeMu.Lock()
	defer n.placeMu.Unlock()
	if maps.Equal(n.prefixes, prefixes) {
		return false
	}
	n.prefixes = prefixes
	return true
}

// Created adds the stream prefix of a group just created here to the
// prefixes placed, so that this coordinator places it at once (on run's
// goroutine, within moments) as the others will once they list it,
// rather than at its next list. A known prefix is left as listed (the
// next list counts the new group).
func (n *Node) Created(key group.Key) {
	n.placeMu.Lock()
	_, known := n.prefixes[key.StreamPrefix]
	if !known {
		n.prefixes[key.StreamPrefix] = 1
	}
	n.placeMu.Unlock()
	if !known {
		select {
		case n.created <- struct{}{}:
		default:
		}
	}
}

func (n *Node) notify() {
	if f := n.changed.Load(); f != nil {
		(*f)()
	}
}

// Unreachable reports that coordinator id did not answer a forwarded
// request: the live coordinators are read again at once (it may have
// left), instead of at the next renewal.
func (n *Node) Unreachable(string) {
	select {
	case n.poke <- struct{}{}:
	default:
	}
}

// ID returns this node's coordinator id (Options.ID).
func (n *Node) ID() string { return n.opts.ID }

// Self returns this node's registry entry (with its current token, the
// public key of its current run).
func (n *Node) Self() persistence.Peer {
	return n.self.Load().entry
}

// ForwardKey returns the key of the marks of requests forwarded between
// this node's current run and peer, a live coordinator as last read (nil
// when peer's token is not a public key): ForwardKeys.With.
func (n *Node) ForwardKey(peer persistence.Peer) []byte {
	return n.self.Load().keys.With(peer)
}

// Serving reports whether the node may answer for the groups it owns:
// its registry lease cannot have ended yet.
func (n *Node) Serving() bool {
	return !n.leaving.Load() && time.Since(n.base) < time.Duration(n.validUntil.Load())
}

// Live returns the live coordinators as last read (every RenewInterval),
// sorted by id, with their lease ends as of that read.
func (n *Node) Live() []persistence.Peer { return *n.live.Load() }

// Placed returns the coordinator that should own the groups of stream
// prefix, among the live coordinators (this node excluded once it is
// leaving, and included while it serves even before its own entry was read
// back): by rendezvous hashing with bounded loads over every listed prefix
// (placement.Bounded, weighted by consumer groups, ε =
// placement.DefaultEpsilon), or by plain rendezvous hashing
// (placement.Owner) for a prefix not listed yet. ok is false when there is
// no candidate. It is a map lookup and allocates nothing.
func (n *Node) Placed(prefix string) (c persistence.Peer, ok bool) {
	p := n.placing.Load()
	l := p.base
	if p.withSelf != nil && n.Serving() {
		l = p.withSelf
	}
	if c, ok := l.owners[prefix]; ok {
		return c, true
	}
	id, ok := placement.Owner(prefix, l.ids)
	return l.byID[id], ok
}

// PlacedHere reports whether this node should own the groups of prefix.
func (n *Node) PlacedHere(prefix string) bool {
	c, ok := n.Placed(prefix)
	return ok && c.ID == n.opts.ID
}

// placements are the placements Placed chooses from: base, and withSelf
// (nil unless this node is not leaving and absent from the live
// coordinators read) for while it serves.
type placements struct{ base, withSelf *layout }

// layout is the placement on one set of candidate coordinators (ids, and
// byID their entries): owners maps every listed stream prefix to its
// coordinator.
type layout struct {
	ids    []string
	byID   map[string]persistence.Peer
	owners map[string]persistence.Peer
}

// place recomputes the placements from the live coordinators, leaving,
// self and the listed prefixes; every change of one of them calls it.
func (n *Node) place() {
	n.placeMu.Lock()
	defer n.placeMu.Unlock()
	live := n.Live()
	i := slices.IndexFunc(live, func(c persistence.Peer) bool { return c.ID == n.opts.ID })
	p := &placements{}
	switch {
	case n.leaving.Load() && i >= 0:
		p.base = n.layout(slices.Delete(slices.Clone(live), i, i+1))
	case !n.leaving.Load() && i < 0:
		p.base = n.layout(live)
		p.withSelf = n.layout(append(slices.Clone(live), n.Self()))
	default:
		p.base = n.layout(live)
	}
	n.placing.Store(p)
}

// layout places n.prefixes on coords (placeMu held).
func (n *Node) layout(coords []persistence.Peer) *layout {
	l := &layout{ids: make([]string, len(coords)), byID: make(map[string]persistence.Peer, len(coords)), owners: map[string]persistence.Peer{}}
	for i, c := range coords {
		l.ids[i] = c.ID
		l.byID[c.ID] = c
	}
	if len(coords) < 2 {
		return l // Placed's fallback, Owner, gives the only one
	}
	for prefix, id := range placement.Bounded(n.prefixes, l.ids, placement.DefaultEpsilon) {
		l.owners[prefix] = l.byID[id]
	}
	return l
}

// Acquire takes ownership of key's group for this node, for a request
// Route decided to serve here: it places nothing and trusts that
// decision. It is fencing, not routing: it refuses while the node is not
// Serving (ErrNotServing) and when the store names another live owner (a
// *NotOwnerError naming it), and returns the ownership epoch the store
// fences the group's writes with.
func (n *Node) Acquire(ctx context.Context, key group.Key) (int64, error) {
	if !n.Serving() {
		return 0, ErrNotServing
	}
	cctx, cancel := context.WithTimeout(ctx, n.opts.StoreTimeout)
	defer cancel()
	o, err := n.opts.Store.Acquire(cctx, key, n.Self())
	if owned, ok := errors.AsType[*persistence.OwnedError](err); ok {
		return 0, &NotOwnerError{Owner: owned.Owner}
	}
	if err != nil {
		return 0, err
	}
	return o.Epoch, nil
}

// Release gives up key's group (after its last write), so that the
// coordinator it is placed on can take it at once. A release to another
// coordinator (or to none, when none is live) is a handover, kept for
// View; one of a group still placed here is not.
func (n *Node) Release(ctx context.Context, key group.Key) error {
	h := contract.Handover{At: time.Now().UTC(), StreamPrefix: key.StreamPrefix, ConsumerGroup: key.ConsumerGroup, From: n.opts.ID, Cause: "placement"}
	if n.Leaving() {
		h.Cause = "shutdown"
	}
	if to, ok := n.Placed(key.StreamPrefix); ok {
		h.To = to.ID
	}
	if h.To != h.From {
		n.handovers.add(h)
	}
	cctx, cancel := context.WithTimeout(ctx, n.opts.StoreTimeout)
	defer cancel()
	return n.opts.Store.Release(cctx, key, n.Self())
}

// Held returns those of keys whose ownership record names this node.
func (n *Node) Held(ctx context.Context, keys []group.Key) ([]group.Key, error) {
	cctx, cancel := context.WithTimeout(ctx, n.opts.StoreTimeout)
	defer cancel()
	owners, err := n.opts.Store.Owners(cctx, keys)
	if err != nil {
		return nil, err
	}
	var held []group.Key
	for i, o := range owners {
		if o.Coordinator == n.opts.ID {
			held = append(held, keys[i])
		}
	}
	return held, nil
}

// PruneOwners removes the ownership records of groups that are not
// stored and that no live coordinator holds (persistence.Cluster).
func (n *Node) PruneOwners(ctx context.Context) (int, error) {
	return n.opts.Store.PruneOwners(ctx)
}

// Leave starts a graceful departure: from now on no group is placed here
// and the node stops serving; the runtime hands its groups over (after
// OnChange's call) and Stop deregisters it.
func (n *Node) Leave() {
	if n.leaving.Swap(true) {
		return
	}
	n.place()
	n.notify()
}

// Leaving reports whether Leave was called.
func (n *Node) Leaving() bool { return n.leaving.Load() }

// Stop ends the renewals and deregisters the node (a later Start is not
// supported). Call it after every group was handed over.
func (n *Node) Stop(ctx context.Context) error {
	select {
	case <-n.stop:
		return nil
	default:
	}
	close(n.stop)
	if n.started.Load() {
		<-n.done
	}
	n.validUntil.Store(0)
	if !n.registered.Load() {
		return nil
	}
	cctx, cancel := context.WithTimeout(ctx, n.opts.StoreTimeout)
	defer cancel()
	return n.opts.Store.Deregister(cctx, n.Self())
}

type nopObserver struct{}

func (nopObserver) Renewed(error)                        {}
func (nopObserver) MembershipChanged([]persistence.Peer) {}
