package httpapi

import (
	"context"
	"net/http"
	"slices"

	"github.com/julienschmidt/httprouter"

	"github.com/redis-stream-coordinator/coordinator/audit"
	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
)

// RecentMutationsLimit is how many audit events GET
// /monitoring/streams/{P}/groups/{G} shows.
const RecentMutationsLimit = 20

// audited is the audit middleware (docs/protocol.md §9.1). It wraps the
// routes with an audit action (contract.Route.Action: the Admin API
// mutations and login) when a sink is configured. Each request
// yields exactly one event, recorded after the answer whatever it was:
// the status and the error body's errorCode are captured from the
// response, the principal is added by authorize, the body fingerprint by
// readBody (so it stays null when the request was refused before the
// handler read the body), and a handler panic is recorded as ERROR with
// status 500 before the panic goes on to the router's panic handler.
func (g *guard) audited(rt Route, h httprouter.Handle) httprouter.Handle {
	if g.Audit == nil {
		return h
	}
	if rt.Action == "" {
		return h
	}
	return func(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
		target := audit.Target{Action: rt.Action, Route: rt.Template, StreamPrefix: ps.ByName("streamPrefix"),
			ConsumerGroup: ps.ByName("consumerGroup"), ReshardingID: ps.ByName("reshardingId")}
		ev := audit.NewEvent(r, g.coordinatorID, target, g.Now())
		rec := recorderFor(w)
		panicked := true
		defer func() {
			status, code := rec.answered(), rec.errorCode()
			if panicked {
				status, code = http.StatusInternalServerError, string(contract.CodeInternalError)
			}
			ev.Finish(status, panicked, code, g.Now())
			if err := g.Audit.Record(context.WithoutCancel(r.Context()), *ev); err != nil {
				g.log.Warn("recording audit event", "action", ev.Action, "path", ev.Path, "err", err)
			}
		}()
		h(rec, r.WithContext(audit.WithEvent(r.Context(), ev)), ps)
		panicked = false
	}
}

// recentMutations returns the latest audit events of the group and of its
// stream's stream-level actions (which affect every group of the stream),
// newest first, at most RecentMutationsLimit. Without a history, or when
// it fails (logged), the list is empty: monitoring does not depend on the
// audit sink.
func (a *API) recentMutations(ctx context.Context, key group.Key) []audit.Event {
	events := []audit.Event{}
	if a.guard == nil || a.guard.History == nil {
		return events
	}
	for _, g := range []string{key.ConsumerGroup, ""} {
		recent, err := a.guard.History.Recent(ctx, key.StreamPrefix, g, RecentMutationsLimit)
		if err != nil {
			a.log.Warn("reading recent mutations", "streamPrefix", key.StreamPrefix, "consumerGroup", g, "err", err)
			return []audit.Event{}
		}
		events = append(events, recent...)
	}
	slices.SortStableFunc(events, func(x, y audit.Event) int { return y.Timestamp.Compare(x.Timestamp) })
	return events[:min(len(events), RecentMutationsLimit)]
}
