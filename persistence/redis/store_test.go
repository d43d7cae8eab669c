package redis

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/storetest"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/testredis"
	"github.com/redis-stream-coordinator/coordinator/persistence"
)

// newStore returns a store on c under a key prefix of its own.
func newStore(t *testing.T, c goredis.UniversalClient) *Store {
	s, err := New(Options{Client: c, KeyPrefix: testredis.Prefix(t, c)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// corruptRevision overwrites the revision field with a non-number.
func corruptRevision(t *testing.T, s persistence.Store, key group.Key) {
	rs := s.(*Store)
	if err := rs.client.HSet(t.Context(), rs.metadataKey(key), fieldRevision, "seven").Err(); err != nil {
		t.Fatal(err)
	}
}

func TestContract(t *testing.T) {
	c := testredis.Shared(t)
	storetest.Run(t, func(t *testing.T) persistence.Store { return newStore(t, c) },
		storetest.Options{Corrupt: corruptRevision})
}

// Not parallel with the other Redis Cluster test: two 3-node clusters at
// once on a loaded 2-core machine let a registry lease of the cluster
// contract lapse (ManyAcquiresAtOnce: "coordinator not registered").
func TestContractCluster(t *testing.T) {
	c := testredis.StartCluster(t, 3).Client(t)
	storetest.Run(t, func(t *testing.T) persistence.Store { return newStore(t, c) },
		storetest.Options{Corrupt: corruptRevision})
}

func TestHashLayout(t *testing.T) {
	c := testredis.Shared(t)
	s := newStore(t, c)
	ctx := t.Context()
	key := group.Key{StreamPrefix: "orders", ConsumerGroup: "billing"}
	storetest.CreatePruned(t, s, key, time.Date(2024, 5, 6, 7, 8, 9, 123_000_000, time.UTC))
	mk := s.prefix + ":{orders:billing}:metadata"
	fields, err := c.HGetAll(ctx, mk).Result()
	if err != nil {
		t.Fatal(err)
	}
	for f, want := range map[string]string{"revision": "2", "schemaVersion": "1", "layoutVersion": "2", "updatedAt": "2024-05-06T07:08:09.123Z"} {
		if fields[f] != want {
			t.Errorf("field %s = %q, want %q", f, fields[f], want)
		}
	}
	if _, ok := fields["member:m-1"]; !ok {
		t.Error("no member:m-1 field")
	}
	if _, ok := fields["member:m-2"]; ok {
		t.Error("pruned member:m-2 still stored")
	}
	if len(fields) != 7 {
		t.Errorf("fields %v", fields)
	}
	if ok, err := c.SIsMember(ctx, s.prefix+":groups", mk).Result(); err != nil || !ok {
		t.Errorf("index lacks %s: %v", mk, err)
	}
}

// TestKotlinHash reads a hash as the Kotlin server wrote it: layout 1, no
// member fields, microsecond updatedAt.
func TestKotlinHash(t *testing.T) {
	c := testredis.Shared(t)
	s := newStore(t, c)
	ctx := t.Context()
	key := group.Key{StreamPrefix: "orders", ConsumerGroup: "legacy"}
	agg := `{"streamPrefix":"orders","consumerGroup":"legacy","schemaVersion":1,"storeRevision":7,"shardCount":2,` +
		`"members":{"m":{"memberId":"m","state":"ACTIVE"}},"targetAssignments":{"m":[{"shardIndex":0}]}}`
	err := c.HSet(ctx, s.metadataKey(key), "aggregate", agg, "revision", "7", "schemaVersion", "1",
		"layoutVersion", "1", "updatedAt", "2024-01-02T03:04:05.123456Z").Err()
	if err != nil {
		t.Fatal(err)
	}
	doc, rev, err := s.Load(ctx, key)
	if err != nil || rev != 7 || doc.LayoutVersion != 1 || doc.UpdatedAt.Nanosecond() != 123_456_000 {
		t.Fatalf("load: rev %d, layout %d, updatedAt %v, %v", rev, doc.LayoutVersion, doc.UpdatedAt, err)
	}
	g, err := persistence.Decode(doc, rev)
	if err != nil || g.Members["m"] == nil || !g.Targets["m"].Equal(contract.NewShardSet(0)) {
		t.Fatalf("decode: %+v, %v", g, err)
	}
	if rev, err := s.Commit(ctx, key, 7, persistence.Rewrite(g, time.Now())); err != nil || rev != 8 {
		t.Fatalf("rewrite: %d, %v", rev, err)
	}
	if doc, _, err = s.Load(ctx, key); err != nil || doc.LayoutVersion != 2 || len(doc.Members) != 1 {
		t.Fatalf("after rewrite: layout %d, members %d, %v", doc.LayoutVersion, len(doc.Members), err)
	}
}

func TestCorruptHash(t *testing.T) {
	c := testredis.Shared(t)
	s := newStore(t, c)
	ctx := t.Context()
	tests := map[string][]string{
		"no revision":  {"aggregate", "{}", "schemaVersion", "1", "layoutVersion", "2"},
		"no aggregate": {"revision", "3", "schemaVersion", "1", "layoutVersion", "2"},
		"schema 9":     {"aggregate", "{}", "revision", "3", "schemaVersion", "9", "layoutVersion", "2"},
		"bad layout":   {"aggregate", "{}", "revision", "3", "schemaVersion", "1", "layoutVersion", "two"},
		"bad time":     {"aggregate", "{}", "revision", "3", "updatedAt", "noon"},
	}
	for name, fields := range tests {
		t.Run(name, func(t *testing.T) {
			key := storetest.Key(t)
			if err := c.HSet(ctx, s.metadataKey(key), fields).Err(); err != nil {
				t.Fatal(err)
			}
			if _, _, err := s.Load(ctx, key); !errors.Is(err, persistence.ErrCorrupt) {
				t.Errorf("load: %v, want ErrCorrupt", err)
			}
			if name == "bad time" {
				return // the Lua guard does not parse timestamps
			}
			m := persistence.Mutation{Aggregate: []byte(`{"storeRevision":0}`)}
			if _, err := s.Commit(ctx, key, 3, m); !errors.Is(err, persistence.ErrCorrupt) {
				t.Errorf("commit: %v, want ErrCorrupt", err)
			}
			after, err := c.HGetAll(ctx, s.metadataKey(key)).Result()
			if err != nil || len(after) != len(fields)/2 {
				t.Errorf("refused commit changed the hash: %v, %v", after, err)
			}
		})
	}
	key := storetest.Key(t)
	if err := c.HSet(ctx, s.metadataKey(key), "aggregate", "{}").Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Revision(ctx, key); !errors.Is(err, persistence.ErrCorrupt) {
		t.Errorf("revision of a hash without one: %v", err)
	}
	if err := s.Delete(ctx, key, 1); !errors.Is(err, persistence.ErrCorrupt) {
		t.Errorf("delete of a hash without revision: %v", err)
	}
}

func TestListSkipsStaleIndexEntries(t *testing.T) {
	c := testredis.Shared(t)
	s := newStore(t, c)
	ctx := t.Context()
	live := group.Key{StreamPrefix: "a:b", ConsumerGroup: "c"}
	gone := group.Key{StreamPrefix: "x", ConsumerGroup: "y"}
	if _, err := s.Create(ctx, live, persistence.Encode(storetest.Group(live))); err != nil {
		t.Fatal(err)
	}
	if err := c.SAdd(ctx, s.indexKey(), s.metadataKey(gone), "unrelated").Err(); err != nil {
		t.Fatal(err)
	}
	keys, err := s.List(ctx)
	if err != nil || len(keys) != 1 || keys[0] != live {
		t.Errorf("list = %v, %v; want [%v]", keys, err, live)
	}
}

// commandCounter counts the commands of each name a client sent since
// the last reset, alone and in pipelines.
type commandCounter struct {
	mu           sync.Mutex
	alone, piped map[string]int
}

// countedClient returns a client of its own on the shared Redis (closed at
// cleanup) and the counter of the commands it sends.
func countedClient(t *testing.T) (*goredis.Client, *commandCounter) {
	c := goredis.NewClient(&goredis.Options{Addr: testredis.Shared(t).Options().Addr})
	t.Cleanup(func() { _ = c.Close() })
	counter := &commandCounter{alone: map[string]int{}, piped: map[string]int{}}
	c.AddHook(counter)
	return c, counter
}

// reset forgets the commands counted so far.
func (c *commandCounter) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.alone)
	clear(c.piped)
}

// sent returns the commands counted, by name: those sent alone and those
// sent in pipelines.
func (c *commandCounter) sent() (alone, piped map[string]int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.alone), maps.Clone(c.piped)
}

// total returns the commands counted by name, alone or in pipelines.
func (c *commandCounter) total() map[string]int {
	alone, piped := c.sent()
	for name, n := range piped {
		alone[name] += n
	}
	return alone
}

func (c *commandCounter) DialHook(next goredis.DialHook) goredis.DialHook { return next }
func (c *commandCounter) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		c.mu.Lock()
		c.alone[cmd.Name()]++
		c.mu.Unlock()
		return next(ctx, cmd)
	}
}
func (c *commandCounter) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []goredis.Cmder) error {
		c.mu.Lock()
		for _, cmd := range cmds {
			c.piped[cmd.Name()]++
		}
		c.mu.Unlock()
		return next(ctx, cmds)
	}
}

// List reads the index again only when a group was created or deleted
// since its last listing, through any store on the key prefix: otherwise
// it sends one GET.
func TestListRereadsOnlyChangedIndex(t *testing.T) {
	c, counter := countedClient(t)
	a := newStore(t, c)
	b, err := New(Options{Client: c, KeyPrefix: a.prefix})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	ctx := t.Context()
	list := func(want ...group.Key) map[string]int {
		t.Helper()
		counter.reset()
		keys, err := a.List(ctx)
		if err != nil || !slices.Equal(keys, want) {
			t.Fatalf("list = %v, %v; want %v", keys, err, want)
		}
		return counter.total()
	}
	one := group.Key{StreamPrefix: "p1", ConsumerGroup: "g"}
	two := group.Key{StreamPrefix: "p2", ConsumerGroup: "g"}
	list()
	if _, err := a.Create(ctx, one, persistence.Encode(storetest.Group(one))); err != nil {
		t.Fatal(err)
	}
	if n := list(one); n["smembers"] != 1 {
		t.Errorf("list after a create sent %v; want the index read", n)
	}
	if n := list(one); !maps.Equal(n, map[string]int{"get": 1}) {
		t.Errorf("list without a change sent %v; want one get", n)
	}
	if _, err := b.Create(ctx, two, persistence.Encode(storetest.Group(two))); err != nil {
		t.Fatal(err)
	}
	if n := list(one, two); n["smembers"] != 1 {
		t.Errorf("list after another store's create sent %v; want the index read", n)
	}
	if err := b.Delete(ctx, one, 1); err != nil {
		t.Fatal(err)
	}
	list(two)
	if n := list(two); !maps.Equal(n, map[string]int{"get": 1}) {
		t.Errorf("list without a change sent %v; want one get", n)
	}
}

// List takes a group's key from its key name when neither name holds a
// ':', without reading its aggregate; a name with ':' (as stored before
// names were validated) is read back from the aggregate.
func TestListReadsAggregatesOfAmbiguousNamesOnly(t *testing.T) {
	c, counter := countedClient(t)
	s := newStore(t, c)
	ctx := t.Context()
	plain := group.Key{StreamPrefix: "orders", ConsumerGroup: "billing"}
	legacy := group.Key{StreamPrefix: "ka", ConsumerGroup: "kb:kc"}
	for _, k := range []group.Key{plain, legacy} {
		if _, err := s.Create(ctx, k, persistence.Encode(storetest.Group(k))); err != nil {
			t.Fatal(err)
		}
	}
	counter.reset()
	keys, err := s.List(ctx)
	if err != nil || !slices.Equal(keys, []group.Key{legacy, plain}) {
		t.Fatalf("list = %v, %v; want [%v %v]", keys, err, legacy, plain)
	}
	if n := counter.total(); n["exists"] != 2 || n["hget"] != 1 {
		t.Errorf("list sent %v; want 2 exists and 1 hget (the legacy name's aggregate)", n)
	}
}

// TestCommitRetryIsIdempotent runs the commit script twice with one
// commit id, as go-redis does when a reply is lost.
func TestCommitRetryIsIdempotent(t *testing.T) {
	c := testredis.Shared(t)
	s := newStore(t, c)
	ctx := t.Context()
	key := storetest.Key(t)
	if _, err := s.Create(ctx, key, persistence.Encode(storetest.Group(key))); err != nil {
		t.Fatal(err)
	}
	keys, fence := s.writeKeys(key)
	args := []any{fence, "commit-1", 1, "2024-01-01T00:00:00.000Z", "0", "", 1, "member:m", `{"memberId":"m"}`}
	for range 2 {
		if rev, err := commitScript.Run(ctx, c, keys, args...).Int64(); err != nil || rev != 2 {
			t.Fatalf("commit: %d, %v", rev, err)
		}
	}
	args[1] = "commit-2"
	if res, err := commitScript.Run(ctx, c, keys, args...).Int64(); err != nil || res != resConflict {
		t.Fatalf("other commit at the old revision: %d, %v", res, err)
	}
}

func TestUnavailable(t *testing.T) {
	t.Parallel() // a throwaway Redis of its own
	srv := testredis.Start(t)
	c := goredis.NewClient(&goredis.Options{Addr: srv.Addr, MaxRetries: -1})
	t.Cleanup(func() { _ = c.Close() })
	s := newStore(t, c)
	ctx := t.Context()
	key := storetest.Key(t)
	if _, err := s.Create(ctx, key, persistence.Encode(storetest.Group(key))); err != nil {
		t.Fatal(err)
	}
	srv.Kill()
	if _, _, err := s.Load(ctx, key); !errors.Is(err, persistence.ErrUnavailable) {
		t.Errorf("load: %v", err)
	}
	if _, err := s.Commit(ctx, key, 1, persistence.Mutation{}); !errors.Is(err, persistence.ErrUnavailable) {
		t.Errorf("commit: %v", err)
	}
	if _, err := s.List(ctx); !errors.Is(err, persistence.ErrUnavailable) {
		t.Errorf("list: %v", err)
	}
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.Revision(canceled, key); !errors.Is(err, context.Canceled) {
		t.Errorf("revision with canceled context: %v", err)
	}
}

func TestClusterContract(t *testing.T) {
	storetest.RunCluster(t, handlesOn(testredis.Shared(t)), storetest.ClusterOptions{Released: released})
}

func TestClusterContractOnRedisCluster(t *testing.T) {
	storetest.RunCluster(t, handlesOn(testredis.StartCluster(t, 3).Client(t)), storetest.ClusterOptions{Released: released})
}

// released writes an ownership record of key that names no coordinator.
func released(t *testing.T, s storetest.ClusterStore, key group.Key) {
	rs := s.(*Store)
	if err := rs.client.HSet(t.Context(), rs.ownerKey(key), "coordinator", "", "token", "", "epoch", 1).Err(); err != nil {
		t.Fatal(err)
	}
}

// handlesOn returns two stores on c under one key prefix of their own, as
// two coordinator processes have.
func handlesOn(c goredis.UniversalClient) func(t *testing.T) (a, b storetest.ClusterStore) {
	return func(t *testing.T) (a, b storetest.ClusterStore) {
		s := newStore(t, c)
		other, err := New(Options{Client: c, KeyPrefix: s.prefix})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = other.Close() })
		return s, other
	}
}

// TestCountFillsPrefixIndexes: groups indexed only in <kp>:groups (as by
// versions that kept no prefix index) count under their prefix from a
// store's first Count on.
func TestCountFillsPrefixIndexes(t *testing.T) {
	c := testredis.Shared(t)
	s := newStore(t, c)
	ctx := t.Context()
	keys := []group.Key{storetest.Key(t), storetest.Key(t)}
	keys = append(keys, group.Key{StreamPrefix: keys[0].StreamPrefix, ConsumerGroup: "cg-other"})
	for _, k := range keys {
		if _, err := s.Create(ctx, k, persistence.Encode(storetest.Group(k))); err != nil {
			t.Fatal(err)
		}
		if err := c.Del(ctx, s.prefixIndexKey(k.StreamPrefix)).Err(); err != nil {
			t.Fatal(err)
		}
	}
	all, inPrefix, err := s.Count(ctx, keys[0].StreamPrefix)
	if err != nil || all != 3 || inPrefix != 2 {
		t.Errorf("Count = %d, %d, %v; want 3, 2", all, inPrefix, err)
	}
}
