package client

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-stream-coordinator/coordinator/internal/testkit/eventually"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/testredis"
)

// A consumer handles every entry once, first reclaiming the entries a dead
// previous owner left pending (with their delivery counts), and moves an
// entry that keeps failing to the dead-letter stream.
func TestConsumerReclaimsAndDeadLetters(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a coordinator process")
	}
	t.Parallel() // a throwaway Redis and a coordinator of its own
	coord, rdb := provisionedGroup(t, "jobs", "cons")
	ctx := context.Background()
	p, _ := NewProducer(ProducerConfig{Coordinator: coord, Redis: rdb, StreamPrefix: "jobs", Group: "g", NoMkStream: true})
	const n = 200
	for i := range n {
		values := map[string]any{"key": fmt.Sprintf("k%d", i%10), "seq": i}
		if i == 77 {
			values["fail"] = "yes"
		}
		if _, _, err := p.Send(ctx, fmt.Sprintf("k%d", i%10), values); err != nil {
			t.Fatal(err)
		}
	}
	// A previous owner read 5 entries of every shard and died.
	ghost := map[string]bool{}
	for s := range 4 {
		res, err := rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: "ghost", Streams: []string{"jobs:" + itoa(s), ">"}, Count: 5, Block: -1}).Result()
		if err != nil && !errors.Is(err, redis.Nil) {
			t.Fatal(err)
		}
		for _, st := range res {
			for _, m := range st.Messages {
				ghost[st.Stream+"/"+m.ID] = true
			}
		}
	}
	var mu sync.Mutex
	seen := map[string]int64{} // stream/id -> deliveries of the successful handling
	starts := map[int]int{}
	c, err := NewConsumer(ConsumerConfig{
		Member:       MemberConfig{Coordinator: coord, StreamPrefix: "jobs", Group: "g", MemberID: "c1", LeaseTTL: 3 * time.Second},
		Redis:        rdb,
		Workers:      3,
		ClaimMinIdle: 200 * time.Millisecond, MaxDeliveries: 3,
		Handler: func(_ context.Context, m Message) error {
			if m.Values["fail"] == "yes" {
				return errors.New("poison")
			}
			mu.Lock()
			defer mu.Unlock()
			id := m.Stream + "/" + m.ID
			if _, dup := seen[id]; dup {
				t.Errorf("%s handled twice", id)
			}
			seen[id] = m.Deliveries
			return nil
		},
		OnShardStart: func(s int) { mu.Lock(); starts[s]++; mu.Unlock() },
	})
	if err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- c.Run(cctx) }()
	eventually.True(t, "every entry handled and the poison dead-lettered", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(seen) == n-1 && rdb.XLen(ctx, "jobs-dead-letter").Val() == 1
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(ghost) == 0 {
		t.Fatal("the ghost read nothing")
	}
	for id := range ghost {
		if d, ok := seen[id]; ok && d < 2 {
			t.Errorf("ghost entry %s handled with %d deliveries, want ≥ 2", id, d)
		}
	}
	dl, _ := rdb.XRange(ctx, "jobs-dead-letter", "-", "+").Result()
	if len(dl) != 1 || dl[0].Values["deliveries"] != "3" || dl[0].Values["field:fail"] != "yes" || dl[0].Values["group"] != "g" {
		t.Errorf("dead letters %+v", dl)
	}
	for s := range 4 {
		if pend := rdb.XPending(ctx, "jobs:"+itoa(s), "g").Val(); pend.Count != 0 {
			t.Errorf("shard %d: %d entries still pending", s, pend.Count)
		}
	}
	if len(starts) != 4 {
		t.Errorf("shards started %v", starts)
	}
}

// sharedGroup starts a coordinator process (memory store, no stream
// provisioning: the consumers create the Redis groups, at StartAt) and
// creates the groups named, of shards shards each, on a stream prefix of
// the test's own on the shared Redis. It returns the coordinator client,
// a Redis client and the prefix.
func sharedGroup(t *testing.T, shards int, groups ...string) (*Coordinator, *redis.Client, string) {
	t.Helper()
	rdb := testredis.Shared(t)
	prefix := testredis.Prefix(t, rdb)
	srv := startCoordinator(t, "memory", testredis.SharedAddr, "unused", 3*time.Second)
	coord := NewCoordinator(srv.Base, WithBasicAuth("admin", "password"))
	for _, g := range groups {
		if _, err := coord.CreateGroup(context.Background(), prefix, g, shards, "test"); err != nil {
			t.Fatal(err)
		}
	}
	return coord, rdb, prefix
}

// runConsumer runs c until the test ends or the returned stop is called;
// stop returns what Run returned.
func runConsumer(t *testing.T, c *Consumer) (stop func() error) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	var once sync.Once
	var err error
	stop = func() error {
		once.Do(func() { cancel(); err = <-done })
		return err
	}
	t.Cleanup(func() { _ = stop() })
	return stop
}

// addEntries writes n entries to stream key and returns their ids.
func addEntries(t *testing.T, rdb *redis.Client, key string, n int) []string {
	t.Helper()
	ids := make([]string, n)
	for i := range ids {
		id, err := rdb.XAdd(context.Background(), &redis.XAddArgs{Stream: key, Values: []any{"key", fmt.Sprintf("k%d", i), "seq", i}}).Result()
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = id
	}
	return ids
}

// Delivery counts are handler runs. With one worker whose queue holds
// entries longer than ClaimMinIdle while the shard is scanned for idle
// entries, and a handler that always fails, every entry runs exactly
// MaxDeliveries times and its dead letter says so: the scans skip the
// entries the consumer holds (queued), which XAUTOCLAIM would have
// claimed, counting deliveries no handler run matched.
func TestConsumerCountsHandlerRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a coordinator process")
	}
	t.Parallel() // a coordinator of its own, a key prefix of its own on the shared Redis
	coord, rdb, prefix := sharedGroup(t, 1, "g")
	ctx := context.Background()
	const n = 10
	addEntries(t, rdb, prefix+":0", n)
	var mu sync.Mutex
	runs := map[string]int64{}
	gate := make(chan struct{})
	var scans atomic.Int64
	c, err := NewConsumer(ConsumerConfig{
		Member:  MemberConfig{Coordinator: coord, StreamPrefix: prefix, Group: "g", MemberID: "c1"},
		Redis:   rdb,
		Workers: 1, BatchSize: n,
		ClaimMinIdle: 100 * time.Millisecond, ClaimInterval: 10 * time.Millisecond, MaxDeliveries: 3,
		Handler: func(_ context.Context, m Message) error {
			<-gate
			mu.Lock()
			defer mu.Unlock()
			runs[m.ID]++
			if m.Deliveries != runs[m.ID] {
				t.Errorf("%s: run %d has Deliveries %d", m.ID, runs[m.ID], m.Deliveries)
			}
			return errors.New("always fails")
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	c.onReclaim = func(int) { scans.Add(1) }
	stop := runConsumer(t, c)
	var opened sync.Once
	open := func() { opened.Do(func() { close(gate) }) }
	t.Cleanup(open) // before stop, should the test end early
	// The first entry's handler waits at the gate; the other entries wait
	// in the worker's queue until they are idle for ClaimMinIdle, and two
	// scans more.
	eventually.True(t, "every entry idle for ClaimMinIdle while held", func() bool {
		p, err := rdb.XPendingExt(ctx, &redis.XPendingExtArgs{Stream: prefix + ":0", Group: "g", Idle: 100 * time.Millisecond, Start: "-", End: "+", Count: 100}).Result()
		return err == nil && len(p) == n
	})
	from := scans.Load()
	eventually.True(t, "two scans of the shard with the entries idle", func() bool { return scans.Load() >= from+2 })
	open()
	eventually.True(t, "every entry dead-lettered and acknowledged", func() bool {
		return rdb.XLen(ctx, prefix+"-dead-letter").Val() == n && rdb.XPending(ctx, prefix+":0", "g").Val().Count == 0
	})
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	dl, err := rdb.XRange(ctx, prefix+"-dead-letter", "-", "+").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range dl {
		if e.Values["deliveries"] != "3" {
			t.Errorf("dead letter %v: deliveries %v, want 3", e.Values["id"], e.Values["deliveries"])
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(runs) != n {
		t.Errorf("%d entries ran, want %d", len(runs), n)
	}
	for id, r := range runs {
		if r != 3 {
			t.Errorf("%s ran %d times, want MaxDeliveries = 3", id, r)
		}
	}
}

// refuseAcks fails the pipelines that carry an XACK while on.
type refuseAcks struct {
	on      atomic.Bool
	refused atomic.Int64
}

func (h *refuseAcks) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (h *refuseAcks) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (h *refuseAcks) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if !h.on.Load() || !slices.ContainsFunc(cmds, func(c redis.Cmder) bool { return c.Name() == "xack" }) {
			return next(ctx, cmds)
		}
		h.refused.Add(1)
		err := errors.New("acknowledgements refused by the test")
		for _, c := range cmds {
			c.SetErr(err)
		}
		return err
	}
}

// Acknowledgements wait in batches, and a revoked shard's are sent before
// it is reported REVOKED: a consumer whose batches are never full and
// whose AckInterval never ends handles every entry and leaves them
// pending. A second consumer joins while the first one's acknowledgements
// are refused, five times (the revoked shards keep draining meanwhile,
// and the second starts none of them); each shard the second is given has
// nothing pending when it starts reading it, and no entry is handled
// twice.
func TestConsumerSendsAcksBeforeRevoke(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a coordinator process")
	}
	coord, rdb, prefix := sharedGroup(t, 4, "g")
	ctx := context.Background()
	var mu sync.Mutex
	handled := map[string][]string{} // stream/id → consumers
	pendingAtStart := map[int]int64{}
	refuse := &refuseAcks{}
	rdbA := redisClient(t, testredis.SharedAddr)
	rdbA.AddHook(refuse)
	start := func(id string, rdb *redis.Client) (*Consumer, func() error) {
		c, err := NewConsumer(ConsumerConfig{
			Member: MemberConfig{Coordinator: coord, StreamPrefix: prefix, Group: "g", MemberID: id},
			Redis:  rdb, AckBatch: 1000, AckInterval: time.Hour,
			ClaimMinIdle: 50 * time.Millisecond, ClaimInterval: 10 * time.Millisecond,
			Handler: func(_ context.Context, m Message) error {
				mu.Lock()
				defer mu.Unlock()
				handled[m.Stream+"/"+m.ID] = append(handled[m.Stream+"/"+m.ID], id)
				return nil
			},
			OnShardStart: func(s int) {
				if id != "b" {
					return
				}
				n := rdb.XPending(ctx, prefix+":"+itoa(s), "g").Val().Count
				mu.Lock()
				pendingAtStart[s] = n
				mu.Unlock()
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		return c, runConsumer(t, c)
	}
	write := func(n int) {
		for s := range 4 {
			addEntries(t, rdb, prefix+":"+itoa(s), n)
		}
	}
	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(handled)
	}
	pending := func() (n int64) {
		for s := range 4 {
			n += rdb.XPending(ctx, prefix+":"+itoa(s), "g").Val().Count
		}
		return n
	}
	write(10)
	_, stopA := start("a", rdbA)
	eventually.True(t, "a handles the 40 entries", func() bool { return count() == 40 })
	if n := pending(); n != 40 {
		t.Fatalf("%d entries pending after a handled them, want 40: acknowledgements wait for a full batch or AckInterval", n)
	}
	refuse.on.Store(true)
	b, stopB := start("b", rdb)
	// a's acknowledgements are only due once b's join revokes shards of
	// a's (AckBatch and AckInterval are never reached): the refusals are
	// the revoked shards' drain, sent and retried.
	eventually.True(t, "a's acknowledgements refused 5 times", func() bool { return refuse.refused.Load() >= 5 })
	mu.Lock()
	startedWhileRefused := maps.Clone(pendingAtStart)
	mu.Unlock()
	if len(startedWhileRefused) != 0 {
		t.Fatalf("b started shards %v while a's acknowledgements were refused: a reported them REVOKED before sending them", startedWhileRefused)
	}
	refuse.on.Store(false)
	eventually.True(t, "b reads two shards", func() bool { return len(b.Member().Owned()) == 2 })
	write(10)
	eventually.True(t, "the 80 entries handled", func() bool { return count() == 80 })
	mu.Lock()
	whileBoth := maps.Clone(pendingAtStart) // b also takes a's shards once a has left
	mu.Unlock()
	if err := stopA(); err != nil {
		t.Fatal(err)
	}
	if err := stopB(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(whileBoth) != 2 {
		t.Errorf("b started shards %v while a ran, want 2", whileBoth)
	}
	for s, n := range pendingAtStart {
		if n != 0 {
			t.Errorf("shard %d: %d entries pending when b started reading it, want 0 (a's acknowledgements sent before REVOKED)", s, n)
		}
	}
	for id, by := range handled {
		if len(by) != 1 {
			t.Errorf("%s handled by %v", id, by)
		}
	}
	if n := pending(); n != 0 {
		t.Errorf("%d entries pending after both left", n)
	}
}

// StartAt places the consumer group a consumer creates: at the start of
// the stream (the default), at its end, or after an entry id.
func TestConsumerStartAt(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a coordinator process")
	}
	t.Parallel() // a coordinator of its own, a key prefix of its own on the shared Redis
	starts := map[string]string{"earliest": "", "latest": StartLatest, "id": ""}
	coord, rdb, prefix := sharedGroup(t, 1, "earliest", "latest", "id")
	ctx := context.Background()
	key := prefix + ":0"
	before := addEntries(t, rdb, key, 6)
	starts["id"] = before[2]
	var mu sync.Mutex
	handled := map[string][]string{}
	for g, at := range starts {
		c, err := NewConsumer(ConsumerConfig{
			Member: MemberConfig{Coordinator: coord, StreamPrefix: prefix, Group: g, MemberID: g}, Redis: rdb, StartAt: at,
			Handler: func(_ context.Context, m Message) error {
				mu.Lock()
				defer mu.Unlock()
				handled[g] = append(handled[g], m.ID)
				return nil
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		runConsumer(t, c)
	}
	eventually.True(t, "the three consumers created their groups", func() bool {
		gs, err := rdb.XInfoGroups(ctx, key).Result()
		return err == nil && len(gs) == 3
	})
	after := addEntries(t, rdb, key, 2)
	want := map[string][]string{"earliest": append(before, after...), "latest": after, "id": append(before[3:], after...)}
	eventually.True(t, "every group delivered the last entry and has nothing pending", func() bool {
		gs, err := rdb.XInfoGroups(ctx, key).Result()
		if err != nil {
			return false
		}
		for _, g := range gs {
			if g.LastDeliveredID != after[1] || g.Pending != 0 {
				return false
			}
		}
		return true
	})
	mu.Lock()
	defer mu.Unlock()
	for g, ids := range want {
		got := slices.Sorted(slices.Values(handled[g]))
		if slices.Sort(ids); !slices.Equal(got, ids) {
			t.Errorf("StartAt %q (group %s) handled %v, want %v", starts[g], g, got, ids)
		}
	}
	if _, err := NewConsumer(ConsumerConfig{Member: MemberConfig{Coordinator: coord, StreamPrefix: prefix, Group: "x"}, Redis: rdb,
		Handler: func(context.Context, Message) error { return nil }, StartAt: "yesterday"}); err == nil {
		t.Error("StartAt \"yesterday\" accepted")
	}
}

// levels records the level of every log record.
type levels struct {
	mu   sync.Mutex
	recs []string
}

func (l *levels) Enabled(context.Context, slog.Level) bool { return true }
func (l *levels) Handle(_ context.Context, r slog.Record) error {
	if r.Level >= slog.LevelWarn {
		l.mu.Lock()
		l.recs = append(l.recs, r.Level.String()+" "+r.Message)
		l.mu.Unlock()
	}
	return nil
}
func (l *levels) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *levels) WithGroup(string) slog.Handler      { return l }

// The first run of a consumer that creates its group, in the coordinator
// and in Redis, logs no warning.
func TestConsumerFirstRunIsQuiet(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a coordinator process")
	}
	t.Parallel() // a coordinator of its own, a key prefix of its own on the shared Redis
	coord, rdb, prefix := sharedGroup(t, 0)
	addEntries(t, rdb, prefix+":0", 5)
	var handled atomic.Int64
	log := &levels{}
	c, err := NewConsumer(ConsumerConfig{
		Member: MemberConfig{Coordinator: coord, StreamPrefix: prefix, Group: "new", CreateGroup: true, CreateShards: 2, Logger: slog.New(log)},
		Redis:  rdb,
		Handler: func(context.Context, Message) error {
			handled.Add(1)
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	stop := runConsumer(t, c)
	eventually.True(t, "the 5 entries handled", func() bool { return handled.Load() == 5 })
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	log.mu.Lock()
	defer log.mu.Unlock()
	if len(log.recs) > 0 {
		t.Errorf("warnings on a first run: %q", log.recs)
	}
}
