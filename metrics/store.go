package metrics

import (
	"context"
	"time"

	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/persistence"
)

// Store returns next instrumented: the latency and result (ResultOf) of
// every write — Create, Commit and Delete — is observed in
// store_commit_duration_seconds{store=name, operation, result}. Reads pass
// through untouched. Wrap it outside the circuit breaker, so that calls the
// breaker refuses count as unavailable writes.
func (m *Metrics) Store(name string, next persistence.Store) persistence.Store {
	return &store{Store: next, m: m, name: name}
}

type store struct {
	persistence.Store
	m    *Metrics
	name string
}

func (s *store) observe(op string, start time.Time, err error) {
	s.m.storeDuration.WithLabelValues(s.name, op, ResultOf(err)).Observe(time.Since(start).Seconds())
}

func (s *store) Create(ctx context.Context, key group.Key, doc persistence.Document) (persistence.Revision, error) {
	start := time.Now()
	rev, err := s.Store.Create(ctx, key, doc)
	s.observe("create", start, err)
	return rev, err
}

func (s *store) Commit(ctx context.Context, key group.Key, expected persistence.Revision, mu persistence.Mutation) (persistence.Revision, error) {
	start := time.Now()
	rev, err := s.Store.Commit(ctx, key, expected, mu)
	s.observe("commit", start, err)
	return rev, err
}

func (s *store) Delete(ctx context.Context, key group.Key, expected persistence.Revision) error {
	start := time.Now()
	err := s.Store.Delete(ctx, key, expected)
	s.observe("delete", start, err)
	return err
}

// Locker returns next instrumented: every acquisition is observed in
// mutex_acquire_duration_seconds{result} (ResultOf: success, lock_timeout,
// unavailable, …) and each timeout (persistence.Busy) also counts in
// mutex_timeout_total.
func (m *Metrics) Locker(next persistence.Locker) persistence.Locker {
	return &locker{next: next, m: m}
}

type locker struct {
	next persistence.Locker
	m    *Metrics
}

func (l *locker) Lock(ctx context.Context, key group.Key) (func(), error) {
	start := time.Now()
	unlock, err := l.next.Lock(ctx, key)
	l.m.mutexAcquire.WithLabelValues(ResultOf(err)).Observe(time.Since(start).Seconds())
	if persistence.Classify(err) == persistence.Busy {
		l.m.mutexTimeouts.Inc()
	}
	return unlock, err
}
