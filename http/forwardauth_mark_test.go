package httpapi

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/redis-stream-coordinator/coordinator/persistence"
)

// A mark signs the request's method, URI and body, the receiver, the
// sender and the time: changing any of them, or checking it against a
// registry without the sender or with another token, fails it.
func TestForwardMarkBindsTheRequest(t *testing.T) {
	sender := persistence.Coordinator{ID: "coord-b", Token: "token-b"}
	live := []persistence.Coordinator{{ID: "coord-a", Token: "token-a"}, sender}
	now := time.Unix(1_800_000_000, 0)
	body := []byte(`{"memberId":"m1"}`)
	const uri = "/coord/v1/streams/orders/groups/g?x=1"
	h := http.Header{}
	digest := sha256.Sum256(body)
	signForward(h, http.MethodPost, uri, sender, "coord-a", now, &digest)

	m, err := readMark(h, live, now.Add(forwardWindow))
	if err != nil || m.by != "coord-b" {
		t.Fatalf("readMark at the window's end: %+v, %v", m, err)
	}
	if err := m.verify(http.MethodPost, uri, "coord-a", body); err != nil {
		t.Fatalf("verify the signed request: %v", err)
	}
	for name, err := range map[string]error{
		"method":   m.verify(http.MethodPut, uri, "coord-a", body),
		"URI":      m.verify(http.MethodPost, uri+"&y=2", "coord-a", body),
		"receiver": m.verify(http.MethodPost, uri, "coord-c", body),
		"body":     m.verify(http.MethodPost, uri, "coord-a", append(body, ' ')),
	} {
		if !errors.Is(err, errMarkSignature) {
			t.Errorf("another %s: %v, want errMarkSignature", name, err)
		}
	}

	check := func(name string, h http.Header, live []persistence.Coordinator, at time.Time, want error) {
		t.Helper()
		m, err := readMark(h, live, at)
		if err == nil {
			err = m.verify(http.MethodPost, uri, "coord-a", body)
		}
		if !errors.Is(err, want) {
			t.Errorf("%s: %v, want %v", name, err, want)
		}
	}
	renamed := h.Clone()
	renamed.Set(HeaderForwardedBy, "coord-a") // a's id on b's signature
	check("another sender", renamed, live, now, errMarkSignature)
	check("a sender not live", h, live[:1], now, errMarkSender)
	check("another token", h, []persistence.Coordinator{live[0], {ID: "coord-b", Token: "token-b2"}}, now, errMarkSignature)
	check("too late", h, live, now.Add(forwardWindow+time.Second), errMarkStale)
	check("too early", h, live, now.Add(-forwardWindow-time.Second), errMarkStale)
	moved := h.Clone()
	moved.Set(HeaderForwardedAt, fmt.Sprint(now.Unix()+1))
	check("another time", moved, live, now, errMarkSignature)
	for _, header := range []string{HeaderForwardedAt, HeaderForwardSignature} {
		broken := h.Clone()
		broken.Set(header, "x")
		check("malformed "+header, broken, live, now, errMarkMalformed)
	}
	clearMark(h)
	if len(h) != 0 {
		t.Errorf("after clearMark: %v", h)
	}
}

// BenchmarkForwardMark is what proving a forward costs: the sender's
// signature and the receiver's check of it, over a heartbeat's body
// (proxied requests are about that size) and over a batch of 256 of them
// (signed once for the whole batch).
func BenchmarkForwardMark(b *testing.B) {
	sender := persistence.Coordinator{ID: "coord-b", Token: "Q3Z4WJ2N7XKPLM5RT6YVA3BCDE"}
	live := []persistence.Coordinator{{ID: "coord-a", Token: "token-a"}, sender}
	for _, size := range []int{400, 256 * 400} {
		body := make([]byte, size)
		b.Run(fmt.Sprintf("body-%dB", size), func(b *testing.B) {
			b.ReportAllocs()
			h := http.Header{}
			for b.Loop() {
				now := time.Now()
				digest := sha256.Sum256(body)
				signForward(h, http.MethodPost, ForwardBatchPath, sender, "coord-a", now, &digest)
				m, err := readMark(h, live, now)
				if err == nil {
					err = m.verify(http.MethodPost, ForwardBatchPath, "coord-a", body)
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
