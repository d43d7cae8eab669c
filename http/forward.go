package httpapi

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/julienschmidt/httprouter"

	"github.com/redis-stream-coordinator/coordinator/cluster"
	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/batchwire"
	"github.com/redis-stream-coordinator/coordinator/internal/workers"
	"github.com/redis-stream-coordinator/coordinator/persistence"
)

// Headers of the coordinator cluster (docs/cluster.md).
const (
	// HeaderOwner is on every answer of a group's routes: the base URL
	// (scheme://host:port) of the coordinator that owns the group, or
	// should. A client that knows it sends the group's requests there.
	HeaderOwner = "X-Coordinator-Owner"
	// HeaderForwardedBy names the coordinator that forwarded a request
	// here. With its proof (HeaderForwardedAt, HeaderForwardSignature:
	// forwardauth.go) the request is served here, as that coordinator
	// disclaims the group, and not forwarded again; without it the mark
	// is removed and the request routed as a client's (docs/cluster.md,
	// Trust model).
	HeaderForwardedBy = "X-Coordinator-Forwarded-By"
)

// Cluster is what the HTTP layer needs of the coordinator cluster
// (cluster.Node implements it).
type Cluster interface {
	// Self is this coordinator's registry entry.
	Self() persistence.Coordinator
	// Placed is the coordinator that should own the groups of a stream
	// prefix (false when none is live).
	Placed(prefix string) (persistence.Coordinator, bool)
	// Live is the live coordinators as last read.
	Live() []persistence.Coordinator
	// View is the body of GET /cluster.
	View(ctx context.Context) (cluster.View, error)
	// Leaving reports a graceful departure: this coordinator then forwards
	// even the requests forwarded to it.
	Leaving() bool
	// Unreachable reports that a coordinator did not answer a forward, so
	// that the live coordinators are read again at once.
	Unreachable(id string)
}

// clusterView serves GET /cluster.
func (a *API) clusterView(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	v, err := a.cluster.View(r.Context())
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// codeOwnerUnreachable answers a forwarded request whose owner did not
// answer.
const codeOwnerUnreachable = "COORDINATOR_UNREACHABLE"

// forwarder sends the requests of a group's routes (those with a
// {streamPrefix} parameter) to the coordinator the group is placed on,
// before anything else runs here (authentication, audit, rate limits and
// metrics run once, on the owner), with the original credentials, over
// pooled connections: heartbeats in batches (forward_batch.go), every
// other request through a reverse proxy.
type forwarder struct {
	api     *API
	cluster Cluster
	proxy   *httputil.ReverseProxy
	batches *batcher
	// itemWorkers serve the items of the batches forwarded here: each
	// waits for its group actor's answer, so each needs a goroutine of its
	// own, and a kept one has grown its stack through the heartbeat
	// route's handler chain already (a goroutine per item spent 7 % of an
	// owner's CPU growing stacks).
	itemWorkers *workers.Pool
	forwarded   func(reached bool)
	// heartbeats routes a forwarded heartbeat through the heartbeat
	// route's handler chain (set by New).
	heartbeats *httprouter.Router
}

func newForwarder(a *API, c Cluster, forwarded func(bool), peerTLS *tls.Config) *forwarder {
	if forwarded == nil {
		forwarded = func(bool) {}
	}
	// HTTP/1.1 only, https owners included: connections pooled per owner,
	// each batch in flight and proxied request on its own (as benchmarked),
	// rather than HTTP/2 streams sharing one connection.
	protocols := new(http.Protocols)
	protocols.SetHTTP1(true)
	transport := &http.Transport{
		MaxIdleConns:        1024,
		MaxIdleConnsPerHost: 512,
		IdleConnTimeout:     90 * time.Second,
		TLSClientConfig:     peerTLS,
		Protocols:           protocols,
	}
	f := &forwarder{api: a, cluster: c, forwarded: forwarded, itemWorkers: workers.New()}
	f.batches = &batcher{f: f, client: &http.Client{Transport: transport}, queues: map[string]*ownerQueue{}}
	f.proxy = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			to := pr.In.Context().Value(proxyKey{}).(*proxyTarget)
			pr.SetURL(to.url)
			pr.Out.URL.Path, pr.Out.URL.RawPath = pr.In.URL.Path, pr.In.URL.RawPath
			pr.Out.Host = pr.In.Host
			pr.SetXForwarded()
			pr.Out.Header.Set("X-Forwarded-For", forwardedFor(pr.In))
			self := c.Self()
			signForward(pr.Out.Header, pr.Out.Method, pr.Out.URL.RequestURI(), self, to.owner, time.Now(), &to.bodyDigest)
			if to.unproven {
				pr.Out.Header.Set(HeaderUnprovenMark, self.ID)
			}
		},
		Transport:      transport,
		BufferPool:     copyBuffers{},
		ModifyResponse: func(*http.Response) error { forwarded(true); return nil },
		ErrorHandler:   f.unreachable,
	}
	return f
}

// copyBuffers lends the proxy the buffers it copies answers through
// (without a pool it allocates and clears 32 KiB per request).
type copyBuffers struct{}

// copyBufferSize holds a whole answer of a group's routes but the largest.
const copyBufferSize = 8 << 10

var copyBufferPool = sync.Pool{New: func() any { return new([copyBufferSize]byte) }}

func (copyBuffers) Get() []byte { return copyBufferPool.Get().(*[copyBufferSize]byte)[:] }

func (copyBuffers) Put(b []byte) {
	if cap(b) == copyBufferSize {
		copyBufferPool.Put((*[copyBufferSize]byte)(b[:copyBufferSize]))
	}
}

// proxyKey carries a proxied request's proxyTarget from wrap to Rewrite
// and unreachable.
type proxyKey struct{}

// proxyTarget is where a proxied request goes: the owner's URL and id,
// the SHA-256 of the request's body, which the mark signs, and whether the
// request came with a mark that had no proof (HeaderUnprovenMark).
type proxyTarget struct {
	url        *url.URL
	owner      string
	bodyDigest [sha256.Size]byte
	unproven   bool
}

// wrap is the outermost middleware of a group's routes.
func (f *forwarder) wrap(rt Route, next httprouter.Handle) httprouter.Handle {
	if !strings.Contains(rt.Template, "{streamPrefix}") {
		return next
	}
	heartbeat := strings.HasSuffix(rt.Template, "/heartbeat")
	return func(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
		by, mark, err := f.forwardedBy(w, r)
		if err != nil {
			f.api.fail(w, r, err)
			return
		}
		self := f.cluster.Self()
		if mark == proven {
			r = r.WithContext(cluster.WithForwardedBy(r.Context(), by))
			if !f.cluster.Leaving() {
				w.Header().Set(HeaderOwner, self.URL)
				next(w, r, ps)
				return
			}
		}
		owner, ok := f.cluster.Placed(ps.ByName("streamPrefix"))
		if !ok {
			owner = self
		}
		if owner.ID == self.ID || mark == unprovenAgain {
			w.Header().Set(HeaderOwner, owner.URL)
			next(w, r, ps)
			return
		}
		if heartbeat {
			f.heartbeat(w, r, owner)
			return
		}
		target, err := url.Parse(owner.URL)
		if err != nil {
			f.api.fail(w, r, err)
			return
		}
		body, err := f.bufferBody(w, r)
		if err != nil {
			f.api.fail(w, r, err)
			return
		}
		to := &proxyTarget{url: target, owner: owner.ID, bodyDigest: sha256.Sum256(body), unproven: mark == unproven}
		f.proxy.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), proxyKey{}, to)))
	}
}

// heartbeat forwards a heartbeat to owner in a batch and writes the
// owner's answer. A heartbeat whose owner did not answer, or refused the
// batch, gets status RETRY (never FENCED: the member keeps its lease and
// tries again).
func (f *forwarder) heartbeat(w http.ResponseWriter, r *http.Request, owner persistence.Coordinator) {
	body, err := f.readBody(w, r)
	if err != nil {
		f.api.fail(w, r, err)
		return
	}
	r.Header.Set("X-Forwarded-For", forwardedFor(r))
	item := batchwire.AppendItem(make([]byte, 0, len(body)+512), r.URL.RequestURI(), r.Header, body)
	a, ok := f.batches.forward(r.Context(), owner, item)
	switch {
	case !ok: // the member is gone
	case a == nil:
		req := new(contract.HeartbeatRequest)
		if json.Unmarshal(body, req) != nil {
			f.ownerUnreachable(w)
			return
		}
		resp := group.RetryResponse(f.api.settings, req)
		writeHeartbeat(w, &resp)
	default:
		for k, v := range a.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(a.Status)
		_, _ = w.Write(a.Body)
	}
}

// unreachable answers a proxied request whose owner did not answer: 503
// COORDINATOR_UNREACHABLE.
func (f *forwarder) unreachable(w http.ResponseWriter, r *http.Request, err error) {
	f.forwarded(false)
	f.api.log.Debug("forward to owner failed", "path", r.URL.Path, "err", err)
	if to, ok := r.Context().Value(proxyKey{}).(*proxyTarget); ok {
		f.cluster.Unreachable(to.owner)
	}
	f.ownerUnreachable(w)
}

// ownerUnreachable writes 503 COORDINATOR_UNREACHABLE.
func (f *forwarder) ownerUnreachable(w http.ResponseWriter) {
	w.Header().Set("Retry-After", "1")
	writeError(w, http.StatusServiceUnavailable, codeOwnerUnreachable, "The coordinator that owns this group did not answer; retry the request")
}

// ownerHint sets HeaderOwner (and Retry-After) from a refusal naming the
// group's owner.
func ownerHint(w http.ResponseWriter, err error) {
	if no, ok := errors.AsType[*cluster.NotOwnerError](err); ok && no.Owner.URL != "" {
		w.Header().Set(HeaderOwner, no.Owner.URL)
	}
}
