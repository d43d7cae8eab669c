package persistence_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/persistence"
)

func TestClassify(t *testing.T) {
	wrap := func(err error) error { return fmt.Errorf("commit group x: %w", err) }
	cases := []struct {
		err                            error
		want                           persistence.Outcome
		retryable, backendWorks, known bool
	}{
		{nil, persistence.Written, false, true, true},
		{group.Errorf(contract.CodeGroupNotFound, "Group not found"), persistence.Refused, false, true, true},
		{wrap(fmt.Errorf("provision: %w: %w", persistence.ErrOutsideStore, errors.New("READONLY"))), persistence.Refused, false, true, true},
		{wrap(persistence.ErrConflict), persistence.Stale, true, true, true},
		{wrap(persistence.ErrNotFound), persistence.Stale, true, true, true},
		{wrap(persistence.ErrAlreadyExists), persistence.Stale, true, true, true},
		{wrap(persistence.ErrLockTimeout), persistence.Busy, true, true, true},
		{wrap(persistence.ErrUnavailable), persistence.Unavailable, true, false, true},
		{wrap(persistence.ErrCorrupt), persistence.Corrupt, false, true, true},
		{wrap(context.Canceled), persistence.Canceled, true, false, false},
		{wrap(context.DeadlineExceeded), persistence.Unknown, true, false, false},
		{errors.New("connection reset by peer"), persistence.Unknown, true, false, false},
	}
	for _, c := range cases {
		got := persistence.Classify(c.err)
		if got != c.want || got.Retryable() != c.retryable || got.BackendWorks() != c.backendWorks || got.KnownWrite() != c.known {
			t.Errorf("Classify(%v) = %d (retryable %v, backend works %v, known %v), want %d (%v, %v, %v)",
				c.err, got, got.Retryable(), got.BackendWorks(), got.KnownWrite(), c.want, c.retryable, c.backendWorks, c.known)
		}
	}
}
