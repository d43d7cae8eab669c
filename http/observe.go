package httpapi

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/julienschmidt/httprouter"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/observe"
)

// KnownMetadataVersionParam is the optional query parameter of the producer
// routing read in which a producer names the metadataVersion it holds; a
// read whose known version is older than the one served is a stale routing
// refresh (observe.RequestObserver.RoutingServed).
const KnownMetadataVersionParam = "knownMetadataVersion"

// ObserveRequests is the Middleware reporting every request to o. Put it
// first in Options.Middleware, so that requests refused by the other
// middlewares (401, 403, 429) are reported too. On the producer routing
// route it also passes the request's knownMetadataVersion to the
// coordinator returned by ObserveRuntime.
func ObserveRequests(o observe.RequestObserver) Middleware {
	return func(rt Route, next httprouter.Handle) httprouter.Handle {
		routing := rt.Kind == RouteProducerRouting
		return func(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
			start := time.Now()
			rec := recorderFor(w)
			served := observe.ServedRequest{Method: rt.Method, Template: rt.Template, Action: rt.Action,
				StreamPrefix: ps.ByName("streamPrefix"), ConsumerGroup: ps.ByName("consumerGroup")}
			if routing {
				if v, err := strconv.ParseInt(r.URL.Query().Get(KnownMetadataVersionParam), 10, 64); err == nil {
					r = r.WithContext(context.WithValue(r.Context(), knownVersionKey{}, v))
				}
			}
			defer func() {
				if p := recover(); p != nil {
					served.Status, served.Panicked, served.Duration = http.StatusInternalServerError, true, time.Since(start)
					o.RequestServed(served)
					panic(p)
				}
			}()
			next(rec, r, ps)
			served.Status, served.Duration = rec.answered(), time.Since(start)
			o.RequestServed(served)
		}
	}
}

// ObserveRuntime returns c reporting heartbeat statuses, producer
// routing reads and scale requests to o; every other call passes through.
func ObserveRuntime(c Runtime, o observe.RequestObserver) Runtime {
	return observedRuntime{Runtime: c, o: o}
}

type observedRuntime struct {
	Runtime
	o observe.RequestObserver
}

func (c observedRuntime) Heartbeat(ctx context.Context, key group.Key, req *contract.HeartbeatRequest) (contract.HeartbeatResponse, error) {
	resp, err := c.Runtime.Heartbeat(ctx, key, req)
	switch {
	case err == nil:
		c.o.HeartbeatHandled(key, resp.Status)
	case errors.Is(err, contract.ErrShed), errors.Is(err, contract.ErrNotStored):
		c.o.HeartbeatHandled(key, contract.StatusRetry)
	}
	return resp, err
}

func (c observedRuntime) Routing(ctx context.Context, key group.Key) (group.Routing, error) {
	routing, err := c.Runtime.Routing(ctx, key)
	known, ok := ctx.Value(knownVersionKey{}).(int64)
	c.o.RoutingServed(key, err == nil && ok && known < routing.MetadataVersion, err)
	return routing, err
}

func (c observedRuntime) ScaleGroup(ctx context.Context, key group.Key, req contract.ScaleRequest) (group.Migration, error) {
	m, err := c.Runtime.ScaleGroup(ctx, key, req)
	c.o.ScaleServed(key, err == nil && m.ReshardingID == group.NoopMigrationID, err)
	return m, err
}

func (c observedRuntime) ScaleStream(ctx context.Context, prefix string, req contract.ScaleRequest) (group.StreamScale, error) {
	s, err := c.Runtime.ScaleStream(ctx, prefix, req)
	if err != nil {
		c.o.ScaleServed(group.Key{StreamPrefix: prefix}, false, err)
		return s, err
	}
	for i, g := range s.AffectedConsumerGroups {
		c.o.ScaleServed(group.Key{StreamPrefix: prefix, ConsumerGroup: g}, s.Migrations[i].ReshardingID == group.NoopMigrationID, nil)
	}
	return s, err
}

// knownVersionKey is the context key of the request's knownMetadataVersion.
type knownVersionKey struct{}
