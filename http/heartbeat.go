package httpapi

import (
	"net/http"

	"github.com/julienschmidt/httprouter"

	"github.com/redis-stream-coordinator/coordinator/group"
)

// heartbeat serves #11, the hot path. Only §3 validation failures (and
// malformed or oversized bodies) answer 4xx; every protocol outcome is a
// heartbeat status in a 200 answer. Runtime failures (terminating, state
// conflicts, mutex timeouts) map like any other error.
func (a *API) heartbeat(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	key, err := pathKey(ps)
	member := ps.ByName("memberId")
	if err == nil {
		err = group.ValidateName("memberId", member)
	}
	req := new(group.HeartbeatRequest)
	if err == nil {
		err = a.decodeBody(w, r, req)
	}
	if err == nil {
		err = group.ValidateHeartbeat(req, a.settings)
	}
	if err != nil {
		a.fail(w, r, err)
		return
	}
	// §4.2 step 2 (body memberId ≠ path M → INVALID_REQUEST status) is
	// the domain's; it needs the path's member id.
	req.PathMemberID = member
	resp, err := a.coord.Heartbeat(r.Context(), key, req)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resp)
}
