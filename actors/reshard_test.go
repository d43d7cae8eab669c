package actors

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/eventually"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/fakeclock"
)

// Resharding in the runtime, with a fake data plane: the order of store
// writes and Redis calls, stream-level orchestration, and drain
// confirmation on ticks. The Redis side is covered end to end in package
// httpapi.

// fakeDataPlane is a Provisioner and DrainChecker whose answers the test
// sets; it records what it was asked.
type fakeDataPlane struct {
	mu sync.Mutex
	// onProvision runs inside every Provision call; its error is returned.
	onProvision func(prefix, group string, shards []int) error
	existing    []string
	drained     bool
	drainErr    error
	provisioned []string // "prefix/group:count" per call
	drainChecks int
}

func (f *fakeDataPlane) Provision(_ context.Context, prefix, grp string, shards []int) error {
	f.mu.Lock()
	f.provisioned = append(f.provisioned, prefix+"/"+grp+":"+strconv.Itoa(len(shards)))
	hook := f.onProvision
	f.mu.Unlock()
	if hook != nil {
		return hook(prefix, grp, shards)
	}
	return nil
}

func (f *fakeDataPlane) ExistingKeys(context.Context, string, int) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.existing, nil
}

func (f *fakeDataPlane) Drained(context.Context, string, []int) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.drainChecks++
	return f.drained, f.drainErr
}

// set changes the fake's answers.
func (f *fakeDataPlane) set(change func(*fakeDataPlane)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	change(f)
}

func (f *fakeDataPlane) calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.provisioned)
}

var errRedis = errors.New("WRONGTYPE Operation against a key holding the wrong kind of value")

// startResharding starts a coordinator on store with f as its data plane
// and the drain check on.
func startResharding(t *testing.T, store *testStore, f *fakeDataPlane, clock *fakeclock.Clock) *System {
	s := group.DefaultSettings()
	s.DrainCheck = true
	return start(t, Options{Store: store, Settings: s, Clock: clock.Now, GroupCommit: true, Provisioner: f, Drains: f})
}

func scaleTo(n int) contract.ScaleRequest {
	return contract.ScaleRequest{TargetShardCount: &n, RequestedBy: "test"}
}

func TestScaleStoresPreparingBeforeProvisioning(t *testing.T) {
	store, f := newTestStore(), &fakeDataPlane{}
	c := startResharding(t, store, f, newFakeClock())
	createGroup(t, c, orders)
	f.set(func(f *fakeDataPlane) {
		f.onProvision = func(_, _ string, shards []int) error {
			g := store.stored(t, orders)
			if g.ActiveReshardingID == nil || g.ShardCount != 4 || len(shards) != 8 {
				t.Errorf("provisioning %d shards while the store holds %+v", len(shards), g.Meta)
			} else if m, _ := g.Migration(*g.ActiveReshardingID); m.State != group.MigrationPreparing {
				t.Errorf("provisioning while the migration is stored %s", m.State)
			}
			return nil
		}
	})
	m, err := c.ScaleGroup(testCtx(t), orders, scaleTo(8))
	if err != nil || m.State != group.MigrationActive || m.ToShardCount != 8 {
		t.Fatalf("scale: %+v, %v", m, err)
	}
	if g := store.stored(t, orders); g.ShardCount != 8 || g.View().ActiveMigration.State != contract.MigrationActive {
		t.Fatalf("stored after scale: %+v", g.Meta)
	}
	if got := f.calls(); !slices.Equal(got, []string{"orders/orders-consumer:4", "orders/orders-consumer:8"}) {
		t.Errorf("provisioned %v, want the create's 4 shards, then 8", got)
	}
}

func TestScaleStreamScalesEveryGroupAfterPrechecks(t *testing.T) {
	f := &fakeDataPlane{}
	c := startResharding(t, newTestStore(), f, newFakeClock())
	ctx := testCtx(t)
	keys := []group.Key{{StreamPrefix: "orders", ConsumerGroup: "c"}, {StreamPrefix: "orders", ConsumerGroup: "a"}, {StreamPrefix: "orders", ConsumerGroup: "b"}}
	for _, k := range keys {
		createGroup(t, c, k)
	}
	createGroup(t, c, billing)

	_, err := c.ScaleStream(ctx, "nothing", scaleTo(2))
	wantCode(t, err, contract.CodeStreamNotFound)
	_, err = c.ScaleStream(ctx, "orders", scaleTo(-1))
	wantCode(t, err, contract.CodeInvalidRequest)

	// b is already migrating elsewhere: the stream scale changes nothing.
	if _, err := c.ScaleGroup(ctx, keys[2], scaleTo(8)); err != nil {
		t.Fatal(err)
	}
	_, err = c.ScaleStream(ctx, "orders", scaleTo(6))
	wantCode(t, err, contract.CodeActiveMigrationExists)
	if v, _ := c.Group(ctx, keys[1]); v.ActiveMigration != nil || v.ShardCount != 4 {
		t.Fatalf("a changed by a refused stream scale: %+v", v)
	}
	if _, err := c.Rollback(ctx, keys[2], mustActive(t, c, keys[2]), contract.RollbackRequest{RequestedBy: "t", Reason: "r"}); err != nil {
		t.Fatal(err)
	}

	// A correction round open on c refuses it too.
	wantStatus(t, heartbeat(t, c, keys[0], join("m-1")), contract.StatusOK)
	hb := join("m-1")
	hb.RequestID, hb.MetadataVersion = "future", 99
	wantStatus(t, heartbeat(t, c, keys[0], hb), contract.StatusSyncMetadata)
	_, err = c.ScaleStream(ctx, "orders", scaleTo(6))
	wantCode(t, err, contract.CodeMetadataSyncInProgress)
	_, err = c.DeleteGroup(ctx, keys[0], contract.DeleteRequest{RequestedBy: "t", Reason: "r", Force: true})
	if err != nil {
		t.Fatal(err)
	}

	// b's scale to 6 fails in Redis and stays PREPARING; a stream scale to
	// the same target passes the pre-checks and resumes it.
	f.set(func(f *fakeDataPlane) {
		f.onProvision = func(_, grp string, _ []int) error {
			if grp == "b" {
				return errRedis
			}
			return nil
		}
	})
	_, err = c.ScaleGroup(ctx, keys[2], scaleTo(6))
	if !errors.Is(err, contract.ErrProvisioning) || !errors.Is(err, errRedis) {
		t.Fatalf("failed provisioning answered %v", err)
	}
	preparing := mustActive(t, c, keys[2])
	f.set(func(f *fakeDataPlane) { f.onProvision = nil })
	s, err := c.ScaleStream(ctx, "orders", scaleTo(6))
	if err != nil || s.StreamPrefix != "orders" || s.TargetShardCount != 6 || !slices.Equal(s.AffectedConsumerGroups, []string{"a", "b"}) {
		t.Fatalf("stream scale: %+v, %v", s, err)
	}
	for i, m := range s.Migrations {
		if m.State != group.MigrationActive || m.FromShardCount != 4 || m.ToShardCount != 6 {
			t.Errorf("migration of %s: %+v", s.AffectedConsumerGroups[i], m)
		}
	}
	if s.Migrations[1].ReshardingID != preparing {
		t.Errorf("b got a new migration %s, want the resumed %s", s.Migrations[1].ReshardingID, preparing)
	}
	if v, _ := c.Group(ctx, billing); v.ShardCount != 4 || v.ActiveMigration != nil {
		t.Errorf("another stream changed: %+v", v)
	}
}

// mustActive returns the id of key's active migration.
func mustActive(t *testing.T, c *System, key group.Key) string {
	t.Helper()
	list, err := c.Migrations(testCtx(t), key)
	if err != nil || list.ActiveReshardingID == nil {
		t.Fatalf("migrations of %s: %+v, %v", key, list, err)
	}
	if _, err := c.Migration(testCtx(t), key, *list.ActiveReshardingID); err != nil {
		t.Fatal(err)
	}
	return *list.ActiveReshardingID
}

func TestCreateProvisionsAfterInsert(t *testing.T) {
	store, f := newTestStore(), &fakeDataPlane{}
	c := startResharding(t, store, f, newFakeClock())
	ctx := testCtx(t)
	create := contract.CreateRequest{RequestedBy: "test"}

	f.set(func(f *fakeDataPlane) { f.existing = []string{"orders:1", "orders:3"} })
	_, err := c.CreateGroup(ctx, orders, create, false)
	if ge := wantCode(t, err, contract.CodeStreamPrefixAlreadyExists); ge.Message != "Stream prefix 'orders' already has Redis key(s): orders:1, orders:3" {
		t.Errorf("message %q", ge.Message)
	}
	_, err = c.CreateGroup(ctx, group.Key{StreamPrefix: "orders"}, create, true)
	wantCode(t, err, contract.CodeStreamPrefixAlreadyExists)
	if n := store.writeCalls(); n != 0 || len(f.calls()) != 0 {
		t.Fatalf("refused creates wrote %d times, provisioned %v", n, f.calls())
	}

	f.set(func(f *fakeDataPlane) {
		f.existing = nil
		f.onProvision = func(prefix, grp string, _ []int) error {
			if _, _, err := store.Load(context.Background(), group.Key{StreamPrefix: prefix, ConsumerGroup: grp}); err != nil {
				t.Errorf("provisioning %s/%s before it is stored: %v", prefix, grp, err)
			}
			return errRedis
		}
	})
	_, err = c.CreateGroup(ctx, orders, create, false)
	if !errors.Is(err, contract.ErrProvisioning) {
		t.Fatalf("create with failing provisioning: %v", err)
	}
	if _, err := c.Group(ctx, orders); err == nil {
		t.Fatal("a create whose provisioning failed left the group")
	}
	keys, err := store.List(ctx)
	if err != nil || len(keys) != 0 {
		t.Fatalf("store lists %v, %v", keys, err)
	}

	// The second group of a prefix does not check existing keys (the
	// first group's streams exist).
	f.set(func(f *fakeDataPlane) { f.onProvision = nil })
	createGroup(t, c, orders)
	f.set(func(f *fakeDataPlane) { f.existing = []string{"orders:0"} })
	createGroup(t, c, group.Key{StreamPrefix: "orders", ConsumerGroup: "audit"})
}

func TestRoutingProvisions(t *testing.T) {
	f := &fakeDataPlane{}
	c := startResharding(t, newTestStore(), f, newFakeClock())
	ctx := testCtx(t)
	createGroup(t, c, orders)
	f.set(func(f *fakeDataPlane) { f.onProvision = func(string, string, []int) error { return errRedis } })
	_, err := c.Routing(ctx, orders)
	if !errors.Is(err, contract.ErrProvisioning) {
		t.Fatalf("routing with failing provisioning: %v", err)
	}
	f.set(func(f *fakeDataPlane) { f.onProvision = nil })
	if _, err := c.ScaleGroup(ctx, orders, scaleTo(0)); err != nil {
		t.Fatal(err)
	}
	before := len(f.calls())
	r, err := c.Routing(ctx, orders)
	if err != nil || r.ShardCount != 0 || len(f.calls()) != before {
		t.Fatalf("routing of 0 shards: %+v, %v, provisioned %v", r, err, f.calls())
	}
}

func TestTickConfirmsDrain(t *testing.T) {
	f := &fakeDataPlane{}
	c := startResharding(t, newTestStore(), f, newFakeClock())
	ctx := testCtx(t)
	createGroup(t, c, orders)
	m, err := c.ScaleGroup(ctx, orders, scaleTo(2))
	if err != nil {
		t.Fatal(err)
	}
	state := func() group.MigrationState {
		got, err := c.Migration(ctx, orders, m.ReshardingID)
		if err != nil {
			t.Fatal(err)
		}
		return got.State
	}
	checks := func() (n int) {
		f.set(func(f *fakeDataPlane) { n = f.drainChecks })
		return n
	}
	// No member is live: the first tick moves to DRAINING and asks Redis.
	f.set(func(f *fakeDataPlane) { f.drainErr = errRedis })
	c.TickNow()
	eventually.True(t, "a failed drain check", func() bool { return checks() == 1 })
	eventually.True(t, "DRAINING", func() bool { return state() == group.MigrationDraining })
	f.set(func(f *fakeDataPlane) { f.drainErr = nil })
	c.TickNow()
	eventually.True(t, "a second drain check", func() bool { return checks() == 2 })
	if s := state(); s != group.MigrationDraining {
		t.Fatalf("undrained migration is %s", s)
	}
	f.set(func(f *fakeDataPlane) { f.drained = true })
	c.TickNow()
	eventually.True(t, "DEPRECATED", func() bool { return state() == group.MigrationDeprecated })
	if v, _ := c.Group(ctx, orders); v.ActiveMigration != nil || v.ShardCount != 2 {
		t.Fatalf("after the drain: %+v", v)
	}
	_, err = c.Migration(ctx, orders, "reshard-unknown")
	wantCode(t, err, contract.CodeMigrationNotFound)
}

func TestDrainCheckNeedsDrains(t *testing.T) {
	s := group.DefaultSettings()
	s.DrainCheck = true
	if _, err := New(Options{Store: newTestStore(), Settings: s}); err == nil {
		t.Fatal("New accepted DrainCheck without Drains")
	}
}
