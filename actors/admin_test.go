package actors

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/faultstore"
	"github.com/redis-stream-coordinator/coordinator/persistence"
)

// commits is a recorder that also keeps the records of every commit the
// observer saw.
type commits struct {
	*recorder
	mu   sync.Mutex
	last []group.Record
	gone bool // the last commit left no group
}

func (o *commits) GroupCommitted(_ group.Key, g *group.Group, recs []group.Record) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.last, o.gone = recs, !g.Exists()
}

// A delete is a command to the core like any other admin write: a
// revision conflict is retried by the core on a reload, and the stored
// delete record reaches committed and the runtime (Observer) instead of
// being replaced by an empty group.
func TestDeleteGoesThroughTheCore(t *testing.T) {
	store := newTestStore()
	conflicted := false
	store.Before(func(_ context.Context, op faultstore.Op) error {
		if op.Call == faultstore.CallDelete && !conflicted {
			conflicted = true
			return persistence.ErrConflict
		}
		return nil
	})
	obs := &commits{recorder: newRecorder()}
	c := start(t, Options{Store: store, GroupCommit: true, Observer: obs})
	createGroup(t, c, orders)

	if _, err := c.DeleteGroup(testCtx(t), orders, contract.DeleteRequest{RequestedBy: "test", Reason: "test"}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if got := obs.conflictList(); !slices.Equal(got, []string{"delete-group#1"}) {
		t.Errorf("conflicts %v, want [delete-group#1]", got)
	}
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if !obs.gone || len(obs.last) == 0 {
		t.Fatalf("last commit: %d records, group gone %v; want the delete", len(obs.last), obs.gone)
	}
	if _, ok := obs.last[len(obs.last)-1].(group.DeletedRecord); !ok {
		t.Errorf("last commit's records %+v, want them to end with the delete", obs.last)
	}
	if keys, err := store.List(testCtx(t)); err != nil || len(keys) != 0 {
		t.Errorf("store lists %v, %v", keys, err)
	}
}
