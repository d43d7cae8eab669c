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
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/julienschmidt/httprouter"
	"golang.org/x/sync/semaphore"

	"github.com/redis-stream-coordinator/coordinator/cluster"
	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/batchwire"
	"github.com/redis-stream-coordinator/coordinator/internal/workers"
	"github.com/redis-stream-coordinator/coordinator/persistence"
)

// HeaderForwardedBy names the coordinator that forwarded a request here
// (docs/cluster.md; the owner's header is contract.OwnerHeader). With its
// proof (HeaderForwardedAt, HeaderForwardSignature: forwardauth.go) the
// request is served here, as that coordinator disclaims the group, and not
// forwarded again; without it the mark is removed and the request routed
// as a client's (docs/cluster.md, Trust model).
const HeaderForwardedBy = "X-Coordinator-Forwarded-By"

// Cluster is what the HTTP layer needs of the coordinator cluster
// (cluster.Node implements it).
type Cluster interface {
	// Self is this coordinator's registry entry.
	Self() persistence.Peer
	// Route decides where a request of a group is served (here, at the
	// coordinator it is placed on, or nowhere for now), given what its
	// mark proved. The edge (wrap) asks once per request.
	Route(key group.Key, m cluster.Mark) cluster.Route
	// Live is the live coordinators as last read.
	Live() []persistence.Peer
	// View is the body of GET /cluster.
	View(ctx context.Context) (contract.ClusterView, error)
	// Leaving reports a graceful departure (its refusals are answered as
	// owned elsewhere).
	Leaving() bool
	// Unreachable reports that a coordinator did not answer a forward, so
	// that the live coordinators are read again at once.
	Unreachable(id string)
	// ForwardKey is the key of the marks of requests forwarded between
	// this coordinator and peer, a live coordinator as last read (nil:
	// none; cluster.ForwardKeys).
	ForwardKey(peer persistence.Peer) []byte
	// ForwardRefused reports a request not forwarded to peer, the
	// coordinator it is placed on, for cause (cluster.InsecurePeer): it is
	// logged once per peer, counted, and shown by View.
	ForwardRefused(peer persistence.Peer, cause string)
}

// clusterView serves GET /cluster, its groups and handovers only those
// the caller may describe (visible). While this coordinator serves TLS
// every other coordinator that advertises a URL that is not https is
// shown refused as a forwarding target (forwardingRefused), whether or
// not a request was refused yet.
func (a *API) clusterView(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	v, err := a.cluster.View(r.Context())
	if err != nil {
		a.fail(w, r, err)
		return
	}
	v.Groups = slices.DeleteFunc(v.Groups, func(g contract.ClusterGroup) bool {
		return !visible(r.Context(), group.Key{StreamPrefix: g.StreamPrefix, ConsumerGroup: g.ConsumerGroup})
	})
	v.Handovers = slices.DeleteFunc(v.Handovers, func(h contract.Handover) bool {
		return !visible(r.Context(), group.Key{StreamPrefix: h.StreamPrefix, ConsumerGroup: h.ConsumerGroup})
	})
	self := a.cluster.Self()
	if servesTLS(r, self) {
		for i, c := range v.Coordinators {
			if c.ID != self.ID && c.ForwardingRefused == "" && !isHTTPS(c.URL) {
				v.Coordinators[i].ForwardingRefused = cluster.InsecurePeer
			}
		}
	}
	writeJSON(w, http.StatusOK, v)
}

// servesTLS reports whether this coordinator (self) serves TLS, as far as
// r shows: r came over TLS, or self advertises an https URL (the default
// advertise-url with server.tls). Then no request is forwarded over
// plain http: the client's credentials would travel in clear.
func servesTLS(r *http.Request, self persistence.Peer) bool {
	return r.TLS != nil || isHTTPS(self.URL)
}

// isHTTPS reports whether rawURL's scheme is https.
func isHTTPS(rawURL string) bool {
	u, err := url.Parse(rawURL)
	return err == nil && strings.EqualFold(u.Scheme, "https") && u.Host != ""
}

// forwarder is the edge of a group's routes (those with a {streamPrefix}
// parameter): before anything else runs here it proves the request's
// forwarded mark (forwardauth.go), takes the routing decision
// (Cluster.Route) once, and serves the request here, refuses it, or sends
// it to the coordinator the group is placed on, with the original
// credentials, over pooled connections: heartbeats in batches
// (forward_batch.go), every other request through a reverse proxy. The
// route's middleware chain (authentication, audit, rate limits, metrics)
// so runs once per request, on the coordinator that serves it.
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
	// batchReads bounds the bytes of the batch bodies being read at once
	// (serveBatch), batchReadFactor batches of the largest size.
	batchReads *semaphore.Weighted
	forwarded  func(reached bool)
	// heartbeats finds the heartbeat route's handler chain, inside the
	// edge, for the items of a batch (wrap registers the route whose
	// template is heartbeatTemplate).
	heartbeats        *httprouter.Router
	heartbeatTemplate string
}

func newForwarder(a *API, c Cluster, forwarded func(bool), peerTLS *tls.Config, base string) *forwarder {
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
	f := &forwarder{api: a, cluster: c, forwarded: forwarded, itemWorkers: workers.New(), heartbeats: a.newRouter(), heartbeatTemplate: base + contract.HeartbeatTemplate,
		batchReads: semaphore.NewWeighted(batchReadFactor * batchBodyFactor * a.maxBody)}
	f.batches = &batcher{f: f, client: &http.Client{Transport: transport}, queues: map[string]*ownerQueue{}}
	f.proxy = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			to := pr.In.Context().Value(proxyKey{}).(*proxyTarget)
			pr.SetURL(to.url)
			pr.Out.URL.Path, pr.Out.URL.RawPath = pr.In.URL.Path, pr.In.URL.RawPath
			pr.Out.Host = pr.In.Host
			pr.SetXForwarded()
			pr.Out.Header.Set("X-Forwarded-For", forwardedFor(pr.In))
			if to.key != nil { // none: the owner's token is no public key (an older release); the request goes unmarked
				signForward(pr.Out.Header, pr.Out.Method, pr.Out.URL.RequestURI(), to.self, to.key, to.owner, time.Now(), to.length, &to.bodyDigest)
			}
			if to.unproven {
				pr.Out.Header.Set(HeaderUnprovenMark, to.self)
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
// the sender's id (self) and the key the mark is signed with, the length
// and SHA-256 of the request's body, which the mark signs, and whether
// the request came with a mark that had no proof (HeaderUnprovenMark).
type proxyTarget struct {
	url        *url.URL
	owner      string
	self       string
	key        []byte
	length     int64
	bodyDigest [sha256.Size]byte
	unproven   bool
}

// wrap is the outermost middleware of a group's routes: the edge. It
// registers the heartbeat route's chain (next) for the items of batches;
// a heartbeat (or the load harness's no-op one) is forwarded in a batch.
func (f *forwarder) wrap(rt Route, next httprouter.Handle) httprouter.Handle {
	if !rt.Kind.Scoped() {
		return next
	}
	heartbeat := rt.Kind == RouteHeartbeat
	if rt.Template == f.heartbeatTemplate {
		f.heartbeats.Handle(rt.Method, routerPath(rt.Template), next)
	}
	return func(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
		from, err := f.forwardedBy(w, r)
		if err != nil {
			f.api.fail(w, r, err)
			return
		}
		f.route(w, r, ps, from, heartbeat, next)
	}
}

// route takes the routing decision for r, which from says who forwarded,
// and acts on it: next serves a Local request, a Forward goes to the
// owner, a Refuse is answered here (a heartbeat with RETRY once its
// request is valid). The answer of a Local or refused request names the
// owner (contract.OwnerHeader) the decision found, unless the refusal
// knows of none; a forwarded request's answer is the owner's, with its
// header.
func (f *forwarder) route(w http.ResponseWriter, r *http.Request, ps httprouter.Params, from forwarded, heartbeat bool, next httprouter.Handle) {
	key := group.Key{StreamPrefix: ps.ByName("streamPrefix"), ConsumerGroup: ps.ByName("consumerGroup")}
	if from.mark.By != "" {
		trustForwarder(r)
	}
	to := f.cluster.Route(key, from.mark)
	switch to.Decision {
	case cluster.Local:
		w.Header().Set(contract.OwnerHeader, to.Owner.URL)
		next(w, r, ps)
	case cluster.Refuse:
		w.Header().Set(contract.OwnerHeader, to.Owner.URL)
		if !heartbeat {
			f.api.fail(w, r, to.Reason)
			return
		}
		_, req, err := f.api.heartbeatRequest(w, r, ps)
		if err != nil {
			f.api.fail(w, r, err)
			return
		}
		f.api.failHeartbeat(w, r, req, to.Reason)
	case cluster.Forward:
		self := f.cluster.Self()
		if servesTLS(r, self) && !isHTTPS(to.Owner.URL) {
			f.refuseInsecure(w, r, ps, heartbeat, to.Owner)
			return
		}
		if heartbeat {
			f.heartbeat(w, r, to.Owner)
			return
		}
		target, err := url.Parse(to.Owner.URL)
		if err != nil {
			f.api.fail(w, r, err)
			return
		}
		body, err := f.bufferBody(w, r)
		if err != nil {
			f.api.fail(w, r, err)
			return
		}
		pt := &proxyTarget{url: target, owner: to.Owner.ID, self: self.ID, key: f.cluster.ForwardKey(to.Owner),
			length: int64(len(body)), bodyDigest: sha256.Sum256(body), unproven: from.unproven}
		f.proxy.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), proxyKey{}, pt)))
	}
}

// refuseInsecure answers r, which would be forwarded to owner over plain
// http while this coordinator serves TLS, without forwarding it (the
// client's credentials would travel in clear): a heartbeat (once its
// request is valid) RETRY, any other request 503 COORDINATOR_UNREACHABLE
// with Retry-After, neither naming the owner (a client that follows
// X-Coordinator-Owner would send its credentials there in clear). The
// refusal is reported (Cluster.ForwardRefused: logged once per peer,
// counted, shown by GET /cluster).
func (f *forwarder) refuseInsecure(w http.ResponseWriter, r *http.Request, ps httprouter.Params, heartbeat bool, owner persistence.Peer) {
	f.cluster.ForwardRefused(owner, cluster.InsecurePeer)
	if heartbeat {
		_, req, err := f.api.heartbeatRequest(w, r, ps)
		if err != nil {
			f.api.fail(w, r, err)
			return
		}
		f.api.failHeartbeat(w, r, req, errOwnerUnreachable)
		return
	}
	w.Header().Set("Retry-After", "1")
	writeError(w, http.StatusServiceUnavailable, string(contract.CodeCoordinatorUnreachable), msgInsecurePeer)
}

// msgInsecurePeer is the message of a request refused by refuseInsecure.
const msgInsecurePeer = "The coordinator that owns this group advertises a plain http URL and this coordinator serves TLS: " +
	"the request is not forwarded there, as its credentials would travel in clear (that coordinator's " +
	"coordinator.cluster.advertise-url must be https); retry the request"

// heartbeat forwards a heartbeat to owner in a batch and writes the
// owner's answer. A heartbeat whose owner did not answer, or refused the
// batch, gets status RETRY (never FENCED: the member keeps its lease and
// tries again).
func (f *forwarder) heartbeat(w http.ResponseWriter, r *http.Request, owner persistence.Peer) {
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
			f.api.fail(w, r, errOwnerUnreachable)
			return
		}
		f.api.failHeartbeat(w, r, req, errOwnerUnreachable)
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
	f.api.fail(w, r, errOwnerUnreachable)
}

// errOwnerUnreachable: the coordinator a request was forwarded to did not
// answer (or refused the batch).
var errOwnerUnreachable = errors.New("the group's owner did not answer the forward")
