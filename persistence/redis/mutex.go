package redis

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"
	goredis "github.com/redis/go-redis/v9"

	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/persistence"
)

// Mutex defaults (coordination.state-mutex.*).
const (
	DefaultMutexTTL            = 30 * time.Second
	DefaultMutexAcquireTimeout = 5 * time.Second
	DefaultMutexRetryInterval  = 100 * time.Millisecond
)

// MutexOptions configure a Locker. Zero durations take the defaults.
type MutexOptions struct {
	// Client is the Redis (or Redis Cluster) client; the caller owns it.
	Client goredis.UniversalClient
	// KeyPrefix is prepended literally to every key; empty means
	// DefaultKeyPrefix. Use the store's prefix.
	KeyPrefix string
	// CoordinatorID starts every token (<coordinatorID>:<uuid>), so an
	// operator can tell which process holds a mutex, and so that a
	// coordinator takes over a mutex it left behind (a release that could
	// not reach Redis) instead of waiting out its TTL. Coordinator ids must
	// be unique among running coordinators; within one, a group's critical
	// sections never overlap (one actor per group).
	CoordinatorID string
	// TTL is how long a mutex outlives a holder that stopped renewing it.
	// A holder renews it every TTL/3.
	TTL time.Duration
	// AcquireTimeout bounds how long Lock waits before ErrLockTimeout.
	AcquireTimeout time.Duration
	// RetryInterval is the pause between attempts to take a held mutex.
	RetryInterval time.Duration
}

func (o *MutexOptions) validate() error {
	switch {
	case o.Client == nil:
		return errors.New("redis mutex: Client is required")
	case o.CoordinatorID == "":
		return errors.New("redis mutex: CoordinatorID is required")
	case o.TTL < 3*time.Millisecond:
		return fmt.Errorf("redis mutex: TTL %v must be at least 3ms", o.TTL)
	case o.AcquireTimeout <= 0:
		return fmt.Errorf("redis mutex: AcquireTimeout %v must be positive", o.AcquireTimeout)
	case o.RetryInterval <= 0:
		return fmt.Errorf("redis mutex: RetryInterval %v must be positive", o.RetryInterval)
	}
	return nil
}

// Locker is the per-group Redis state mutex: key <kp>:{P:G}:mutex, in the
// same Cluster slot as the group's metadata hash. Unlike the Kotlin
// server's single <kp>:state-mutex, groups never wait on each other.
// The store's revision check stays the final guard: a holder that loses
// the mutex (TTL expiry during a stall) cannot overwrite newer state.
type Locker struct {
	o MutexOptions
}

var _ persistence.Locker = (*Locker)(nil)

// NewLocker returns a Locker. It does not contact Redis.
func NewLocker(o MutexOptions) (*Locker, error) {
	o.KeyPrefix = cmp.Or(o.KeyPrefix, DefaultKeyPrefix)
	o.TTL = cmp.Or(o.TTL, DefaultMutexTTL)
	o.AcquireTimeout = cmp.Or(o.AcquireTimeout, DefaultMutexAcquireTimeout)
	o.RetryInterval = cmp.Or(o.RetryInterval, DefaultMutexRetryInterval)
	if err := o.validate(); err != nil {
		return nil, err
	}
	return &Locker{o: o}, nil
}

func (l *Locker) mutexKey(k group.Key) string {
	return l.o.KeyPrefix + ":" + k.HashTag() + ":mutex"
}

// Lock takes the group's mutex (SET PX when it is free or holds a token of
// this coordinator id), retrying every RetryInterval until AcquireTimeout
// (ErrLockTimeout) or ctx ends. While
// held, a goroutine renews the TTL every TTL/3; unlock stops it and
// deletes the key if this holder's token is still there. unlock is
// idempotent.
//
// A Redis error ends Lock at once: ErrUnavailable when the attempt cannot
// have run; otherwise the mutex may have been taken, so Lock releases it
// (best effort) before returning the error.
func (l *Locker) Lock(ctx context.Context, key group.Key) (func(), error) {
	mk := l.mutexKey(key)
	own := l.o.CoordinatorID + ":"
	token := own + uuid.NewString()
	ttl := l.o.TTL.Milliseconds()
	deadline := time.NewTimer(l.o.AcquireTimeout)
	defer deadline.Stop()
	for {
		ok, err := acquireScript.Run(ctx, l.o.Client, []string{mk}, token, ttl, own).Bool()
		if err != nil {
			if notSent(err) {
				return nil, fmt.Errorf("redis mutex %s: %w: %w", key, persistence.ErrUnavailable, err)
			}
			l.release(ctx, mk, token)
			return nil, fmt.Errorf("redis mutex %s: acquire outcome unknown: %w", key, err)
		}
		if ok {
			return l.hold(ctx, mk, token), nil
		}
		retry := time.NewTimer(l.o.RetryInterval)
		select {
		case <-ctx.Done():
			retry.Stop()
			return nil, fmt.Errorf("redis mutex %s: %w", key, ctx.Err())
		case <-deadline.C:
			retry.Stop()
			return nil, fmt.Errorf("redis mutex %s: not acquired within %v: %w", key, l.o.AcquireTimeout, persistence.ErrLockTimeout)
		case <-retry.C:
		}
	}
}

// hold starts the renewal goroutine and returns the unlock function.
func (l *Locker) hold(ctx context.Context, mk, token string) func() {
	ctx = context.WithoutCancel(ctx)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(l.o.TTL / 3)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				rctx, cancel := context.WithTimeout(ctx, l.o.TTL/3)
				held, err := renewScript.Run(rctx, l.o.Client, []string{mk}, token, l.o.TTL.Milliseconds()).Bool()
				cancel()
				if err == nil && !held {
					return // lost: another holder has it now
				}
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(stop)
			<-done
			l.release(ctx, mk, token)
		})
	}
}

// release deletes the mutex if token holds it, best effort: on failure
// the key expires after its TTL.
func (l *Locker) release(ctx context.Context, mk, token string) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.o.AcquireTimeout)
	defer cancel()
	_ = releaseScript.Run(rctx, l.o.Client, []string{mk}, token).Err()
}
