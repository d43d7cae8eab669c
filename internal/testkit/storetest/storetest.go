package storetest

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/big"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/persistence"
)

// Options adapt the suite to what a store lets a test do.
type Options struct {
	// Corrupt, when set, damages the stored data of key in s behind the
	// store's back, so that Load or Decode of the result must fail with
	// ErrCorrupt. Stores without a raw write path leave it nil and the
	// corresponding subtest is skipped.
	Corrupt func(t *testing.T, s persistence.Store, key group.Key)
}

// committers is how many goroutines the concurrency subtest runs.
const committers = 32

// commitsPerCommitter is how many commits each of them gets acknowledged.
const commitsPerCommitter = 2

// Run runs the contract suite against stores made by newStore, which is
// called once per subtest and must return an empty store (or one whose
// other content the subtest's random keys cannot collide with).
func Run(t *testing.T, newStore func(t *testing.T) persistence.Store, opts Options) {
	tests := []struct {
		name string
		run  func(t *testing.T, s persistence.Store)
	}{
		{"CreateLoadRoundTrip", testRoundTrip},
		{"CreateTwice", testCreateTwice},
		{"Commit", testCommit},
		{"StaleCommitWritesNothing", testStaleCommit},
		{"MissingGroup", testMissing},
		{"MemberDeltas", testMemberDeltas},
		{"GuardedDelete", testDelete},
		{"ListSorted", testList},
		{"Count", testCount},
		{"CountConcurrent", testCountConcurrent},
		{"DistinctKeysNeverShareStorage", testDistinctKeys},
		{"SchemaGuard", testSchemaGuard},
		{"LegacyLayoutRewrite", testLegacyRewrite},
		{"ConcurrentCommitters", testConcurrent},
		{"CorruptFailsClosed", func(t *testing.T, s persistence.Store) {
			if opts.Corrupt == nil {
				t.Skip("store offers no raw write path")
			}
			testCorrupt(t, s, opts.Corrupt)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t)
			t.Cleanup(func() {
				if err := s.Close(); err != nil {
					t.Errorf("close: %v", err)
				}
			})
			tc.run(t, s)
		})
	}
}

// CreatePruned creates key's group of members m-1 and m-2 in s (revision
// 1), then commits m-2's removal at at (revision 2): the fixture of the
// stores' layout tests, which then read what the store wrote.
func CreatePruned(t testing.TB, s persistence.Store, key group.Key, at time.Time) {
	t.Helper()
	ctx := t.Context()
	g := Group(key, "m-1", "m-2")
	if _, err := s.Create(ctx, key, persistence.Encode(g)); err != nil {
		t.Fatal(err)
	}
	recs := []group.Record{group.MemberRemovedRecord{MemberID: "m-2"}, group.TargetRemovedRecord{MemberID: "m-2"}}
	for _, r := range recs {
		g.Apply(r)
	}
	if _, err := s.Commit(ctx, key, 1, persistence.MutationOf(g, recs, at)); err != nil {
		t.Fatal(err)
	}
}

// Key returns a group key no other test uses.
func Key(t testing.TB) group.Key {
	return group.Key{StreamPrefix: "st-" + random(t), ConsumerGroup: "cg-" + random(t)}
}

func random(t testing.TB) string {
	n, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	if err != nil {
		t.Fatal(err)
	}
	return n.Text(36)
}

// now is the commit time the suite writes (millisecond precision, as stored).
var now = time.UnixMilli(1_700_000_100_000).UTC()

// create stores g and checks it lands at revision 1.
func create(t *testing.T, s persistence.Store, g *group.Group) {
	t.Helper()
	rev, err := s.Create(t.Context(), g.Key(), persistence.Encode(g))
	if err != nil || rev != 1 {
		t.Fatalf("create: revision %d, %v", rev, err)
	}
}

// load loads and decodes key, checking the stored versions and that the
// aggregate's storeRevision equals the revision.
func load(t *testing.T, s persistence.Store, key group.Key) (persistence.Document, *group.Group, persistence.Revision) {
	t.Helper()
	doc, rev, err := s.Load(t.Context(), key)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	var agg struct{ StoreRevision persistence.Revision }
	if err := json.Unmarshal(doc.Aggregate, &agg); err != nil || agg.StoreRevision != rev {
		t.Errorf("aggregate storeRevision %d (%v), store revision %d", agg.StoreRevision, err, rev)
	}
	if doc.SchemaVersion != persistence.SchemaVersion {
		t.Errorf("schemaVersion %d", doc.SchemaVersion)
	}
	g, err := persistence.Decode(doc, rev)
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	return doc, g, rev
}

// commit applies recs to g and commits the resulting delta at expected.
func commit(t *testing.T, s persistence.Store, g *group.Group, expected persistence.Revision, recs ...group.Record) (persistence.Revision, error) {
	t.Helper()
	for _, r := range recs {
		g.Apply(r)
	}
	return s.Commit(t.Context(), g.Key(), expected, persistence.MutationOf(g, recs, now))
}

func testRoundTrip(t *testing.T, s persistence.Store) {
	g := Group(Key(t), "m-1", "m-2", "m-3")
	create(t, s, g)
	want := persistence.Encode(g)
	doc, got, rev := load(t, s, g.Key())
	if rev != 1 {
		t.Errorf("revision %d, want 1", rev)
	}
	if doc.LayoutVersion != persistence.LayoutVersion {
		t.Errorf("layoutVersion %d", doc.LayoutVersion)
	}
	if !doc.UpdatedAt.Equal(want.UpdatedAt) {
		t.Errorf("updatedAt %v, want %v", doc.UpdatedAt, want.UpdatedAt)
	}
	if !jsonEqual(doc.Aggregate, want.Aggregate) {
		t.Errorf("aggregate %s, want %s", doc.Aggregate, want.Aggregate)
	}
	if len(doc.Members) != len(want.Members) {
		t.Errorf("%d member documents, want %d", len(doc.Members), len(want.Members))
	}
	for id, b := range want.Members {
		if !jsonEqual(doc.Members[id], b) {
			t.Errorf("member %s: %s, want %s", id, doc.Members[id], b)
		}
	}
	Equal(t, g, got)
	if r, err := s.Revision(t.Context(), g.Key()); err != nil || r != 1 {
		t.Errorf("Revision: %d, %v", r, err)
	}
	exists(t, s, g.Key(), true)
}

// exists checks that Exists reports want for key.
func exists(t *testing.T, s persistence.Store, key group.Key, want bool) {
	t.Helper()
	if ok, err := s.Exists(t.Context(), key); err != nil || ok != want {
		t.Errorf("Exists(%v) = %v, %v; want %v", key, ok, err, want)
	}
}

func testCreateTwice(t *testing.T, s persistence.Store) {
	g := Group(Key(t), "m-1")
	create(t, s, g)
	other := Group(g.Key(), "m-2")
	if _, err := s.Create(t.Context(), g.Key(), persistence.Encode(other)); !errors.Is(err, persistence.ErrAlreadyExists) {
		t.Fatalf("second create: %v, want ErrAlreadyExists", err)
	}
	_, got, rev := load(t, s, g.Key())
	if rev != 1 {
		t.Errorf("revision %d after refused create", rev)
	}
	Equal(t, g, got)
}

func testCommit(t *testing.T, s persistence.Store) {
	g := Group(Key(t), "m-1", "m-2")
	create(t, s, g)
	meta := g.Meta
	meta.GroupEpoch++
	meta.UpdatedAt = contract.InstantOf(now)
	m := g.Members["m-1"]
	m.MemberEpoch = meta.GroupEpoch
	rev, err := commit(t, s, g, 1, group.MetaRecord{Meta: meta}, group.MemberRecord{Member: m})
	if err != nil || rev != 2 {
		t.Fatalf("commit: revision %d, %v", rev, err)
	}
	doc, got, rev := load(t, s, g.Key())
	if rev != 2 {
		t.Errorf("revision %d, want 2", rev)
	}
	if !doc.UpdatedAt.Equal(now) {
		t.Errorf("updatedAt %v, want %v", doc.UpdatedAt, now)
	}
	Equal(t, g, got)
	if rev, err := commit(t, s, g, 2, group.TargetRecord{MemberID: "m-2", Shards: contract.NewShardSet(5)}); err != nil || rev != 3 {
		t.Fatalf("second commit: revision %d, %v", rev, err)
	}
	_, got, _ = load(t, s, g.Key())
	Equal(t, g, got)
}

func testStaleCommit(t *testing.T, s persistence.Store) {
	g := Group(Key(t), "m-1")
	create(t, s, g)
	before, _, _ := s.Load(t.Context(), g.Key())
	changed := g.Clone()
	meta := changed.Meta
	meta.GroupEpoch = 99
	for _, expected := range []persistence.Revision{0, 2, 7} {
		_, err := commit(t, s, changed, expected, group.MetaRecord{Meta: meta}, group.MemberRecord{Member: Member("m-9", 1)})
		if !errors.Is(err, persistence.ErrConflict) {
			t.Fatalf("commit at %d: %v, want ErrConflict", expected, err)
		}
	}
	after, got, rev := load(t, s, g.Key())
	if rev != 1 || !jsonEqual(before.Aggregate, after.Aggregate) || len(after.Members) != len(before.Members) {
		t.Errorf("refused commit wrote: revision %d, aggregate %s, %d members", rev, after.Aggregate, len(after.Members))
	}
	Equal(t, g, got)
}

func testMissing(t *testing.T, s persistence.Store) {
	ctx, key := t.Context(), Key(t)
	if _, _, err := s.Load(ctx, key); !errors.Is(err, persistence.ErrNotFound) {
		t.Errorf("Load: %v", err)
	}
	if _, err := s.Revision(ctx, key); !errors.Is(err, persistence.ErrNotFound) {
		t.Errorf("Revision: %v", err)
	}
	exists(t, s, key, false)
	if _, err := s.Commit(ctx, key, 1, persistence.Mutation{Aggregate: []byte(`{}`), UpdatedAt: now}); !errors.Is(err, persistence.ErrNotFound) {
		t.Errorf("Commit: %v", err)
	}
	if err := s.Delete(ctx, key, 1); !errors.Is(err, persistence.ErrNotFound) {
		t.Errorf("Delete: %v", err)
	}
	if _, _, err := s.Load(ctx, key); !errors.Is(err, persistence.ErrNotFound) {
		t.Errorf("Load after refused writes: %v", err)
	}
}

func testMemberDeltas(t *testing.T, s persistence.Store) {
	g := Group(Key(t), "m-1", "m-2", "m-3")
	create(t, s, g)
	before, _, _ := s.Load(t.Context(), g.Key())
	recs := []group.Record{
		group.MemberRecord{Member: Member("m-4", 3)},
		group.TargetRecord{MemberID: "m-4", Shards: contract.NewShardSet(6, 7)},
		group.MemberRemovedRecord{MemberID: "m-2"},
		group.TargetRemovedRecord{MemberID: "m-2"},
		group.TargetRemovedRecord{MemberID: "m-1"},
	}
	m := persistence.MutationOf(applied(g, recs), recs, now)
	if m.Aggregate != nil || len(m.PutMembers) != 2 || !slices.Equal(m.DeleteMembers, []string{"m-2"}) {
		t.Fatalf("delta: aggregate %s, puts %d, deletes %v", m.Aggregate, len(m.PutMembers), m.DeleteMembers)
	}
	if rev, err := s.Commit(t.Context(), g.Key(), 1, m); err != nil || rev != 2 {
		t.Fatalf("commit: %d, %v", rev, err)
	}
	doc, got, _ := load(t, s, g.Key())
	Equal(t, g, got)
	if len(doc.Members) != 3 || doc.Members["m-2"] != nil {
		t.Errorf("member documents %v", slices.Sorted(maps.Keys(doc.Members)))
	}
	if !jsonEqual(persistence.WithStoreRevision(before.Aggregate, 2), doc.Aggregate) {
		t.Errorf("member-only delta changed the aggregate: %s", doc.Aggregate)
	}
}

// applied applies recs to g and returns it.
func applied(g *group.Group, recs []group.Record) *group.Group {
	for _, r := range recs {
		g.Apply(r)
	}
	return g
}

func testDelete(t *testing.T, s persistence.Store) {
	ctx := t.Context()
	g := Group(Key(t), "m-1", "m-2")
	create(t, s, g)
	if _, err := commit(t, s, g, 1, group.MemberRecord{Member: Member("m-3", 4)}); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, g.Key(), 1); !errors.Is(err, persistence.ErrConflict) {
		t.Fatalf("stale delete: %v, want ErrConflict", err)
	}
	if _, _, rev := load(t, s, g.Key()); rev != 2 {
		t.Fatalf("revision %d after refused delete", rev)
	}
	if err := s.Delete(ctx, g.Key(), 2); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if _, _, err := s.Load(ctx, g.Key()); !errors.Is(err, persistence.ErrNotFound) {
		t.Errorf("load after delete: %v", err)
	}
	exists(t, s, g.Key(), false)
	if keys, err := s.List(ctx); err != nil || slices.Contains(keys, g.Key()) {
		t.Errorf("list after delete: %v, %v", keys, err)
	}
	fresh := Group(g.Key())
	create(t, s, fresh)
	doc, got, _ := load(t, s, g.Key())
	if len(doc.Members) != 0 {
		t.Errorf("re-created group inherited member documents %v", slices.Sorted(maps.Keys(doc.Members)))
	}
	Equal(t, fresh, got)
}

func testList(t *testing.T, s persistence.Store) {
	p, c := "st-"+random(t), "cg-"+random(t)
	want := []group.Key{
		{StreamPrefix: p + "-a", ConsumerGroup: c + "-a"},
		{StreamPrefix: p + "-a", ConsumerGroup: c + "-b"},
		{StreamPrefix: p + "-a:x", ConsumerGroup: c},
		{StreamPrefix: p + "-b", ConsumerGroup: c + "-a"},
	}
	for _, i := range []int{2, 0, 3, 1} {
		create(t, s, Group(want[i], "m-1"))
	}
	got, err := s.List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("list %v, want %v", got, want)
	}
}

func testSchemaGuard(t *testing.T, s persistence.Store) {
	for _, v := range []struct{ schema, layout int }{{2, persistence.LayoutVersion}, {0, persistence.LayoutVersion}, {persistence.SchemaVersion, 3}} {
		g := Group(Key(t), "m-1")
		doc := persistence.Encode(g)
		doc.SchemaVersion, doc.LayoutVersion = v.schema, v.layout
		if _, err := s.Create(t.Context(), g.Key(), doc); err != nil {
			t.Fatalf("create: %v", err)
		}
		if _, _, err := s.Load(t.Context(), g.Key()); !errors.Is(err, persistence.ErrCorrupt) {
			t.Errorf("load of schema %d layout %d: %v, want ErrCorrupt", v.schema, v.layout, err)
		}
		m := persistence.Rewrite(g, now)
		if _, err := s.Commit(t.Context(), g.Key(), 1, m); !errors.Is(err, persistence.ErrCorrupt) {
			t.Errorf("commit over schema %d layout %d: %v, want ErrCorrupt", v.schema, v.layout, err)
		}
		if rev, err := s.Revision(t.Context(), g.Key()); err != nil || rev != 1 {
			t.Errorf("revision after refused commit: %d, %v", rev, err)
		}
	}
}

// legacyAggregate is a layout-1 aggregate as the Kotlin server wrote it.
const legacyAggregate = `{"streamPrefix":%q,"consumerGroup":%q,"schemaVersion":1,"storeRevision":1,
 "groupEpoch":2,"metadataVersion":1,"assignmentEpoch":2,"state":"STABLE","shardCount":2,
 "members":{"m-1":{"memberId":"m-1","memberName":"legacy","state":"ACTIVE","memberEpoch":2,
   "metadataVersion":1,"runtimeMaxConcurrency":1,"activeConsumerWorkers":1,
   "currentAssignment":[{"shardIndex":0},{"shardIndex":1}],"grantedAssignment":[{"shardIndex":0},{"shardIndex":1}],
   "revoking":[],"lastHeartbeatAt":"2023-11-14T22:13:20.000Z","memberLeaseExpiresAt":"2023-11-14T22:13:30.000Z",
   "rebalanceTimeoutMs":60000,"rebalanceDeadlineAt":null,"shardProgress":[]}},
 "targetAssignments":{"m-1":[{"shardIndex":0},{"shardIndex":1}]},"migrations":{},
 "activeReshardingId":null,"metadataCorrection":null,
 "createdAt":"2023-11-14T22:13:20.000Z","updatedAt":"2023-11-14T22:13:20.000Z"}`

func testLegacyRewrite(t *testing.T, s persistence.Store) {
	key := Key(t)
	legacy := persistence.Document{
		Aggregate:     fmt.Appendf(nil, legacyAggregate, key.StreamPrefix, key.ConsumerGroup),
		SchemaVersion: persistence.SchemaVersion,
		LayoutVersion: persistence.LegacyLayoutVersion,
		UpdatedAt:     now,
	}
	if _, err := s.Create(t.Context(), key, legacy); err != nil {
		t.Fatal(err)
	}
	doc, g, rev := load(t, s, key)
	if doc.LayoutVersion != persistence.LegacyLayoutVersion || g.Members["m-1"] == nil || len(g.Targets["m-1"]) != 2 {
		t.Fatalf("legacy group: layout %d, members %v, targets %v", doc.LayoutVersion, g.Members, g.Targets)
	}
	if rev, err := s.Commit(t.Context(), key, rev, persistence.Rewrite(g, now)); err != nil || rev != 2 {
		t.Fatalf("rewrite: %d, %v", rev, err)
	}
	if _, err := commit(t, s, g, 2, group.MemberRemovedRecord{MemberID: "m-1"}, group.TargetRemovedRecord{MemberID: "m-1"}); err != nil {
		t.Fatal(err)
	}
	doc, got, _ := load(t, s, key)
	if doc.LayoutVersion != persistence.LayoutVersion {
		t.Errorf("layout %d after rewrite", doc.LayoutVersion)
	}
	Equal(t, g, got)
}

func testCorrupt(t *testing.T, s persistence.Store, corrupt func(*testing.T, persistence.Store, group.Key)) {
	g := Group(Key(t), "m-1")
	create(t, s, g)
	corrupt(t, s, g.Key())
	doc, rev, err := s.Load(t.Context(), g.Key())
	if err == nil {
		_, err = persistence.Decode(doc, rev)
	}
	if !errors.Is(err, persistence.ErrCorrupt) {
		t.Fatalf("reading corrupt data: %v, want ErrCorrupt", err)
	}
	exists(t, s, g.Key(), true)
}

// testConcurrent runs committers goroutines that each get
// commitsPerCommitter load→modify→commit cycles acknowledged, retrying on
// conflict. Every acknowledged commit adds one member and one group epoch.
func testConcurrent(t *testing.T, s persistence.Store) {
	g := Group(Key(t), "m-0")
	create(t, s, g)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		acked []string
	)
	for i := range committers {
		wg.Go(func() {
			for j := range commitsPerCommitter {
				id := fmt.Sprintf("c-%02d-%d", i, j)
				if err := commitUntilAcked(t.Context(), s, g.Key(), id); err != nil {
					t.Errorf("%s: %v", id, err)
					return
				}
				mu.Lock()
				acked = append(acked, id)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	_, got, rev := load(t, s, g.Key())
	if want := persistence.Revision(1 + len(acked)); rev != want {
		t.Errorf("revision %d after %d acknowledged commits, want %d", rev, len(acked), want)
	}
	if want := g.GroupEpoch + int64(len(acked)); got.GroupEpoch != want {
		t.Errorf("groupEpoch %d, want %d: an aggregate update was lost", got.GroupEpoch, want)
	}
	for _, id := range acked {
		if got.Members[id] == nil {
			t.Errorf("acknowledged member %s lost", id)
		}
	}
}

// commitUntilAcked adds member id and bumps the group epoch, reloading and
// retrying on every conflict.
func commitUntilAcked(ctx context.Context, s persistence.Store, key group.Key, id string) error {
	for {
		doc, rev, err := s.Load(ctx, key)
		if err != nil {
			return err
		}
		g, err := persistence.Decode(doc, rev)
		if err != nil {
			return err
		}
		meta := g.Meta
		meta.GroupEpoch++
		recs := []group.Record{group.MetaRecord{Meta: meta}, group.MemberRecord{Member: Member(id, meta.GroupEpoch)}}
		_, err = s.Commit(ctx, key, rev, persistence.MutationOf(applied(g, recs), recs, now))
		if !errors.Is(err, persistence.ErrConflict) {
			return err
		}
	}
}
