package httpapi

import (
	"strings"
	"testing"

	"github.com/julienschmidt/httprouter"

	"github.com/redis-stream-coordinator/coordinator/contract"
)

// TestRouteKinds: the middlewares see each route's kind, set from its
// contract template whatever the base path.
func TestRouteKinds(t *testing.T) {
	const base = "/api/v2"
	seen := map[string]RouteKind{}
	record := func(rt Route, next httprouter.Handle) httprouter.Handle {
		seen[rt.Method+" "+rt.Template] = rt.Kind
		return next
	}
	newTestAPI(&fakeCoord{}, func(o *Options) {
		o.BasePath = base
		o.BenchEndpoints = true
		o.Middleware = []Middleware{record}
	})
	want := map[string]RouteKind{
		"POST " + contract.HeartbeatTemplate:         RouteHeartbeat,
		"POST " + contract.BenchNoopTemplate:         RouteHeartbeat,
		"GET " + contract.GroupRouting:               RouteProducerRouting,
		"POST " + contract.StreamTemplate:            RouteGroup,
		"DELETE " + contract.GroupTemplate:           RouteGroup,
		"POST " + contract.GroupOffsetsReset:         RouteGroup,
		"GET " + contract.MonitoringMembers:          RouteGroup,
		"GET " + contract.MonitoringGroups:           RouteUnscoped,
		"GET " + contract.OpenAPITemplate:            RouteUnscoped,
		"GET " + contract.GrafanaPrefix + "/members": RouteUnscoped,
	}
	for route, kind := range want {
		method, template, _ := strings.Cut(route, " ")
		got, ok := seen[method+" "+base+template]
		if !ok || got != kind {
			t.Errorf("%s: kind %d (registered %v), want %d", route, got, ok, kind)
		}
	}
}
