package httpapi

import (
	"net/http"

	"github.com/julienschmidt/httprouter"
	"github.com/redis-stream-coordinator/coordinator/contract"
)

// benchNoopBody is the fixed answer of the no-op route.
var benchNoopBody = []byte(`{"status":"OK"}`)

// benchRoutes returns the routes of Options.BenchEndpoints (none when off):
// the no-op heartbeat route of the load harness (cmd/coord-bench,
// contract.BenchNoopTemplate), which access control (docs/protocol.md §1
// rule 2), drain and every middleware treat exactly as a heartbeat
// (RouteHeartbeat).
func (a *API) benchRoutes() []route {
	if !a.benchEndpoints {
		return nil
	}
	return []route{{Route{Method: http.MethodPost, Template: contract.BenchNoopTemplate}, a.benchNoop}}
}

// benchNoop is the denominator of the heartbeat benchmarks: the heartbeat
// route's stack (router, middlewares, body read, JSON decode and
// validation) without the actor. It answers a fixed small JSON body.
func (a *API) benchNoop(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	if _, _, err := a.heartbeatRequest(w, r, ps); err != nil {
		a.fail(w, r, err)
		return
	}
	w.Header()["Content-Type"] = jsonContentType
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(benchNoopBody)
}
