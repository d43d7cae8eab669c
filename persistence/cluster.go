package persistence

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/redis-stream-coordinator/coordinator/group"
)

// Peer is one coordinator process of the cluster (this one included) as
// the registry knows it: a stable id (the pod or host name), a token drawn
// at each start (so two runs of one id are told apart) and the URL other
// coordinators forward requests to. The token is public: it is the run's X25519 public key
// (cluster.ForwardKeys), from which the other coordinators derive the key
// of the marks they exchange with it; the private key never reaches the
// store, so reading the registry does not let anyone sign a mark.
type Peer struct {
	ID    string `json:"id"`
	Token string `json:"-"`
	URL   string `json:"url"`
	// ExpiresAt is when the registry lease ends, on the store's clock
	// (informational: no process compares it with its own clock).
	ExpiresAt time.Time `json:"leaseExpiresAt"`
}

// Owner is a group's ownership record: the coordinator that may write the
// group and the ownership epoch, which rises at every change of owner and
// never falls (a release keeps it).
type Owner struct {
	Coordinator string `json:"coordinator"` // empty: released or never owned
	Token       string `json:"-"`
	Epoch       int64  `json:"ownershipEpoch"`
}

// Fence is what a fenced write carries: the writer's ownership of the
// group. The zero Fence writes unfenced.
type Fence struct {
	Coordinator, Token string
	Epoch              int64
}

// Fenced reports whether f conditions writes.
func (f Fence) Fenced() bool { return f.Epoch > 0 }

// String encodes f the way the stores compare it ("" when unfenced).
func (f Fence) String() string {
	if !f.Fenced() {
		return ""
	}
	return f.Coordinator + "\n" + f.Token + "\n" + strconv.FormatInt(f.Epoch, 10)
}

// Errors of the Cluster methods and of fenced writes.
var (
	// ErrNotOwner: this process is not the group's owner, and did
	// nothing. It is the one error for that: a fenced write that found
	// another owner (or none) wraps it (the writer has been deposed:
	// outcome Deposed), and so do the cluster's refusals to serve a group
	// (cluster.NotOwnerError naming the owner, cluster.ErrNotServing).
	ErrNotOwner = errors.New("not the group's owner")
	// ErrIdentityInUse: a live registry entry has this id and another
	// token (an earlier run whose lease has not ended yet).
	ErrIdentityInUse = errors.New("coordinator id in use by a live process")
	// ErrNotRegistered: the registry entry is gone, has ended or has
	// another token; the process must stop serving and register anew.
	ErrNotRegistered = errors.New("coordinator not registered")
)

// OwnedError is Acquire's refusal: a live coordinator other than the
// caller owns the group.
type OwnedError struct{ Owner Peer }

func (e *OwnedError) Error() string { return "group owned by live coordinator " + e.Owner.ID }

// Cluster is the coordinator registry and the groups' ownership records,
// kept by the same store as the groups. Leases are measured on the
// store's clock only.
//
// A store that has acquired a group fences every later write to it
// (Create, Commit, Delete) with that ownership until Release or a Delete
// of the group: the write happens only while the ownership record still
// names this process and epoch, and fails with ErrNotOwner otherwise.
// Writes to groups the store never acquired are unfenced.
//
// An ownership record exists only while its group is stored, or while a
// live coordinator holds it (to create the group): Delete removes the
// group's record with the group, Release removes the record of a group
// that is not stored, and PruneOwners removes the records that earlier
// versions and crashed coordinators left. A group stored again after its
// record was removed is acquired at epoch 1.
type Cluster interface {
	// Register adds self with a lease of ttl, or renews it when the
	// entry already has self's token; ErrIdentityInUse when a live entry
	// of self.ID has another token.
	Register(ctx context.Context, self Peer, ttl time.Duration) error
	// Renew extends self's lease by ttl from now; ErrNotRegistered when
	// the entry is absent, has ended or has another token.
	Renew(ctx context.Context, self Peer, ttl time.Duration) error
	// Deregister removes self's entry if it has self's token.
	Deregister(ctx context.Context, self Peer) error
	// Coordinators lists the live entries, sorted by id.
	Coordinators(ctx context.Context) ([]Peer, error)
	// Acquire makes self the owner of key unless a live coordinator other
	// than self (*OwnedError) owns it, and returns the ownership. Taking a
	// group from another coordinator (released, or whose entry has ended
	// or changed token) raises the epoch; acquiring one self already owns
	// keeps it. self must be registered (ErrNotRegistered).
	Acquire(ctx context.Context, key group.Key, self Peer) (Owner, error)
	// Release clears self's ownership of key (keeping the epoch) and
	// stops fencing writes to it; a record naming another owner is left
	// alone. Self's record of a group that is not stored is removed.
	Release(ctx context.Context, key group.Key, self Peer) error
	// PruneOwners removes the ownership records of groups that are not
	// stored and that no live coordinator holds (released, or naming a
	// coordinator whose lease ended or that registered again with another
	// token), and returns how many it removed. A record a live coordinator
	// holds is kept: that coordinator may be creating the group.
	PruneOwners(ctx context.Context) (int, error)
	// Owners returns the ownership records of keys (a zero Owner for a
	// key without one).
	Owners(ctx context.Context, keys []group.Key) ([]Owner, error)
}

// Fences remembers the ownership a store acquired per group, so that the
// store's writes to the group carry it. The zero value is ready to use.
type Fences struct{ m sync.Map }

// Hold records o as key's fence.
func (f *Fences) Hold(key group.Key, o Owner) {
	f.m.Store(key, Fence(o))
}

// Drop forgets key's fence.
func (f *Fences) Drop(key group.Key) { f.m.Delete(key) }

// Of returns key's fence (zero when none is held).
func (f *Fences) Of(key group.Key) Fence {
	if v, ok := f.m.Load(key); ok {
		return v.(Fence)
	}
	return Fence{}
}

// NotOwner wraps ErrNotOwner for a fenced write of op on key.
func NotOwner(store, op string, key group.Key, f Fence) error {
	return fmt.Errorf("%s: %s %s: ownership epoch %d: %w", store, op, key, f.Epoch, ErrNotOwner)
}
