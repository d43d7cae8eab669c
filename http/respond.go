package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"

	"github.com/redis-stream-coordinator/coordinator/audit"
	"github.com/redis-stream-coordinator/coordinator/cluster"
	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/persistence"
)

// jsonContentType is shared by every response; net/http never modifies it.
var jsonContentType = []string{"application/json"}

// writeJSON writes v as the JSON response body with the given status. The
// values this package writes always encode; a failure is a broken invariant
// and panics (answered with 500 by the recover handler).
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("httpapi: encoding %T: %v", v, err))
	}
	w.Header()["Content-Type"] = jsonContentType
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// writeError writes the docs/protocol.md §0 error body.
func writeError(w http.ResponseWriter, status int, code, message string) {
	writeJSON(w, status, contract.ErrorBody{Status: contract.StatusName(status), ErrorCode: contract.Code(code), Message: message})
}

// msgInternal is the message of an unexpected failure.
const msgInternal = "Internal coordinator error"

// msgRedisNotConfigured answers a request that needs Redis on a
// coordinator that has none: it names the settings that turn Redis on.
const msgRedisNotConfigured = "Redis is not configured: this coordinator runs without Redis, so it cannot read or change the streams (offsets, messages, dead letters). It uses Redis when store.type is redis (COORDINATOR_STORE_TYPE=redis), audit.sink is redis, or streams.provisioning-enabled is true, at redis.host and redis.port (or redis.cluster-nodes); change the configuration and restart the coordinator"

// errPayloadTooLarge is returned by decodeBody for bodies over the limit.
var errPayloadTooLarge = errors.New("request body too large")

// errLeaving marks a cluster.ErrNotServing of a coordinator that is
// leaving the cluster: the group is another coordinator's now.
var errLeaving = errors.New("coordinator leaving the cluster")

// answer is how a request that did not succeed is answered: its status,
// error code and message, and what the answer says about a retry. The
// message is fixed (the wrapped text may name internals and is logged
// instead), except a domain error's, which is its own ("" here).
type answer struct {
	status  int
	code    contract.Code
	message string
	// retryAfter: the request may succeed as it is once the group's owner
	// is settled or the coordinator can take it again. The error answer
	// carries Retry-After: 1; a heartbeat is answered 200 with status
	// RETRY instead (failHeartbeat), without Retry-After: the member keeps
	// its lease and sends it again one heartbeat interval later.
	retryAfter bool
	// owner is what the answer says in X-Coordinator-Owner.
	owner ownerHint
}

// ownerHint is what an answer's X-Coordinator-Owner says.
type ownerHint uint8

const (
	// ownerAsRouted: the coordinator the edge routed the request to, as
	// the edge set it.
	ownerAsRouted ownerHint = iota
	// ownerNamed: the owner the refusal names (*cluster.NotOwnerError).
	ownerNamed
	// ownerNone: none; no coordinator is known to serve the group now.
	ownerNone
)

// notOwnerKey keys the row of *cluster.NotOwnerError, matched by type.
var notOwnerKey = new(cluster.NotOwnerError)

// outcomes is the one table of answers to failures (docs/protocol.md §0,
// docs/cluster.md): an error is answered by the first row it matches.
// A row's key is a domain error code (a *group.Error with that code), a
// store outcome (persistence.Classify), notOwnerKey, or an error class
// (errors.Is). Cluster refusals come before the store outcomes (they
// match persistence.ErrNotOwner, the Deposed outcome, too), the heartbeats
// not served before the store outcomes and the runtime's errors (a shed
// heartbeat's error may be context.DeadlineExceeded too, a not stored
// one's has its store outcome), and the store outcomes before the
// runtime's errors. An error no row matches is
// answered as persistence.Unknown. The rows with retryAfter are the
// outcomes a heartbeat is answered RETRY for (failHeartbeat).
// TestEveryOutcomeHasARow walks every outcome the coordinator has.
var outcomes = []struct {
	key any
	answer
}{
	// Domain refusals: the request as sent fails again.
	{contract.CodeInvalidRequest, answer{status: http.StatusBadRequest, code: contract.CodeInvalidRequest}},
	{contract.CodeGroupNotFound, answer{status: http.StatusNotFound, code: contract.CodeGroupNotFound}},
	{contract.CodeStreamNotFound, answer{status: http.StatusNotFound, code: contract.CodeStreamNotFound}},
	{contract.CodeMigrationNotFound, answer{status: http.StatusNotFound, code: contract.CodeMigrationNotFound}},
	{contract.CodeGroupAlreadyExists, answer{status: http.StatusConflict, code: contract.CodeGroupAlreadyExists}},
	{contract.CodeStreamPrefixAlreadyExists, answer{status: http.StatusConflict, code: contract.CodeStreamPrefixAlreadyExists}},
	{contract.CodeGroupHasActiveMembers, answer{status: http.StatusConflict, code: contract.CodeGroupHasActiveMembers}},
	{contract.CodeActiveMigrationExists, answer{status: http.StatusConflict, code: contract.CodeActiveMigrationExists}},
	{contract.CodeMetadataSyncInProgress, answer{status: http.StatusConflict, code: contract.CodeMetadataSyncInProgress}},
	{contract.CodeRollbackNotAllowed, answer{status: http.StatusUnprocessableEntity, code: contract.CodeRollbackNotAllowed}},
	{contract.CodeGroupLimitReached, answer{status: http.StatusConflict, code: contract.CodeGroupLimitReached}},
	{contract.CodeDeadLetterNotFound, answer{status: http.StatusNotFound, code: contract.CodeDeadLetterNotFound}},
	{contract.CodeDeadLetterNotRedrivable, answer{status: http.StatusUnprocessableEntity, code: contract.CodeDeadLetterNotRedrivable}},
	{contract.CodeDeadLetterOfAnotherGroup, answer{status: http.StatusConflict, code: contract.CodeDeadLetterOfAnotherGroup}},
	{contract.CodeResetInProgress, answer{status: http.StatusConflict, code: contract.CodeResetInProgress}},
	{contract.CodeResetNotFound, answer{status: http.StatusNotFound, code: contract.CodeResetNotFound}},

	// Cluster refusals: another coordinator serves the group, or none
	// does for now; nothing ran here.
	{errLeaving, answer{http.StatusServiceUnavailable, contract.CodeGroupOwnedElsewhere, "This coordinator is leaving the cluster and hands its groups over; retry the request", true, ownerNone}},
	{cluster.ErrNotServing, answer{http.StatusServiceUnavailable, contract.CodeCoordinatorNotServing, "This coordinator is not serving yet (it is registering in the cluster, or its registry lease lapsed); retry the request", true, ownerNone}},
	{notOwnerKey, answer{http.StatusServiceUnavailable, contract.CodeGroupOwnedElsewhere, "Another coordinator owns this group now; retry the request (X-Coordinator-Owner names it)", true, ownerNamed}},
	{errOwnerUnreachable, answer{http.StatusServiceUnavailable, contract.CodeCoordinatorUnreachable, "The coordinator that owns this group did not answer; retry the request", true, ownerAsRouted}},

	// Heartbeats this coordinator could not serve now (only heartbeats end
	// so): shed under load, or not stored by a store that may recover.
	{contract.ErrShed, answer{http.StatusServiceUnavailable, contract.CodeRequestTimeout, "Coordinator is overloaded and did not take the request; retry the request", true, ownerAsRouted}},
	{contract.ErrNotStored, answer{http.StatusServiceUnavailable, contract.CodeStoreUnavailable, "Metadata store did not store the change; retry the request", true, ownerAsRouted}},

	// Store outcomes that end a request on their own.
	{persistence.Deposed, answer{http.StatusServiceUnavailable, contract.CodeGroupOwnedElsewhere, "Another coordinator took this group over; nothing was written, retry the request", true, ownerAsRouted}},
	{persistence.Busy, answer{http.StatusServiceUnavailable, contract.CodeCoordinatorStateMutexUnavailable, "Coordinator state mutex is unavailable", false, ownerAsRouted}},
	{persistence.Unavailable, answer{http.StatusServiceUnavailable, contract.CodeStoreUnavailable, "Metadata store is unavailable", false, ownerAsRouted}},
	{persistence.Corrupt, answer{http.StatusInternalServerError, contract.CodeGroupMetadataCorrupt, "Stored group metadata is corrupt", false, ownerAsRouted}},

	// The runtime's and this layer's failures.
	{errPayloadTooLarge, answer{http.StatusRequestEntityTooLarge, contract.CodePayloadTooLarge, "Request body exceeds the size limit", false, ownerAsRouted}},
	{contract.ErrStateConflict, answer{http.StatusConflict, contract.CodeStateVersionConflict, "Group state changed concurrently; retry the request", false, ownerAsRouted}},
	{contract.ErrTerminating, answer{http.StatusServiceUnavailable, contract.CodeCoordinatorTerminating, "Coordinator is terminating", false, ownerAsRouted}},
	{contract.ErrOutcomeUnknown, answer{http.StatusServiceUnavailable, contract.CodeStoreOutcomeUnknown, "Metadata store did not confirm the write; retry the request", false, ownerAsRouted}},
	{contract.ErrProvisioning, answer{http.StatusServiceUnavailable, contract.CodeRedisStreamProvisioningFailed, "Redis stream provisioning failed", false, ownerAsRouted}},
	{errRedisNotConfigured, answer{http.StatusServiceUnavailable, contract.CodeRedisNotConfigured, msgRedisNotConfigured, false, ownerAsRouted}},
	{contract.ErrDataPlane, answer{http.StatusServiceUnavailable, contract.CodeRedisUnavailable, "Redis is unavailable", false, ownerAsRouted}},
	{context.DeadlineExceeded, answer{http.StatusServiceUnavailable, contract.CodeRequestTimeout, "Coordinator did not answer in time", false, ownerAsRouted}},
	{context.Canceled, answer{http.StatusServiceUnavailable, contract.CodeRequestCanceled, "Request was canceled", false, ownerAsRouted}},
	{contract.ErrInternal, answer{http.StatusInternalServerError, contract.CodeInternalError, msgInternal, false, ownerAsRouted}},

	// Store outcomes no row above answered: a stale cache the runtime
	// did not resolve, and failures of no known class.
	{persistence.Stale, answer{http.StatusInternalServerError, contract.CodeInternalError, msgInternal, false, ownerAsRouted}},
	{persistence.Unknown, answer{http.StatusInternalServerError, contract.CodeInternalError, msgInternal, false, ownerAsRouted}},
}

// answerFor returns the answer to err: the first row of outcomes it
// matches, with a domain error's own message.
func answerFor(err error) answer {
	de, domain := errors.AsType[*group.Error](err)
	_, notOwner := errors.AsType[*cluster.NotOwnerError](err)
	store := persistence.Classify(err)
	for _, row := range outcomes {
		var match bool
		switch k := row.key.(type) {
		case contract.Code:
			match = domain && de.Code == k
		case persistence.Outcome:
			match = store == k
		case *cluster.NotOwnerError:
			match = notOwner
		case error:
			match = errors.Is(err, k)
		}
		if match {
			o := row.answer
			if o.message == "" {
				o.message = de.Message
			}
			return o
		}
	}
	if domain { // a code without a row: the domain's fault
		return answer{status: http.StatusInternalServerError, code: de.Code, message: de.Message}
	}
	return answer{status: http.StatusInternalServerError, code: contract.CodeInternalError, message: msgInternal}
}

// classify maps an error to its HTTP status, code and message (answerFor).
func classify(err error) (status int, code, message string) {
	o := answerFor(err)
	return o.status, string(o.code), o.message
}

// fail answers err as its row of outcomes says.
func (a *API) fail(w http.ResponseWriter, r *http.Request, err error) {
	a.failAs(w, r, err, a.answerHeaders(w, err))
}

// failAs writes err's error answer o. Server-side failures are logged with
// the full error, except the refusals a retry resolves (Retry-After) and
// the expected ones while shutting down.
func (a *API) failAs(w http.ResponseWriter, r *http.Request, err error, o answer) {
	if o.retryAfter {
		w.Header().Set("Retry-After", "1")
	}
	if o.status >= http.StatusInternalServerError && o.code != contract.CodeCoordinatorTerminating && !o.retryAfter {
		a.log.Warn("request failed", "method", r.Method, "path", r.URL.Path, "status", o.status, "errorCode", o.code, "err", err)
	}
	writeError(w, o.status, string(o.code), o.message)
}

// failHeartbeat answers req, a valid heartbeat that was not served
// because of err, as err's row of outcomes says: one that may succeed as
// it is (retryAfter: a cluster refusal, an owner that did not answer, a
// heartbeat shed or not stored) gets 200 with status RETRY
// (group.RetryResponse) and X-Coordinator-Owner as the row says; any
// other as fail. It is the one place an outcome becomes RETRY: the member
// keeps its lease and sends the heartbeat again (never FENCED).
func (a *API) failHeartbeat(w http.ResponseWriter, r *http.Request, req *contract.HeartbeatRequest, err error) {
	o := a.answerHeaders(w, err)
	if !o.retryAfter {
		a.failAs(w, r, err, o)
		return
	}
	resp := group.RetryResponse(a.settings, req)
	writeHeartbeat(w, &resp)
}

// answerHeaders returns err's outcome and sets X-Coordinator-Owner as it
// says. A cluster.ErrNotServing while this coordinator leaves the
// cluster is answered as owned elsewhere (errLeaving).
func (a *API) answerHeaders(w http.ResponseWriter, err error) answer {
	if errors.Is(err, cluster.ErrNotServing) && a.cluster != nil && a.cluster.Leaving() {
		err = fmt.Errorf("%w: %w", errLeaving, err)
	}
	o := answerFor(err)
	switch o.owner {
	case ownerNamed:
		if no, ok := errors.AsType[*cluster.NotOwnerError](err); ok && no.Owner.URL != "" {
			w.Header().Set(contract.OwnerHeader, no.Owner.URL)
		}
	case ownerNone:
		w.Header().Del(contract.OwnerHeader)
	}
	return o
}

// invalid builds a 400 INVALID_REQUEST error.
func invalid(format string, args ...any) error {
	return group.Errorf(contract.CodeInvalidRequest, format, args...)
}

// bodyBuffers recycles request body buffers; buffers that grew beyond
// maxPooledBody are dropped so one large request does not pin memory.
var bodyBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

const maxPooledBody = 64 << 10

// readBody reads the whole request body (at most a.maxBody bytes) and
// calls use with it; the bytes are valid only during use. The exact bytes
// read are fingerprinted on the request's audit event, if any. It fails
// with errPayloadTooLarge, INVALID_REQUEST when the body cannot be read,
// or use's error.
func (a *API) readBody(w http.ResponseWriter, r *http.Request, use func(body []byte) error) error {
	if r.ContentLength > a.maxBody {
		return errPayloadTooLarge
	}
	buf := bodyBuffers.Get().(*bytes.Buffer)
	defer func() {
		if buf.Cap() <= maxPooledBody {
			buf.Reset()
			bodyBuffers.Put(buf)
		}
	}()
	if _, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, a.maxBody)); err != nil {
		if _, tooLarge := errors.AsType[*http.MaxBytesError](err); tooLarge {
			return errPayloadTooLarge
		}
		return invalid("cannot read request body: %v", err)
	}
	if ev := audit.FromContext(r.Context()); ev != nil {
		ev.SetBody(buf.Bytes())
	}
	return use(buf.Bytes())
}

// decodeBody reads the request body with readBody and decodes it into v;
// unknown fields are ignored. Besides readBody's errors it fails with
// INVALID_REQUEST when the body is missing (see absent) or is not valid
// JSON for v.
func (a *API) decodeBody(w http.ResponseWriter, r *http.Request, v any) error {
	return a.readBody(w, r, func(body []byte) error {
		if absent(body) {
			return invalid("request body is required")
		}
		return unmarshalBody(body, v)
	})
}

// absent reports whether a request body is empty, blank or JSON null.
func absent(body []byte) bool {
	body = bytes.TrimSpace(body)
	return len(body) == 0 || bytes.Equal(body, []byte("null"))
}

// unmarshalBody decodes a JSON request body into v, failing with
// INVALID_REQUEST.
func unmarshalBody(body []byte, v any) error {
	if err := json.Unmarshal(body, v); err != nil {
		return invalid("malformed JSON request body: %v", err)
	}
	return nil
}
