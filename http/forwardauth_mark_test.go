package httpapi

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/redis-stream-coordinator/coordinator/cluster"
	"github.com/redis-stream-coordinator/coordinator/persistence"
)

// keysOf returns the keyOf of readMark for the coordinator whose key
// pair is k.
func keysOf(k *cluster.ForwardKeys) func(persistence.Peer) []byte { return k.With }

// A mark signs the request's method, URI, body length and body digest,
// the receiver, the sender and the time, with the key the two
// coordinators share: changing any of them, or checking it against a
// registry without the sender or with another run of it, fails it. The
// signature is checked from the headers; the body is checked against the
// digest signed.
func TestForwardMarkBindsTheRequest(t *testing.T) {
	ka, kb := cluster.NewForwardKeys(), cluster.NewForwardKeys()
	receiver := persistence.Peer{ID: "coord-a", Token: ka.Token()}
	sender := persistence.Peer{ID: "coord-b", Token: kb.Token()}
	live := []persistence.Peer{receiver, sender}
	now := time.Unix(1_800_000_000, 0)
	body := []byte(`{"memberId":"m1"}`)
	n := int64(len(body))
	const uri = "/coord/v1/streams/orders/groups/g?x=1"
	h := http.Header{}
	digest := sha256.Sum256(body)
	signForward(h, http.MethodPost, uri, sender.ID, kb.With(receiver), receiver.ID, now, n, &digest)

	m, err := readMark(h, live, keysOf(ka), now.Add(forwardWindow))
	if err != nil || m.by != "coord-b" {
		t.Fatalf("readMark at the window's end: %+v, %v", m, err)
	}
	if err := m.verify(http.MethodPost, uri, "coord-a", n); err != nil {
		t.Fatalf("verify the signed request: %v", err)
	}
	if err := m.checkBody(body); err != nil {
		t.Fatalf("check the signed body: %v", err)
	}
	for name, err := range map[string]error{
		"method":         m.verify(http.MethodPut, uri, "coord-a", n),
		"URI":            m.verify(http.MethodPost, uri+"&y=2", "coord-a", n),
		"receiver":       m.verify(http.MethodPost, uri, "coord-c", n),
		"length":         m.verify(http.MethodPost, uri, "coord-a", n+1),
		"unknown length": m.verify(http.MethodPost, uri, "coord-a", -1),
	} {
		if !errors.Is(err, errMarkSignature) {
			t.Errorf("another %s: %v, want errMarkSignature", name, err)
		}
	}
	if err := m.checkBody([]byte(`{"memberId":"m2"}`)); !errors.Is(err, errMarkBody) {
		t.Errorf("another body of the same length: %v, want errMarkBody", err)
	}

	check := func(name string, h http.Header, live []persistence.Peer, at time.Time, want error) {
		t.Helper()
		m, err := readMark(h, live, keysOf(ka), at)
		if err == nil {
			err = m.verify(http.MethodPost, uri, "coord-a", n)
		}
		if !errors.Is(err, want) {
			t.Errorf("%s: %v, want %v", name, err, want)
		}
	}
	renamed := h.Clone()
	renamed.Set(HeaderForwardedBy, "coord-a") // a's id on b's signature
	check("another sender", renamed, live, now, errMarkSignature)
	check("a sender not live", h, live[:1], now, errMarkSender)
	restarted := persistence.Peer{ID: "coord-b", Token: cluster.NewForwardKeys().Token()}
	check("another run of the sender", h, []persistence.Peer{receiver, restarted}, now, errMarkSignature)
	check("a sender whose token is no key", h, []persistence.Peer{receiver, {ID: "coord-b", Token: "Q3Z4WJ2N7XKPLM5RT6YVA3BCDE"}}, now, errMarkSender)
	check("too late", h, live, now.Add(forwardWindow+time.Second), errMarkStale)
	check("too early", h, live, now.Add(-forwardWindow-time.Second), errMarkStale)
	moved := h.Clone()
	moved.Set(HeaderForwardedAt, fmt.Sprint(now.Unix()+1))
	check("another time", moved, live, now, errMarkSignature)
	other := sha256.Sum256([]byte(`{"memberId":"m2"}`))
	redigested := h.Clone()
	redigested.Set(HeaderForwardBodyDigest, base64.RawURLEncoding.EncodeToString(other[:]))
	check("another body's digest", redigested, live, now, errMarkSignature)
	for _, header := range []string{HeaderForwardedAt, HeaderForwardSignature, HeaderForwardBodyDigest} {
		broken := h.Clone()
		broken.Set(header, "x")
		check("malformed "+header, broken, live, now, errMarkMalformed)
		broken.Del(header)
		check("without "+header, broken, live, now, errMarkMalformed)
	}
	clearMark(h)
	if len(h) != 0 {
		t.Errorf("after clearMark: %v", h)
	}
}

// What the store holds (every coordinator's token) signs no mark: the
// tokens are public keys, and a mark keyed by either token, or by
// anything else derived from them alone, fails; only the key the two
// coordinators derive from their private keys signs one, and it is the
// same at both ends.
func TestStoredTokensSignNoMark(t *testing.T) {
	ka, kb := cluster.NewForwardKeys(), cluster.NewForwardKeys()
	a := persistence.Peer{ID: "coord-a", Token: ka.Token()}
	b := persistence.Peer{ID: "coord-b", Token: kb.Token()}
	if !bytes.Equal(ka.With(b), kb.With(a)) || ka.With(b) == nil {
		t.Fatal("the two ends derive different keys")
	}
	live := []persistence.Peer{a, b}
	now := time.Now()
	body := []byte(`{"memberId":"m1"}`)
	digest := sha256.Sum256(body)
	tokens := sha256.Sum256([]byte(a.Token + b.Token))
	for name, key := range map[string][]byte{
		"the sender's token":   []byte(b.Token),
		"the receiver's token": []byte(a.Token),
		"both tokens":          tokens[:],
		"a third run's key":    cluster.NewForwardKeys().With(a),
	} {
		h := http.Header{}
		signForward(h, http.MethodPost, ForwardBatchPath, b.ID, key, a.ID, now, int64(len(body)), &digest)
		m, err := readMark(h, live, keysOf(ka), now)
		if err == nil {
			err = m.verify(http.MethodPost, ForwardBatchPath, a.ID, int64(len(body)))
		}
		if !errors.Is(err, errMarkSignature) {
			t.Errorf("mark keyed by %s: %v, want errMarkSignature", name, err)
		}
	}
}

// BenchmarkForwardMark is what proving a forward costs: the sender's
// signature and the receiver's check of it, over a heartbeat's body
// (proxied requests are about that size) and over a batch of 256 of them
// (signed once for the whole batch), the pair's key derived once.
func BenchmarkForwardMark(b *testing.B) {
	ka, kb := cluster.NewForwardKeys(), cluster.NewForwardKeys()
	receiver := persistence.Peer{ID: "coord-a", Token: ka.Token()}
	sender := persistence.Peer{ID: "coord-b", Token: kb.Token()}
	live := []persistence.Peer{receiver, sender}
	for _, size := range []int{400, 256 * 400} {
		body := make([]byte, size)
		b.Run(fmt.Sprintf("body-%dB", size), func(b *testing.B) {
			b.ReportAllocs()
			h := http.Header{}
			for b.Loop() {
				now := time.Now()
				digest := sha256.Sum256(body)
				signForward(h, http.MethodPost, ForwardBatchPath, sender.ID, kb.With(receiver), receiver.ID, now, int64(len(body)), &digest)
				m, err := readMark(h, live, ka.With, now)
				if err == nil {
					err = m.verify(http.MethodPost, ForwardBatchPath, receiver.ID, int64(len(body)))
				}
				if err == nil {
					err = m.checkBody(body)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// The client address is the TCP peer's unless a coordinator proved it
// forwarded the request: then it is the last X-Forwarded-For entry, the
// one that coordinator appended. A forward appends it, so a request a
// leaving coordinator forwards again keeps its client's address last.
func TestClientAddress(t *testing.T) {
	for _, tc := range []struct {
		name, remote string
		xff          []string
		proven       bool
		addr, fwd    string
	}{
		{"client", "192.0.2.7:5000", nil, false, "192.0.2.7", "192.0.2.7"},
		{"client naming another address", "192.0.2.7:5000", []string{"203.0.113.1"}, false, "192.0.2.7", "203.0.113.1, 192.0.2.7"},
		{"proven forward", "10.0.0.2:6000", []string{"203.0.113.1, 192.0.2.7"}, true, "192.0.2.7", "203.0.113.1, 192.0.2.7, 192.0.2.7"},
		{"proven forward, two header lines", "10.0.0.2:6000", []string{"203.0.113.1", "192.0.2.7"}, true, "192.0.2.7", "203.0.113.1, 192.0.2.7, 192.0.2.7"},
		{"proven forward without X-Forwarded-For", "10.0.0.2:6000", nil, true, "10.0.0.2", "10.0.0.2"},
	} {
		r, err := http.NewRequest(http.MethodGet, "/coord/v1/streams/orders/groups/g", nil)
		if err != nil {
			t.Fatal(err)
		}
		r.RemoteAddr, r.Header["X-Forwarded-For"] = tc.remote, tc.xff
		if tc.proven {
			trustForwarder(r)
		}
		if addr, fwd := clientAddress(r), forwardedFor(r); addr != tc.addr || fwd != tc.fwd {
			t.Errorf("%s: address %q, forwarded for %q; want %q, %q", tc.name, addr, fwd, tc.addr, tc.fwd)
		}
	}
}
