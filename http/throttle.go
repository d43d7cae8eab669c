package httpapi

import (
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/redis-stream-coordinator/coordinator/ratelimit"
)

// authThrottle holds the keys a failed authentication counts against: the
// user name tried (when known) together with the client's address, and the
// client's address alone (throttleAddress). A throttled request is not
// refused outright: a credential that is cheap to check and right still
// passes (security.Users.AuthenticateKnown), so guesses can never lock out
// the right password, not even from the guesser's own address.
type authThrottle struct {
	g          *guard
	keys       []throttleKey
	retryAfter time.Duration
}

type throttleKey struct {
	limiter *ratelimit.Limiter
	key     string
	// kind names the key in logs without the user name tried.
	kind string
}

// throttle returns the throttle of a request trying username ("" when
// none is named, e.g. a Bearer token).
func (g *guard) throttle(r *http.Request, username string) *authThrottle {
	t := &authThrottle{g: g}
	addr := g.throttleAddress(r)
	if l := g.FailedAuthPerUser; l != nil && username != "" {
		t.keys = append(t.keys, throttleKey{l, "user:" + strconv.Quote(username) + "@" + addr, "user+address"})
	}
	if l := g.FailedAuthPerAddress; l != nil {
		t.keys = append(t.keys, throttleKey{l, "addr:" + addr, "address"})
	}
	return t
}

// exhausted reports whether any key has used up its failures, keeping the
// longest time until one recovers for refuse.
func (t *authThrottle) exhausted() bool {
	now := t.g.Now()
	for _, k := range t.keys {
		if exhausted, retryAfter := k.limiter.Exhausted(k.key, now); exhausted {
			t.retryAfter = max(t.retryAfter, retryAfter)
		}
	}
	return t.retryAfter > 0
}

// refuse answers 429 with Retry-After (after exhausted reported true).
func (t *authThrottle) refuse(w http.ResponseWriter) {
	w.Header().Set("Retry-After", strconv.FormatInt(ratelimit.RetryAfterSeconds(t.retryAfter), 10))
	writeError(w, http.StatusTooManyRequests, codeRateLimited, "Too many failed authentications; retry later")
}

// failed counts one failed authentication against every key, logging a
// warning (the kind of key, never the user name tried) for each key it
// uses up.
func (t *authThrottle) failed() {
	now := t.g.Now()
	for _, k := range t.keys {
		k.limiter.Allow(k.key, now)
		if exhausted, retryAfter := k.limiter.Exhausted(k.key, now); exhausted {
			t.g.log.Warn("authentication throttled after repeated failures", "key", k.kind, "retryAfter", retryAfter)
		}
	}
}

// throttleAddress is the client address failed authentications count
// against: the connection's peer, or, when that peer is one of
// Security.TrustedProxies, the last X-Forwarded-For entry that is not a
// trusted proxy (the address the nearest trusted proxy saw). Entries a
// client wrote itself sit before that one and are never used.
func (g *guard) throttleAddress(r *http.Request) string {
	addr := peerAddress(r)
	if !g.trusted(addr) {
		return addr.String()
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		hop, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			break
		}
		addr = hop.Unmap()
		if !g.trusted(addr) {
			break
		}
	}
	return addr.String()
}

// trusted reports whether addr is in Security.TrustedProxies.
func (g *guard) trusted(addr netip.Addr) bool {
	for _, p := range g.TrustedProxies {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

// peerAddress is the address of the connection's peer (the zero Addr when
// RemoteAddr is not an IP address and port).
func peerAddress(r *http.Request) netip.Addr {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	addr, _ := netip.ParseAddr(host)
	return addr.Unmap()
}
