package storetest

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/persistence"
)

// AcquireAtOnce acquires keys as self, each from a goroutine of its own
// (as a coordinator taking over the groups placed on it does), and
// returns each call's ownership and error.
func AcquireAtOnce(t testing.TB, s persistence.Cluster, keys []group.Key, self persistence.Peer) ([]persistence.Owner, []error) {
	t.Helper()
	owners, errs := make([]persistence.Owner, len(keys)), make([]error, len(keys))
	var wg sync.WaitGroup
	for i, k := range keys {
		wg.Go(func() { owners[i], errs[i] = s.Acquire(t.Context(), k, self) })
	}
	wg.Wait()
	return owners, errs
}

// testAcquireMany: acquires of many keys at once are each what a lone
// acquire is, whatever the other keys are: a free key is taken at epoch
// 1, a released one and one whose holder's lease ended at the next epoch,
// self's own keeps its epoch, a live other's is refused naming it, a key
// acquired twice at once gets one ownership, and an unregistered caller
// is refused every key. The caller writes the groups it took over.
func testAcquireMany(t *testing.T, a, b ClusterStore) {
	ctx := t.Context()
	ca, cb, cx := coordinator(t, "a"), coordinator(t, "b"), coordinator(t, "x")
	must(t, a.Register(ctx, ca, time.Minute))
	must(t, b.Register(ctx, cb, time.Minute))
	must(t, b.Register(ctx, cx, time.Second)) // ends after the setup
	t.Cleanup(func() { _ = a.Deregister(ctx, ca); _ = b.Deregister(ctx, cb) })
	const kinds = 5 // free, self's, live other's, released, ended holder's
	keys := make([]group.Key, 60*kinds)
	for i := range keys {
		keys[i] = Key(t)
	}
	for i := 4; i < len(keys); i += kinds { // first: cx's lease is short
		_, err := b.Acquire(ctx, keys[i], cx)
		must(t, err)
	}
	for i, k := range keys {
		var err error
		switch i % kinds {
		case 1:
			_, err = a.Acquire(ctx, k, ca)
		case 2:
			_, err = b.Acquire(ctx, k, cb)
		case 3:
			if _, err = b.Acquire(ctx, k, cb); err == nil {
				if _, err = b.Create(ctx, k, persistence.Encode(Group(k, "m-1"))); err == nil {
					err = b.Release(ctx, k, cb)
				}
			}
		}
		must(t, err)
	}
	waitUnlisted(t, a, cx)

	twice := append(keys, keys[:2*kinds]...)
	owners, errs := AcquireAtOnce(t, a, twice, ca)
	for i, k := range twice {
		o, err := owners[i], errs[i]
		want := int64(1)
		if i%kinds >= 3 {
			want = 2
		}
		if i%kinds == 2 {
			if owned, ok := errors.AsType[*persistence.OwnedError](err); !ok || owned.Owner.ID != cb.ID || owned.Owner.URL != cb.URL {
				t.Errorf("%s (a live other's): %+v, %v; want OwnedError naming b and its URL", k, o, err)
			}
			continue
		}
		if err != nil || o.Coordinator != ca.ID || o.Token != ca.Token || o.Epoch != want {
			t.Errorf("%s (kind %d): %+v, %v; want a's at epoch %d", k, i%kinds, o, err, want)
		}
	}
	recs, err := a.Owners(ctx, keys)
	must(t, err)
	for i, r := range recs {
		if i%kinds != 2 && (r.Coordinator != ca.ID || r.Epoch != owners[i].Epoch) {
			t.Errorf("%s's record after the acquires: %+v, want a's at epoch %d", keys[i], r, owners[i].Epoch)
		}
	}
	m := persistence.Mutation{Aggregate: persistence.Encode(Group(keys[3], "m-2")).Aggregate, UpdatedAt: time.Now()}
	if _, err := a.Commit(ctx, keys[3], 1, m); err != nil {
		t.Errorf("a's commit to a group it took over: %v", err)
	}

	_, errs = AcquireAtOnce(t, a, keys[:2*kinds], cx)
	for i, err := range errs {
		if !errors.Is(err, persistence.ErrNotRegistered) {
			t.Errorf("%s acquired by an ended lease: %v, want ErrNotRegistered", keys[i], err)
		}
	}
}

// BenchAcquireAtOnce acquires n fresh keys at once as self (registered on
// s) per iteration, and reports the time per key ("ns/key") and the store
// calls per key that calls returns a running count of ("calls/key").
func BenchAcquireAtOnce(b *testing.B, s persistence.Cluster, self persistence.Peer, n int, calls func() int64) {
	keys := make([]group.Key, n)
	var took time.Duration
	var sent int64
	for b.Loop() {
		for i := range keys {
			keys[i] = Key(b)
		}
		start, before := time.Now(), calls()
		_, errs := AcquireAtOnce(b, s, keys, self)
		took, sent = took+time.Since(start), sent+calls()-before
		if err := errors.Join(errs...); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(took.Nanoseconds())/float64(b.N*n), "ns/key")
	b.ReportMetric(float64(sent)/float64(b.N*n), "calls/key")
}
