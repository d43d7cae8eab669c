package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis-stream-coordinator/coordinator/cluster"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/eventually"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/storetest"
	"github.com/redis-stream-coordinator/coordinator/persistence"
	"github.com/redis-stream-coordinator/coordinator/persistence/memory"
	"github.com/redis-stream-coordinator/coordinator/placement"
)

func newNode(t *testing.T, store cluster.Store, id string) *cluster.Node {
	t.Helper()
	n, err := cluster.New(cluster.Options{Store: store, ID: id, URL: "http://" + id + ":8080",
		LeaseTTL: time.Second, RenewInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// Two nodes see each other, place every stream on exactly one of them,
// and route a group's requests to it: a node serves what is placed on it,
// or what the node it is placed on forwarded, and forwards the rest. The
// store lets one node at a time acquire a group. Leaving moves every
// stream to the other node.
func TestPlacementAndAcquire(t *testing.T) {
	store := memory.New()
	a, b := newNode(t, store, "a"), newNode(t, store.Handle(), "b")
	a.Start(t.Context())
	b.Start(t.Context())
	t.Cleanup(func() { _ = a.Stop(context.Background()); _ = b.Stop(context.Background()) })
	eventually.True(t, "both live on both", func() bool { return len(a.Live()) == 2 && len(b.Live()) == 2 })

	var onA group.Key
	for i := range 100 {
		prefix := fmt.Sprintf("s-%d", i)
		pa, _ := a.Placed(prefix)
		pb, _ := b.Placed(prefix)
		if pa.ID != pb.ID || a.PlacedHere(prefix) == b.PlacedHere(prefix) {
			t.Fatalf("%s placed on %s by a and %s by b", prefix, pa.ID, pb.ID)
		}
		if pa.ID == "a" {
			onA = group.Key{StreamPrefix: prefix, ConsumerGroup: "g"}
		}
	}
	if onA.StreamPrefix == "" {
		t.Fatal("no stream placed on a among 100")
	}
	if r := b.Route(onA, cluster.Mark{}); r.Decision != cluster.Forward || r.Owner.ID != "a" || r.Owner.URL != "http://a:8080" {
		t.Fatalf("b routes a's group: %+v, want forward to a", r)
	}
	if r := a.Route(onA, cluster.Mark{}); r.Decision != cluster.Local || r.Owner.ID != "a" {
		t.Fatalf("a routes its group: %+v, want local", r)
	}
	if r := b.Route(onA, cluster.Mark{By: "a"}); r.Decision != cluster.Local {
		t.Fatalf("b routes a's group forwarded by a: %+v, want local (a disclaims it)", r)
	}
	if r := b.Route(onA, cluster.Mark{Again: true}); r.Decision != cluster.Refuse || r.Owner.ID != "a" || !errors.Is(r.Reason, persistence.ErrNotOwner) {
		t.Fatalf("b routes a's group that may not travel again: %+v, want refused naming a (an unproven mark serves no group placed elsewhere)", r)
	}
	if r := a.Route(onA, cluster.Mark{Again: true}); r.Decision != cluster.Local || r.Owner.ID != "a" {
		t.Fatalf("a routes its group that may not travel again: %+v, want local", r)
	}
	if r := b.Route(onA, cluster.Mark{By: "c"}); r.Decision != cluster.Refuse || !errors.Is(r.Reason, persistence.ErrNotOwner) {
		t.Fatalf("b routes a's group forwarded by c: %+v, want refused naming a", r)
	}
	var no *cluster.NotOwnerError
	if epoch, err := a.Acquire(t.Context(), onA); err != nil || epoch != 1 {
		t.Fatalf("a acquires its group: %d, %v", epoch, err)
	}
	// a stores the group: its release keeps the record and the epoch.
	if _, err := store.Create(t.Context(), onA, persistence.Encode(storetest.Group(onA))); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Acquire(t.Context(), onA); !errors.As(err, &no) || no.Owner.ID != "a" || !errors.Is(err, persistence.ErrNotOwner) {
		t.Fatalf("b acquires a group a still owns: %v, want NotOwnerError naming a", err)
	}

	a.Leave()
	if a.Serving() || a.PlacedHere(onA.StreamPrefix) {
		t.Fatal("a leaving still serves or still has streams placed on it")
	}
	if r := a.Route(onA, cluster.Mark{By: "b"}); r.Decision != cluster.Forward || r.Owner.ID != "b" {
		t.Fatalf("leaving a routes a request b forwarded: %+v, want forward to b", r)
	}
	if r := a.Route(onA, cluster.Mark{Again: true}); r.Decision != cluster.Refuse || !errors.Is(r.Reason, cluster.ErrNotServing) {
		t.Fatalf("leaving a routes a request that may not travel again: %+v, want not serving", r)
	}
	if err := a.Release(t.Context(), onA); err != nil {
		t.Fatal(err)
	}
	if epoch, err := b.Acquire(t.Context(), onA); err != nil || epoch != 2 {
		t.Fatalf("b takes the group a forwarded after its release: %d, %v; want epoch 2", epoch, err)
	}
	v, err := b.View(t.Context())
	if err != nil || len(v.Coordinators) != 2 {
		t.Fatalf("view %+v, %v", v, err)
	}
}

// A node serves only while its registry lease cannot have ended: a second
// run of the same id waits for the first's lease, and the first stops
// serving once it can no longer renew.
func TestServingFollowsTheLease(t *testing.T) {
	store := memory.New()
	first := newNode(t, store, "c")
	first.Start(t.Context())
	if !first.Serving() {
		t.Fatal("a registered node does not serve")
	}
	second := newNode(t, store.Handle(), "c")
	second.Start(t.Context())
	t.Cleanup(func() { _ = second.Stop(context.Background()) })
	if second.Serving() {
		t.Fatal("a second run of a live id serves")
	}
	if err := first.Stop(context.Background()); err != nil { // deregisters
		t.Fatal(err)
	}
	if first.Serving() {
		t.Fatal("a stopped node serves")
	}
	eventually.True(t, "the second run registered", second.Serving)
}

// createGroups stores one group on each of prefixes.
func createGroups(t *testing.T, store persistence.Store, prefixes ...string) {
	t.Helper()
	for _, p := range prefixes {
		key := group.Key{StreamPrefix: p, ConsumerGroup: "g"}
		if _, err := store.Create(t.Context(), key, persistence.Encode(storetest.Group(key, "m-1"))); err != nil {
			t.Fatal(err)
		}
	}
}

// Thirty groups, each on a stream prefix of its own, on three nodes (goal
// P8b of issue 18): every node places every prefix alike, 10 ± 2 on each,
// and Placed allocates nothing.
func TestThirtyPrefixesOnThreeNodes(t *testing.T) {
	store := memory.New()
	var prefixes []string
	for i := range 30 {
		prefixes = append(prefixes, fmt.Sprintf("orders-%d", i))
	}
	createGroups(t, store, prefixes...)
	nodes := []*cluster.Node{newNode(t, store, "coordinator-0"), newNode(t, store.Handle(), "coordinator-1"), newNode(t, store.Handle(), "coordinator-2")}
	for _, n := range nodes {
		n.Start(t.Context())
		t.Cleanup(func() { _ = n.Stop(context.Background()) })
	}
	var owned map[string]int
	eventually.True(t, "the three nodes place the 30 prefixes alike", func() bool {
		owned = map[string]int{}
		for _, p := range prefixes {
			first, ok := nodes[0].Placed(p)
			for _, n := range nodes[1:] {
				if c, _ := n.Placed(p); !ok || c.ID != first.ID || len(n.Live()) != 3 {
					return false
				}
			}
			owned[first.ID]++
		}
		return len(owned) == 3
	})
	for id, n := range owned {
		if n < 8 || n > 12 {
			t.Errorf("%s owns %d of 30 prefixes, want 10 ± 2 (%v)", id, n, owned)
		}
	}
	t.Logf("prefixes placed per node: %v", owned)
	if a := testing.AllocsPerRun(100, func() { nodes[0].Placed(prefixes[7]) }); a != 0 {
		t.Errorf("Placed allocates %.0f times per call", a)
	}
}

// A group created here is placed at once with every listed prefix
// (placement.Bounded), not only at the next list; until then, and for a
// prefix not listed at all, Placed is placement.Owner.
func TestCreatedIsPlacedAtOnce(t *testing.T) {
	store := memory.New()
	ids := []string{"a", "b"}
	// Ten prefixes Owner puts on a: Bounded (capacity ⌈1.1 × 11 ÷ 2⌉ = 7)
	// moves some to b.
	var prefixes []string
	for i := 0; len(prefixes) < 10; i++ {
		p := fmt.Sprintf("s-%d", i)
		if o, _ := placement.Owner(p, ids); o == "a" {
			prefixes = append(prefixes, p)
		}
	}
	units := map[string]int{}
	for _, p := range prefixes {
		units[p] = 1
	}
	// A new prefix that Bounded places elsewhere than Owner, once listed.
	var created string
	for i := 0; created == ""; i++ {
		p := fmt.Sprintf("new-%d", i)
		units[p] = 1
		owner, _ := placement.Owner(p, ids)
		if placement.Bounded(units, ids, placement.DefaultEpsilon)[p] != owner {
			created = p
		}
		delete(units, p)
	}
	units[created] = 1
	want := placement.Bounded(units, ids, placement.DefaultEpsilon)
	createGroups(t, store, prefixes...)
	// Renewals (and lists) far apart: only Created adds the prefix. b
	// starts first, so a's first refresh sees both.
	var a *cluster.Node
	for _, id := range []string{"b", "a"} {
		n, err := cluster.New(cluster.Options{Store: store.Handle(), ID: id, URL: "http://" + id + ":8080", LeaseTTL: time.Hour, RenewInterval: 10 * time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		n.Start(t.Context())
		t.Cleanup(func() { _ = n.Stop(context.Background()) })
		a = n
	}
	if len(a.Live()) != 2 {
		t.Fatalf("a sees %v", a.Live())
	}
	owner, _ := placement.Owner(created, ids)
	if c, _ := a.Placed(created); c.ID != owner {
		t.Fatalf("unlisted prefix placed on %s, want Owner's %s", c.ID, owner)
	}
	createGroups(t, store, created)
	a.Created(group.Key{StreamPrefix: created, ConsumerGroup: "g"})
	eventually.True(t, "a places the created prefix with the others", func() bool {
		c, _ := a.Placed(created)
		return c.ID == want[created]
	})
	for p, id := range want {
		if c, _ := a.Placed(p); c.ID != id {
			t.Errorf("%s placed on %s, want %s", p, c.ID, id)
		}
	}
}

// logRecords is a slog handler keeping every record, safe for concurrent
// use.
type logRecords struct {
	mu      sync.Mutex
	records []slog.Record
}

func (l *logRecords) Enabled(context.Context, slog.Level) bool { return true }
func (l *logRecords) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.records = append(l.records, r.Clone())
	return nil
}
func (l *logRecords) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logRecords) WithGroup(string) slog.Handler      { return l }

// errors returns the ERROR records, each as its message and attributes.
func (l *logRecords) errors() []map[string]string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]string
	for _, r := range l.records {
		if r.Level != slog.LevelError {
			continue
		}
		m := map[string]string{"msg": r.Message}
		r.Attrs(func(a slog.Attr) bool {
			m[a.Key] = a.Value.String()
			return true
		})
		out = append(out, m)
	}
	return out
}

// A second process with the id of a live coordinator never serves, and
// says so: an ERROR naming the other process's URL and the setting to
// change, repeated every lease period while the other one lives; the
// other process keeps serving.
func TestIDHeldByAnotherProcessIsAnError(t *testing.T) {
	store := memory.New()
	first := newNode(t, store, "dup")
	first.Start(t.Context())
	t.Cleanup(func() { _ = first.Stop(context.Background()) })
	logs := &logRecords{}
	second, err := cluster.New(cluster.Options{Store: store.Handle(), ID: "dup", URL: "http://dup:8081",
		LeaseTTL: 200 * time.Millisecond, RenewInterval: 20 * time.Millisecond, Logger: slog.New(logs)})
	if err != nil {
		t.Fatal(err)
	}
	second.Start(t.Context())
	t.Cleanup(func() { _ = second.Stop(context.Background()) })
	eventually.True(t, "two ERRORs about the held id", func() bool { return len(logs.errors()) >= 2 })
	for _, e := range logs.errors() {
		if e["otherUrl"] != "http://dup:8080" || e["url"] != "http://dup:8081" || e["id"] != "dup" ||
			!strings.Contains(e["msg"], "coordinator.id (COORDINATOR_ID)") {
			t.Errorf("ERROR record %v", e)
		}
	}
	if second.Serving() || !first.Serving() {
		t.Errorf("serving: first %v, second %v; want only the first", first.Serving(), second.Serving())
	}
}

// The live coordinators' lease ends are those of the last registry read:
// they advance with every renewal, in Live and in the cluster view.
func TestLeaseEndsAdvance(t *testing.T) {
	n := newNode(t, memory.New(), "solo")
	n.Start(t.Context())
	t.Cleanup(func() { _ = n.Stop(context.Background()) })
	v, err := n.View(t.Context())
	if err != nil || len(v.Coordinators) != 1 {
		t.Fatalf("view %+v, %v", v, err)
	}
	first := v.Coordinators[0].LeaseExpiresAt
	eventually.True(t, "the lease end in the view advances", func() bool {
		v, err := n.View(t.Context())
		return err == nil && len(v.Coordinators) == 1 && v.Coordinators[0].LeaseExpiresAt.After(first)
	})
}

// Only a release to another coordinator is a handover: releasing a group
// still placed here (its actor stopped) is not listed, one to the node a
// leaving coordinator's group moves to is.
func TestOnlyRealHandoversAreListed(t *testing.T) {
	store := memory.New()
	a, b := newNode(t, store, "a"), newNode(t, store.Handle(), "b")
	a.Start(t.Context())
	b.Start(t.Context())
	t.Cleanup(func() { _ = a.Stop(context.Background()); _ = b.Stop(context.Background()) })
	eventually.True(t, "both live on a", func() bool { return len(a.Live()) == 2 })
	var key group.Key
	for i := 0; key.StreamPrefix == ""; i++ {
		if p := fmt.Sprintf("s-%d", i); a.PlacedHere(p) {
			key = group.Key{StreamPrefix: p, ConsumerGroup: "g"}
		}
	}
	if _, err := a.Acquire(t.Context(), key); err != nil {
		t.Fatal(err)
	}
	if err := a.Release(t.Context(), key); err != nil {
		t.Fatal(err)
	}
	if v, err := a.View(t.Context()); err != nil || len(v.Handovers) != 0 {
		t.Fatalf("after releasing a group placed here: handovers %+v, %v; want none", v.Handovers, err)
	}
	if _, err := a.Acquire(t.Context(), key); err != nil {
		t.Fatal(err)
	}
	a.Leave()
	if err := a.Release(t.Context(), key); err != nil {
		t.Fatal(err)
	}
	v, err := a.View(t.Context())
	if err != nil || len(v.Handovers) != 1 {
		t.Fatalf("after leaving: handovers %+v, %v; want one", v.Handovers, err)
	}
	if h := v.Handovers[0]; h.From != "a" || h.To != "b" || h.Cause != "shutdown" || h.StreamPrefix != key.StreamPrefix {
		t.Errorf("handover %+v, want a → b on shutdown", h)
	}
}
