package breaker

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sony/gobreaker/v2"

	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/persistence"
)

// Defaults for zero Options fields.
const (
	DefaultConsecutiveFailures = 5
	DefaultOpenTimeout         = 10 * time.Second
	DefaultHalfOpenRequests    = 1
)

// Options configure a Breaker. Zero values take the defaults.
type Options struct {
	// Name identifies the breaker in errors.
	Name string
	// ConsecutiveFailures opens the breaker.
	ConsecutiveFailures uint32
	// OpenTimeout is how long the breaker stays open before probing.
	OpenTimeout time.Duration
	// HalfOpenRequests is how many probes may run while half-open; that
	// many consecutive successes close the breaker.
	HalfOpenRequests uint32
	// CallTimeout, when positive, bounds every Store call (not Lock, which
	// has its own acquire timeout).
	CallTimeout time.Duration
	// OnStateChange, when set, is called on every transition with the
	// states' names ("closed", "open", "half-open"), e.g. for metrics. It
	// runs under the breaker's lock: keep it short and do not call the
	// breaker from it.
	OnStateChange func(from, to string)
}

func (o *Options) validate() error {
	if o.CallTimeout < 0 {
		return fmt.Errorf("breaker: CallTimeout %v must not be negative", o.CallTimeout)
	}
	if o.OpenTimeout < 0 {
		return fmt.Errorf("breaker: OpenTimeout %v must not be negative", o.OpenTimeout)
	}
	return nil
}

// Breaker is one circuit breaker shared by the decorators it makes.
type Breaker struct {
	name        string
	cb          *gobreaker.CircuitBreaker[struct{}]
	callTimeout time.Duration
}

// New returns a closed breaker.
func New(o Options) (*Breaker, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	trip := uint32(cmp.Or(o.ConsecutiveFailures, DefaultConsecutiveFailures))
	st := gobreaker.Settings{
		Name:         o.Name,
		MaxRequests:  cmp.Or(o.HalfOpenRequests, DefaultHalfOpenRequests),
		Timeout:      cmp.Or(o.OpenTimeout, DefaultOpenTimeout),
		ReadyToTrip:  func(c gobreaker.Counts) bool { return c.ConsecutiveFailures >= trip },
		IsSuccessful: isSuccessful,
		IsExcluded:   func(err error) bool { return errors.Is(err, context.Canceled) },
	}
	if o.OnStateChange != nil {
		st.OnStateChange = func(_ string, from, to gobreaker.State) { o.OnStateChange(from.String(), to.String()) }
	}
	return &Breaker{name: o.Name, cb: gobreaker.NewCircuitBreaker[struct{}](st), callTimeout: o.CallTimeout}, nil
}

// isSuccessful reports whether err shows a working backend.
func isSuccessful(err error) bool { return persistence.Classify(err).BackendWorks() }

// State returns "closed", "open" or "half-open".
func (b *Breaker) State() string { return b.cb.State().String() }

// do runs f through the breaker, with the call timeout when timed.
func (b *Breaker) do(ctx context.Context, timed bool, f func(context.Context) error) error {
	_, err := b.cb.Execute(func() (struct{}, error) {
		if timed && b.callTimeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, b.callTimeout)
			defer cancel()
		}
		return struct{}{}, f(ctx)
	})
	if errors.Is(err, gobreaker.ErrOpenState) || errors.Is(err, gobreaker.ErrTooManyRequests) {
		return fmt.Errorf("breaker %s: %w: %w", b.name, persistence.ErrUnavailable, err)
	}
	return err
}

// Store returns next guarded by b.
func (b *Breaker) Store(next persistence.Store) persistence.Store { return &store{b: b, next: next} }

// Locker returns next guarded by b.
func (b *Breaker) Locker(next persistence.Locker) persistence.Locker {
	return &locker{b: b, next: next}
}

type store struct {
	b    *Breaker
	next persistence.Store
}

func (s *store) Load(ctx context.Context, key group.Key) (doc persistence.Document, rev persistence.Revision, err error) {
	err = s.b.do(ctx, true, func(ctx context.Context) error {
		var err error
		doc, rev, err = s.next.Load(ctx, key)
		return err
	})
	return doc, rev, err
}

func (s *store) Revision(ctx context.Context, key group.Key) (rev persistence.Revision, err error) {
	err = s.b.do(ctx, true, func(ctx context.Context) error {
		var err error
		rev, err = s.next.Revision(ctx, key)
		return err
	})
	return rev, err
}

func (s *store) Exists(ctx context.Context, key group.Key) (ok bool, err error) {
	err = s.b.do(ctx, true, func(ctx context.Context) error {
		var err error
		ok, err = s.next.Exists(ctx, key)
		return err
	})
	return ok, err
}

func (s *store) Create(ctx context.Context, key group.Key, doc persistence.Document) (rev persistence.Revision, err error) {
	err = s.b.do(ctx, true, func(ctx context.Context) error {
		var err error
		rev, err = s.next.Create(ctx, key, doc)
		return err
	})
	return rev, err
}

func (s *store) Commit(ctx context.Context, key group.Key, expected persistence.Revision, m persistence.Mutation) (rev persistence.Revision, err error) {
	err = s.b.do(ctx, true, func(ctx context.Context) error {
		var err error
		rev, err = s.next.Commit(ctx, key, expected, m)
		return err
	})
	return rev, err
}

func (s *store) Delete(ctx context.Context, key group.Key, expected persistence.Revision) error {
	return s.b.do(ctx, true, func(ctx context.Context) error { return s.next.Delete(ctx, key, expected) })
}

func (s *store) List(ctx context.Context) (keys []group.Key, err error) {
	err = s.b.do(ctx, true, func(ctx context.Context) error {
		var err error
		keys, err = s.next.List(ctx)
		return err
	})
	return keys, err
}

func (s *store) Count(ctx context.Context, streamPrefix string) (all, inPrefix int, err error) {
	err = s.b.do(ctx, true, func(ctx context.Context) error {
		var err error
		all, inPrefix, err = s.next.Count(ctx, streamPrefix)
		return err
	})
	return all, inPrefix, err
}

// Shared and Close bypass the breaker.
func (s *store) Shared() bool { return s.next.Shared() }
func (s *store) Close() error { return s.next.Close() }

type locker struct {
	b    *Breaker
	next persistence.Locker
}

// Lock takes the mutex through the breaker; unlock bypasses it.
func (l *locker) Lock(ctx context.Context, key group.Key) (unlock func(), err error) {
	err = l.b.do(ctx, false, func(ctx context.Context) error {
		var err error
		unlock, err = l.next.Lock(ctx, key)
		return err
	})
	return unlock, err
}
