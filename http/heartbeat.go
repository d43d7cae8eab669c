package httpapi

import (
	"net/http"

	"github.com/julienschmidt/httprouter"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
)

// heartbeat serves #11, the hot path. Only docs/protocol.md §3 validation failures (and
// malformed or oversized bodies) answer 4xx; every protocol outcome is a
// heartbeat status in a 200 answer, and so is a failure that may pass
// (status RETRY, failHeartbeat). Other runtime failures (terminating, a
// corrupt group) map like any other error.
func (a *API) heartbeat(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	key, req, err := a.heartbeatRequest(w, r, ps)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	resp, err := a.runtime.Heartbeat(r.Context(), key, req)
	if err != nil {
		a.failHeartbeat(w, r, req, err)
		return
	}
	writeHeartbeat(w, &resp)
}

// heartbeatRequest reads and validates (docs/protocol.md §3) the group key, member id and
// body of a heartbeat. docs/protocol.md §4.2 step 2 (body memberId ≠ path M → status
// INVALID_REQUEST) is the domain's: the path's member id is passed on in
// PathMemberID.
func (a *API) heartbeatRequest(w http.ResponseWriter, r *http.Request, ps httprouter.Params) (group.Key, *contract.HeartbeatRequest, error) {
	key, err := pathKey(ps)
	member := ps.ByName("memberId")
	if err == nil {
		err = group.ValidateName("memberId", member)
	}
	req := new(contract.HeartbeatRequest)
	if err == nil {
		err = a.decodeBody(w, r, req)
	}
	if err == nil {
		err = group.ValidateHeartbeat(req, a.settings)
	}
	if err != nil {
		return group.Key{}, nil, err
	}
	req.PathMemberID = member
	return key, req, nil
}
