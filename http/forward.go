package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"time"

	"github.com/julienschmidt/httprouter"

	"github.com/redis-stream-coordinator/coordinator/cluster"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/persistence"
)

// Headers of the coordinator cluster (docs/cluster.md).
const (
	// HeaderOwner is on every answer of a group's routes: the base URL
	// (scheme://host:port) of the coordinator that owns the group, or
	// should. A client that knows it sends the group's requests there.
	HeaderOwner = "X-Coordinator-Owner"
	// HeaderForwardedBy marks a request another coordinator forwarded
	// here: it is served here, never forwarded again.
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
// pooled connections.
type forwarder struct {
	api       *API
	cluster   Cluster
	proxy     *httputil.ReverseProxy
	forwarded func(reached bool)
}

func newForwarder(a *API, c Cluster, forwarded func(bool)) *forwarder {
	if forwarded == nil {
		forwarded = func(bool) {}
	}
	f := &forwarder{api: a, cluster: c, forwarded: forwarded}
	f.proxy = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			target := pr.In.Context().Value(targetKey{}).(*url.URL)
			pr.SetURL(target)
			pr.Out.URL.Path, pr.Out.URL.RawPath = pr.In.URL.Path, pr.In.URL.RawPath
			pr.Out.Host = pr.In.Host
			pr.SetXForwarded()
			pr.Out.Header.Set(HeaderForwardedBy, c.Self().ID)
		},
		Transport: &http.Transport{
			MaxIdleConns:        1024,
			MaxIdleConnsPerHost: 512,
			IdleConnTimeout:     90 * time.Second,
		},
		ModifyResponse: func(*http.Response) error { forwarded(true); return nil },
		ErrorHandler:   f.unreachable,
	}
	return f
}

// targetKey carries the owner's URL from wrap to Rewrite.
type targetKey struct{}

// heartbeatBody carries a buffered heartbeat body to unreachable.
type heartbeatBody struct{}

// ownerKey carries the owner's id to unreachable.
type ownerKey struct{}

// wrap is the outermost middleware of a group's routes.
func (f *forwarder) wrap(rt Route, next httprouter.Handle) httprouter.Handle {
	if !strings.Contains(rt.Template, "{streamPrefix}") {
		return next
	}
	heartbeat := strings.HasSuffix(rt.Template, "/heartbeat")
	return func(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
		self := f.cluster.Self()
		if by := r.Header.Get(HeaderForwardedBy); by != "" && !f.cluster.Leaving() {
			w.Header().Set(HeaderOwner, self.URL)
			next(w, r.WithContext(cluster.WithForwardedBy(r.Context(), by)), ps)
			return
		}
		owner, ok := f.cluster.Placed(ps.ByName("streamPrefix"))
		if !ok || owner.ID == self.ID {
			w.Header().Set(HeaderOwner, self.URL)
			next(w, r, ps)
			return
		}
		target, err := url.Parse(owner.URL)
		if err != nil {
			f.api.fail(w, r, err)
			return
		}
		ctx := r.Context()
		if heartbeat {
			body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, f.api.maxBody))
			if err != nil {
				f.api.fail(w, r, errPayloadTooLarge)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			r.ContentLength = int64(len(body))
			ctx = context.WithValue(ctx, heartbeatBody{}, body)
		}
		ctx = context.WithValue(ctx, ownerKey{}, owner.ID)
		f.proxy.ServeHTTP(w, r.WithContext(context.WithValue(ctx, targetKey{}, target)))
	}
}

// unreachable answers a request whose owner did not answer: a heartbeat
// gets status RETRY (never FENCED: the member keeps its lease and tries
// again), anything else 503 COORDINATOR_UNREACHABLE.
func (f *forwarder) unreachable(w http.ResponseWriter, r *http.Request, err error) {
	f.forwarded(false)
	f.api.log.Debug("forward to owner failed", "path", r.URL.Path, "err", err)
	if id, ok := r.Context().Value(ownerKey{}).(string); ok {
		f.cluster.Unreachable(id)
	}
	if body, ok := r.Context().Value(heartbeatBody{}).([]byte); ok {
		req := new(group.HeartbeatRequest)
		if json.Unmarshal(body, req) == nil {
			resp := group.RetryResponse(f.api.settings, req)
			writeHeartbeat(w, &resp)
			return
		}
	}
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
