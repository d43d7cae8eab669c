package httpapi

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis-stream-coordinator/coordinator/cluster"
	"github.com/redis-stream-coordinator/coordinator/persistence"
)

// A forwarded request's mark (docs/cluster.md, Trust model) is the
// sender's id (HeaderForwardedBy), when it signed (HeaderForwardedAt), the
// SHA-256 of the body it sends (HeaderForwardBodyDigest) and a signature
// (HeaderForwardSignature): an HMAC-SHA256 over the request's method and
// URI, the receiving coordinator's id, the sender's id, that time, the
// body's length (its Content-Length) and that digest, keyed by the key the
// two coordinators share (cluster.ForwardKeys: derived from their
// X25519 key pairs, whose public keys are their registry tokens; no
// secret is stored or sent). A receiver honours the mark only when the
// sender is a live coordinator of its last registry read, the time is
// within forwardWindow of its own clock and the signature holds; a
// captured request so cannot be replayed at another coordinator, with
// another method, URI or body, or after the window. The signature covers
// only what the request line and headers carry, so a receiver checks it
// before it reads a byte of the body, then checks the body it reads
// against the digest signed.
const (
	// HeaderForwardedAt is when the sender signed the mark, in Unix
	// seconds.
	HeaderForwardedAt = "X-Coordinator-Forwarded-At"
	// HeaderForwardBodyDigest is the SHA-256 of the body the sender sends,
	// base64url without padding; the signature covers it.
	HeaderForwardBodyDigest = "X-Coordinator-Forward-Body-Digest"
	// HeaderForwardSignature is the mark's HMAC-SHA256, base64url without
	// padding.
	HeaderForwardSignature = "X-Coordinator-Forward-Signature"
	// HeaderUnprovenMark names the coordinator that forwards a request
	// after removing a mark it could not prove (forwardedBy).
	// It can only keep a request from being forwarded again (a request
	// whose group is placed elsewhere is then refused), so it needs no
	// proof of its own.
	HeaderUnprovenMark = "X-Coordinator-Unproven-Mark"

	// forwardWindow is how far a mark's time may lie from the receiver's
	// clock, either way.
	forwardWindow = 30 * time.Second
	// forwardMACVersion starts the signed text; a change of what is
	// signed, or of the key, changes it.
	forwardMACVersion = "rsc-forward-v2"
)

// forwardMAC is the signature, keyed by key, of a request (method,
// requestURI, its body's length and SHA-256) that sender forwards to
// receiver at Unix second at. The text signed is the fields, each followed
// by a newline (none of them can hold one: each is sent in a request line
// or header), then the body's digest.
func forwardMAC(key []byte, method, requestURI, receiver, sender string, at, length int64, bodyDigest []byte) []byte {
	text := make([]byte, 0, len(forwardMACVersion)+len(method)+len(requestURI)+len(receiver)+len(sender)+96)
	for _, field := range [...]string{forwardMACVersion, method, requestURI, receiver, sender} {
		text = append(append(text, field...), '\n')
	}
	text = append(strconv.AppendInt(text, at, 10), '\n')
	text = append(strconv.AppendInt(text, length, 10), '\n')
	text = append(text, bodyDigest...)
	m := hmac.New(sha256.New, key)
	_, _ = m.Write(text)
	return m.Sum(nil)
}

// signForward sets h's mark: a request of method and requestURI whose
// body has length bytes and bodyDigest, forwarded by sender to coordinator
// receiver at now, signed with key (the key the two share: Cluster.ForwardKey).
func signForward(h http.Header, method, requestURI, sender string, key []byte, receiver string, now time.Time, length int64, bodyDigest *[sha256.Size]byte) {
	at := now.Unix()
	h.Set(HeaderForwardedBy, sender)
	h.Set(HeaderForwardedAt, strconv.FormatInt(at, 10))
	h.Set(HeaderForwardBodyDigest, base64.RawURLEncoding.EncodeToString(bodyDigest[:]))
	h.Set(HeaderForwardSignature, base64.RawURLEncoding.EncodeToString(forwardMAC(key, method, requestURI, receiver, sender, at, length, bodyDigest[:])))
}

// clearMark removes h's mark.
func clearMark(h http.Header) {
	h.Del(HeaderForwardedBy)
	h.Del(HeaderForwardedAt)
	h.Del(HeaderForwardBodyDigest)
	h.Del(HeaderForwardSignature)
}

// Why a mark is not honoured.
var (
	errMarkMalformed = errors.New("forwarded mark without a valid time, body digest or signature")
	errMarkStale     = errors.New("forwarded mark signed outside the accepted window")
	errMarkSender    = errors.New("forwarded mark names no live coordinator")
	errMarkSignature = errors.New("forwarded mark's signature does not match the request")
	errMarkBody      = errors.New("forwarded request's body is not the one its mark signs")
)

// forwardMark is a request's mark as far as it holds without checking
// the signature: its sender is live (key is the key this coordinator
// shares with it) and its time is within the window. verify checks the
// signature, checkBody the body.
type forwardMark struct {
	by        string
	key       []byte
	at        int64
	digest    []byte
	signature []byte
}

// readMark reads h's mark and checks it against the live coordinators at
// now, keyOf giving the key shared with one of them (nil: none): an error
// says why it cannot be honoured.
func readMark(h http.Header, live []persistence.Peer, keyOf func(persistence.Peer) []byte, now time.Time) (forwardMark, error) {
	m := forwardMark{by: h.Get(HeaderForwardedBy)}
	var err error
	if m.at, err = strconv.ParseInt(h.Get(HeaderForwardedAt), 10, 64); err != nil {
		return m, errMarkMalformed
	}
	if m.signature, err = base64.RawURLEncoding.DecodeString(h.Get(HeaderForwardSignature)); err != nil || len(m.signature) != sha256.Size {
		return m, errMarkMalformed
	}
	if m.digest, err = base64.RawURLEncoding.DecodeString(h.Get(HeaderForwardBodyDigest)); err != nil || len(m.digest) != sha256.Size {
		return m, errMarkMalformed
	}
	if d := now.Sub(time.Unix(m.at, 0)); d > forwardWindow || d < -forwardWindow {
		return m, errMarkStale
	}
	i := slices.IndexFunc(live, func(c persistence.Peer) bool { return c.ID == m.by })
	if m.by == "" || i < 0 {
		return m, errMarkSender
	}
	if m.key = keyOf(live[i]); m.key == nil {
		return m, errMarkSender
	}
	return m, nil
}

// verify checks that m signs a request of method and requestURI with a
// body of length bytes (a request's ContentLength: -1, unknown, matches
// no signature) and m's digest, sent to coordinator receiver. It reads
// nothing of the body.
func (m forwardMark) verify(method, requestURI, receiver string, length int64) error {
	if length < 0 || !hmac.Equal(m.signature, forwardMAC(m.key, method, requestURI, receiver, m.by, m.at, length, m.digest)) {
		return errMarkSignature
	}
	return nil
}

// checkBody checks that body is the one m's digest (which verify proved
// signed) names.
func (m forwardMark) checkBody(body []byte) error {
	digest := sha256.Sum256(body)
	if !hmac.Equal(m.digest, digest[:]) {
		return errMarkBody
	}
	return nil
}

// forwarded is what the edge knows of who forwarded a request: its mark
// as far as it holds (cluster.Mark: By only when a live coordinator proved
// it; forwardedBy and serveBatch are the only places that set it), and
// whether a mark without proof was removed from it (unproven: a forward
// of it then carries HeaderUnprovenMark).
type forwarded struct {
	mark     cluster.Mark
	unproven bool
}

// forwardedBy proves r's mark, if any, and removes it and
// HeaderUnprovenMark from r's header: nothing past this point reads them.
// A mark without proof is routed as a client's request; on a request that
// already carries HeaderUnprovenMark it is also not forwarded again
// (Mark.Again: served only if its group is placed here), so that two
// coordinators that cannot check each other's marks (a token not read
// yet, clocks apart) whose views of the placement differ do not send it
// back and forth. The signature is checked first, from the headers; only
// a mark whose signature holds has the body read (replacing it with the
// bytes read; errPayloadTooLarge above the API's limit) and checked
// against the digest signed.
func (f *forwarder) forwardedBy(w http.ResponseWriter, r *http.Request) (forwarded, error) {
	_, marked := r.Header[HeaderForwardedBy]
	_, again := r.Header[HeaderUnprovenMark]
	if !marked && !again {
		return forwarded{}, nil
	}
	r.Header.Del(HeaderUnprovenMark)
	if !marked {
		return forwarded{}, nil
	}
	m, err := readMark(r.Header, f.cluster.Live(), f.cluster.ForwardKey, time.Now())
	clearMark(r.Header)
	if err == nil {
		err = m.verify(r.Method, r.RequestURI, f.cluster.Self().ID, r.ContentLength)
	}
	if err == nil {
		var body []byte
		if body, err = f.bufferBody(w, r); err != nil {
			return forwarded{unproven: true}, err
		}
		err = m.checkBody(body)
	}
	if err == nil {
		return forwarded{mark: cluster.Mark{By: m.by}}, nil
	}
	f.api.log.Debug("forwarded mark not honoured", "path", r.URL.Path, "by", m.by, "err", err)
	return forwarded{mark: cluster.Mark{Again: again}, unproven: true}, nil
}

// readBody reads r's body, at most the API's limit (errPayloadTooLarge
// above it).
func (f *forwarder) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, f.api.maxBody))
	if _, tooLarge := errors.AsType[*http.MaxBytesError](err); tooLarge {
		return nil, errPayloadTooLarge
	}
	if err != nil {
		return nil, invalid("reading the body: %v", err)
	}
	return body, nil
}

// bufferBody reads r's body (readBody) and replaces it with the bytes
// read, for the handlers after it.
func (f *forwarder) bufferBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	body, err := f.readBody(w, r)
	if err != nil {
		return nil, err
	}
	r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	return body, nil
}

// trustForwarder makes r's client address the one the live coordinator
// that proved it forwarded r passed on: the last X-Forwarded-For entry
// (that coordinator appended it), which becomes r.RemoteAddr's host. The
// edge calls it for such a request only, before anything reads the
// address; on any other request the address stays the TCP peer's, as
// X-Forwarded-For is the client's to choose.
func trustForwarder(r *http.Request) {
	if xff := r.Header.Values("X-Forwarded-For"); len(xff) > 0 {
		last := xff[len(xff)-1]
		r.RemoteAddr = net.JoinHostPort(strings.TrimSpace(last[strings.LastIndexByte(last, ',')+1:]), "0")
	}
}

// clientAddress is r's client address as far as this coordinator can
// trust it (trustForwarder), which failed authentications count against
// and a forward passes on (forwardedFor): r.RemoteAddr's host.
func clientAddress(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// forwardedFor is the X-Forwarded-For a forward of r carries: r's own
// entries, then r's client address (clientAddress), last.
func forwardedFor(r *http.Request) string {
	addr := clientAddress(r)
	if prior := r.Header.Values("X-Forwarded-For"); len(prior) > 0 {
		return strings.Join(prior, ", ") + ", " + addr
	}
	return addr
}
