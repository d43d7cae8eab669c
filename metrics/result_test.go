package metrics_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/metrics"
	"github.com/redis-stream-coordinator/coordinator/persistence"
)

// Every result label follows from the store outcome of the error.
func TestResultOfNamesTheOutcome(t *testing.T) {
	wrap := func(err error) error { return fmt.Errorf("commit group orders/billing: %w", err) }
	for err, want := range map[error]string{
		nil:                                "success",
		wrap(persistence.ErrConflict):      "conflict",
		wrap(contract.ErrStateConflict):    "conflict",
		wrap(persistence.ErrNotFound):      "not_found",
		wrap(persistence.ErrAlreadyExists): "already_exists",
		wrap(persistence.ErrLockTimeout):   "lock_timeout",
		wrap(persistence.ErrUnavailable):   "unavailable",
		wrap(persistence.ErrCorrupt):       "corrupt",
		wrap(context.Canceled):             "canceled",
		wrap(contract.ErrInternal):         "internal",
		group.Errorf(contract.CodeGroupNotFound, "Group not found"): "error",
		errors.New("connection reset"):                              "error",
	} {
		if got := metrics.ResultOf(err); got != want {
			t.Errorf("ResultOf(%v) = %q, want %q", err, got, want)
		}
	}
}
