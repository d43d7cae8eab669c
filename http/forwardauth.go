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
// sender's id (HeaderForwardedBy), when it signed (HeaderForwardedAt) and
// a signature (HeaderForwardSignature): an HMAC-SHA256 keyed by the
// sender's registry token over the request's method and URI, the
// receiving coordinator's id, that time, the sender's id and the SHA-256
// of the body. Both ends know the token: the registry lists it with every
// live coordinator. The token itself never travels. A receiver honours the
// mark only when the sender is a live coordinator of its last registry
// read, the time is within forwardWindow of its own clock and the
// signature holds; a captured request so cannot be replayed at another
// coordinator, with another method, URI or body, or after the window.
const (
	// HeaderForwardedAt is when the sender signed the mark, in Unix
	// seconds.
	HeaderForwardedAt = "X-Coordinator-Forwarded-At"
	// HeaderForwardSignature is the mark's HMAC-SHA256, base64url without
	// padding.
	HeaderForwardSignature = "X-Coordinator-Forward-Signature"
	// HeaderUnprovenMark names the coordinator that forwards a request
	// after removing a mark it could not prove (forwardedBy).
	// It can only keep a request from being forwarded again, so it needs
	// no proof of its own.
	HeaderUnprovenMark = "X-Coordinator-Unproven-Mark"

	// forwardWindow is how far a mark's time may lie from the receiver's
	// clock, either way.
	forwardWindow = 30 * time.Second
	// forwardMACVersion starts the signed text; a change of what is
	// signed changes it.
	forwardMACVersion = "rsc-forward-v1"
)

// forwardMAC is the signature, keyed by token, of a request (method,
// requestURI, the SHA-256 of its body) that sender forwards to receiver
// at Unix second at. The text signed is the fields, each followed by a
// newline (none of them can hold one: each is sent in a request line or
// header), then the body's digest.
func forwardMAC(token, method, requestURI, receiver, sender string, at int64, bodyDigest *[sha256.Size]byte) []byte {
	text := make([]byte, 0, len(forwardMACVersion)+len(method)+len(requestURI)+len(receiver)+len(sender)+64)
	for _, field := range [...]string{forwardMACVersion, method, requestURI, receiver, sender} {
		text = append(append(text, field...), '\n')
	}
	text = append(strconv.AppendInt(text, at, 10), '\n')
	text = append(text, bodyDigest[:]...)
	m := hmac.New(sha256.New, []byte(token))
	_, _ = m.Write(text)
	return m.Sum(nil)
}

// signForward sets h's mark: a request of method and requestURI whose
// body has bodyDigest, forwarded by self to coordinator receiver at now.
func signForward(h http.Header, method, requestURI string, self persistence.Coordinator, receiver string, now time.Time, bodyDigest *[sha256.Size]byte) {
	at := now.Unix()
	h.Set(HeaderForwardedBy, self.ID)
	h.Set(HeaderForwardedAt, strconv.FormatInt(at, 10))
	h.Set(HeaderForwardSignature, base64.RawURLEncoding.EncodeToString(forwardMAC(self.Token, method, requestURI, receiver, self.ID, at, bodyDigest)))
}

// clearMark removes h's mark.
func clearMark(h http.Header) {
	h.Del(HeaderForwardedBy)
	h.Del(HeaderForwardedAt)
	h.Del(HeaderForwardSignature)
}

// Why a mark is not honoured.
var (
	errMarkMalformed = errors.New("forwarded mark without a valid time or signature")
	errMarkStale     = errors.New("forwarded mark signed outside the accepted window")
	errMarkSender    = errors.New("forwarded mark names no live coordinator")
	errMarkSignature = errors.New("forwarded mark's signature does not match the request")
)

// forwardMark is a request's mark as far as it holds without the body:
// its sender is live (token is the sender's registry token) and its time
// is within the window. verify checks the rest.
type forwardMark struct {
	by, token string
	at        int64
	signature []byte
}

// readMark reads h's mark and checks it against the live coordinators at
// now: an error says why it cannot be honoured.
func readMark(h http.Header, live []persistence.Coordinator, now time.Time) (forwardMark, error) {
	m := forwardMark{by: h.Get(HeaderForwardedBy)}
	var err error
	if m.at, err = strconv.ParseInt(h.Get(HeaderForwardedAt), 10, 64); err != nil {
		return m, errMarkMalformed
	}
	if m.signature, err = base64.RawURLEncoding.DecodeString(h.Get(HeaderForwardSignature)); err != nil || len(m.signature) != sha256.Size {
		return m, errMarkMalformed
	}
	if d := now.Sub(time.Unix(m.at, 0)); d > forwardWindow || d < -forwardWindow {
		return m, errMarkStale
	}
	i := slices.IndexFunc(live, func(c persistence.Coordinator) bool { return c.ID == m.by })
	if m.by == "" || i < 0 || live[i].Token == "" {
		return m, errMarkSender
	}
	m.token = live[i].Token
	return m, nil
}

// verify checks that m signs a request of method and requestURI with body,
// sent to coordinator receiver.
func (m forwardMark) verify(method, requestURI, receiver string, body []byte) error {
	digest := sha256.Sum256(body)
	if !hmac.Equal(m.signature, forwardMAC(m.token, method, requestURI, receiver, m.by, m.at, &digest)) {
		return errMarkSignature
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
// (Mark.Again), so that two coordinators that cannot check each other's
// marks (a token not read yet, clocks apart) whose views of the placement
// differ do not send it back and forth. Proving a mark reads the body
// (replacing it with the bytes read; errPayloadTooLarge above the API's
// limit).
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
	m, err := readMark(r.Header, f.cluster.Live(), time.Now())
	clearMark(r.Header)
	if err == nil {
		var body []byte
		if body, err = f.bufferBody(w, r); err != nil {
			return forwarded{unproven: true}, err
		}
		err = m.verify(r.Method, r.RequestURI, f.cluster.Self().ID, body)
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
