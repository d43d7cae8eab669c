package cluster_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis-stream-coordinator/coordinator/cluster"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/eventually"
	"github.com/redis-stream-coordinator/coordinator/persistence"
	"github.com/redis-stream-coordinator/coordinator/persistence/memory"
)

// entryOf returns id's entry among the store's live coordinators.
func entryOf(t *testing.T, store persistence.Cluster, id string) persistence.Peer {
	t.Helper()
	live, err := store.Coordinators(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range live {
		if c.ID == id {
			return c
		}
	}
	t.Fatalf("%s not in the registry: %v", id, live)
	return persistence.Peer{}
}

// Issue 42 item 11: the registry holds each run's public key as its
// token, nothing secret. Two coordinators derive the same key for the
// marks between them from what they read of each other in the store, and
// that key is none of the stored tokens (nor in them); a token that is no
// public key yields no key. A run that registers anew (its lease was
// lost) draws a new key pair, and the others derive the new pair's key
// once they read its entry.
func TestForwardKeysFromTheRegistry(t *testing.T) {
	store := memory.New()
	a, b := newNode(t, store, "a"), newNode(t, store.Handle(), "b")
	a.Start(t.Context())
	b.Start(t.Context())
	t.Cleanup(func() { _ = a.Stop(context.Background()); _ = b.Stop(context.Background()) })
	eventually.True(t, "both live on both", func() bool { return len(a.Live()) == 2 && len(b.Live()) == 2 })

	ea, eb := entryOf(t, store, "a"), entryOf(t, store, "b")
	for _, e := range []persistence.Peer{ea, eb} {
		if raw, err := base64.RawURLEncoding.DecodeString(e.Token); err != nil || len(raw) != 32 {
			t.Fatalf("stored token of %s %q is not an X25519 public key", e.ID, e.Token)
		}
	}
	if ea.Token != a.Self().Token || eb.Token != b.Self().Token {
		t.Fatal("stored tokens are not the nodes' own")
	}
	kab, kba := a.ForwardKey(eb), b.ForwardKey(ea)
	if len(kab) != 32 || !bytes.Equal(kab, kba) {
		t.Fatalf("a derives %x with b, b derives %x with a", kab, kba)
	}
	for _, stored := range []string{ea.Token, eb.Token, ea.URL, eb.URL} {
		if bytes.Contains([]byte(stored), kab) || strings.Contains(stored, base64.RawURLEncoding.EncodeToString(kab)) {
			t.Fatalf("the pair's key is in the store: %q", stored)
		}
	}
	if k := a.ForwardKey(persistence.Peer{ID: "old", Token: "Q3Z4WJ2N7XKPLM5RT6YVA3BCDE"}); k != nil {
		t.Errorf("a random token yields key %x", k)
	}
	if k := a.ForwardKey(persistence.Peer{ID: "zero", Token: base64.RawURLEncoding.EncodeToString(make([]byte, 32))}); k != nil {
		t.Errorf("a low-order point yields key %x", k)
	}

	// a's entry disappears behind its back: its next renewal is refused and
	// it registers anew, with a new key pair.
	if err := store.Deregister(t.Context(), ea); err != nil {
		t.Fatal(err)
	}
	eventually.True(t, "a registered anew and b read it", func() bool {
		if a.Self().Token == ea.Token || !a.Serving() {
			return false
		}
		for _, c := range b.Live() {
			if c.ID == "a" && c.Token == a.Self().Token {
				return true
			}
		}
		return false
	})
	ea2 := entryOf(t, store, "a")
	if k := a.ForwardKey(eb); bytes.Equal(k, kab) || !bytes.Equal(k, b.ForwardKey(ea2)) {
		t.Error("the new run's key is the old one's, or the two ends differ")
	}
}

// refusalCounter counts ForwardRefused per cause (a cluster.Observer that
// implements cluster.ForwardObserver, as package metrics does).
type refusalCounter struct {
	mu     sync.Mutex
	counts map[string]int
}

func (c *refusalCounter) Renewed(error)                        {}
func (c *refusalCounter) MembershipChanged([]persistence.Peer) {}
func (c *refusalCounter) ForwardRefused(cause string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.counts[cause]++
}

// warnings returns the WARN records whose message contains s.
func (l *logRecords) warnings(s string) []slog.Record {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []slog.Record
	for _, r := range l.records {
		if r.Level == slog.LevelWarn && strings.Contains(r.Message, s) {
			out = append(out, r)
		}
	}
	return out
}

// Issue 42 item 5: forwards the HTTP layer refused to a peer (it
// advertises http while this coordinator serves TLS) are logged once per
// peer and URL, counted (ForwardObserver) and shown on that peer in the
// cluster view, with their number.
func TestForwardRefusedLoggedOnceCountedShown(t *testing.T) {
	store := memory.New()
	logs := &logRecords{}
	counter := &refusalCounter{counts: map[string]int{}}
	a, err := cluster.New(cluster.Options{Store: store, ID: "a", URL: "https://a:8443", LeaseTTL: time.Second,
		RenewInterval: 20 * time.Millisecond, Logger: slog.New(logs), Observer: counter})
	if err != nil {
		t.Fatal(err)
	}
	b := newNode(t, store.Handle(), "b") // http://b:8080
	a.Start(t.Context())
	b.Start(t.Context())
	t.Cleanup(func() { _ = a.Stop(context.Background()); _ = b.Stop(context.Background()) })
	eventually.True(t, "both live on a", func() bool { return len(a.Live()) == 2 })
	peer := entryOf(t, store, "b")
	for range 3 {
		a.ForwardRefused(peer, cluster.InsecurePeer)
	}
	if w := logs.warnings("not forwarding"); len(w) != 1 {
		t.Errorf("%d WARN records for 3 refusals of one peer, want 1", len(w))
	}
	counter.mu.Lock()
	n := counter.counts[cluster.InsecurePeer]
	counter.mu.Unlock()
	if n != 3 {
		t.Errorf("counted %d refusals, want 3", n)
	}
	v, err := a.View(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range v.Coordinators {
		want, wantN := map[string]string{"b": cluster.InsecurePeer}[c.ID], map[string]int64{"b": 3}[c.ID]
		if c.ForwardingRefused != want || c.ForwardsRefused != wantN {
			t.Errorf("view of %s: refused %q × %d, want %q × %d", c.ID, c.ForwardingRefused, c.ForwardsRefused, want, wantN)
		}
	}
	moved := peer
	moved.URL = "http://b-elsewhere:8080"
	a.ForwardRefused(moved, cluster.InsecurePeer)
	if w := logs.warnings("not forwarding"); len(w) != 2 {
		t.Errorf("%d WARN records after the peer's URL changed, want 2", len(w))
	}
}

// BenchmarkForwardKeyDerive is what deriving the key of a pair costs (an
// X25519 and an HKDF), once per peer run: later marks find it cached.
func BenchmarkForwardKeyDerive(b *testing.B) {
	peer := persistence.Peer{ID: "b", Token: cluster.NewForwardKeys().Token()}
	b.ReportAllocs()
	for b.Loop() {
		if cluster.NewForwardKeys().With(peer) == nil {
			b.Fatal("no key")
		}
	}
}
