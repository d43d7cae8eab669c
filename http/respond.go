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

// statusNames are the HTTP status enum names used in the body's "status".
var statusNames = map[int]string{
	http.StatusBadRequest:            "BAD_REQUEST",
	http.StatusUnauthorized:          "UNAUTHORIZED",
	http.StatusForbidden:             "FORBIDDEN",
	http.StatusNotFound:              "NOT_FOUND",
	http.StatusMethodNotAllowed:      "METHOD_NOT_ALLOWED",
	http.StatusConflict:              "CONFLICT",
	http.StatusRequestEntityTooLarge: "PAYLOAD_TOO_LARGE",
	http.StatusUnprocessableEntity:   "UNPROCESSABLE_ENTITY",
	http.StatusTooManyRequests:       "TOO_MANY_REQUESTS",
	http.StatusInternalServerError:   "INTERNAL_SERVER_ERROR",
	http.StatusServiceUnavailable:    "SERVICE_UNAVAILABLE",
}

// writeError writes the docs/protocol.md §0 error body.
func writeError(w http.ResponseWriter, status int, code, message string) {
	writeJSON(w, status, contract.ErrorBody{Status: statusNames[status], ErrorCode: contract.Code(code), Message: message})
}

// Error codes the HTTP layer produces besides the domain's contract.Code values.
const (
	codeInternal        = "INTERNAL_ERROR"
	codeTerminating     = "COORDINATOR_TERMINATING"
	codeOwnedElsewhere  = "GROUP_OWNED_ELSEWHERE"
	codeNotServing      = "COORDINATOR_NOT_SERVING"
	codePayloadTooLarge = "PAYLOAD_TOO_LARGE"
	msgInternal         = "Internal coordinator error"
)

// errPayloadTooLarge is returned by decodeBody for bodies over the limit.
var errPayloadTooLarge = errors.New("request body too large")

// domainStatuses maps domain error codes to HTTP statuses (docs/protocol.md §0).
var domainStatuses = map[contract.Code]int{
	contract.CodeInvalidRequest:            http.StatusBadRequest,
	contract.CodeGroupNotFound:             http.StatusNotFound,
	contract.CodeStreamNotFound:            http.StatusNotFound,
	contract.CodeMigrationNotFound:         http.StatusNotFound,
	contract.CodeGroupAlreadyExists:        http.StatusConflict,
	contract.CodeStreamPrefixAlreadyExists: http.StatusConflict,
	contract.CodeGroupHasActiveMembers:     http.StatusConflict,
	contract.CodeActiveMigrationExists:     http.StatusConflict,
	contract.CodeMetadataSyncInProgress:    http.StatusConflict,
	contract.CodeRollbackNotAllowed:        http.StatusUnprocessableEntity,
	contract.CodeGroupLimitReached:         http.StatusConflict,
	codeShardsHeld:                         http.StatusConflict,
	codeDeadLetterNotFound:                 http.StatusNotFound,
	codeDeadLetterNotAllowed:               http.StatusUnprocessableEntity,
	codeDeadLetterOtherGroup:               http.StatusConflict,
	contract.CodeResetInProgress:           http.StatusConflict,
	contract.CodeResetNotFound:             http.StatusNotFound,
}

// answer is the status, error code and fixed message of an error class.
// Messages are fixed: the wrapped text may name internals and is logged
// instead.
type answer struct {
	status  int
	code    string
	message string
}

// storeAnswers answers the store outcomes (persistence.Classify) that end
// a request on their own.
var storeAnswers = map[persistence.Outcome]answer{
	persistence.Busy:        {http.StatusServiceUnavailable, "COORDINATOR_STATE_MUTEX_UNAVAILABLE", "Coordinator state mutex is unavailable"},
	persistence.Unavailable: {http.StatusServiceUnavailable, "STORE_UNAVAILABLE", "Metadata store is unavailable"},
	persistence.Corrupt:     {http.StatusInternalServerError, "GROUP_METADATA_CORRUPT", "Stored group metadata is corrupt"},
	persistence.Deposed:     {http.StatusServiceUnavailable, codeOwnedElsewhere, "Another coordinator took this group over; nothing was written, retry the request"},
}

// errLeaving marks a cluster.ErrNotServing of a coordinator that is
// leaving the cluster: the group is another coordinator's now.
var errLeaving = errors.New("coordinator leaving the cluster")

// msgRedisNotConfigured answers a request that needs Redis on a
// coordinator that has none: it names the settings that turn Redis on.
const msgRedisNotConfigured = "Redis is not configured: this coordinator runs without Redis, so it cannot read or change the streams (offsets, messages, dead letters). It uses Redis when store.type is redis (COORDINATOR_STORE_TYPE=redis), audit.sink is redis, or streams.provisioning-enabled is true, at redis.host and redis.port (or redis.cluster-nodes); change the configuration and restart the coordinator"

// runtimeErrors maps the other error classes (matched with errors.Is, in
// order) to their answer.
var runtimeErrors = []struct {
	class error
	answer
}{
	{errPayloadTooLarge, answer{http.StatusRequestEntityTooLarge, codePayloadTooLarge, "Request body exceeds the size limit"}},
	{contract.ErrStateConflict, answer{http.StatusConflict, "STATE_VERSION_CONFLICT", "Group state changed concurrently; retry the request"}},
	{contract.ErrTerminating, answer{http.StatusServiceUnavailable, codeTerminating, "Coordinator is terminating"}},
	{errLeaving, answer{http.StatusServiceUnavailable, codeOwnedElsewhere, "This coordinator is leaving the cluster and hands its groups over; retry the request"}},
	{cluster.ErrNotServing, answer{http.StatusServiceUnavailable, codeNotServing, "This coordinator is not serving yet (it is registering in the cluster, or its registry lease lapsed); retry the request"}},
	{cluster.ErrNotOwner, answer{http.StatusServiceUnavailable, codeOwnedElsewhere, "Another coordinator owns this group now; retry the request (X-Coordinator-Owner names it)"}},
	{contract.ErrOutcomeUnknown, answer{http.StatusServiceUnavailable, "STORE_OUTCOME_UNKNOWN", "Metadata store did not confirm the write; retry the request"}},
	{contract.ErrProvisioning, answer{http.StatusServiceUnavailable, "REDIS_STREAM_PROVISIONING_FAILED", "Redis stream provisioning failed"}},
	{errRedisNotConfigured, answer{http.StatusServiceUnavailable, "REDIS_NOT_CONFIGURED", msgRedisNotConfigured}},
	{errDataPlane, answer{http.StatusServiceUnavailable, "REDIS_UNAVAILABLE", "Redis is unavailable"}},
	{context.DeadlineExceeded, answer{http.StatusServiceUnavailable, "REQUEST_TIMEOUT", "Coordinator did not answer in time"}},
	{context.Canceled, answer{http.StatusServiceUnavailable, "REQUEST_CANCELED", "Request was canceled"}},
	{contract.ErrInternal, answer{http.StatusInternalServerError, codeInternal, msgInternal}},
}

// classify maps an error to its HTTP answer. It is the only place errors
// become statuses.
func classify(err error) (status int, code, message string) {
	if de, ok := errors.AsType[*group.Error](err); ok {
		if s, known := domainStatuses[de.Code]; known {
			return s, string(de.Code), de.Message
		}
		return http.StatusInternalServerError, string(de.Code), de.Message
	}
	if a, ok := storeAnswers[persistence.Classify(err)]; ok {
		return a.status, a.code, a.message
	}
	for _, e := range runtimeErrors {
		if errors.Is(err, e.class) {
			return e.status, e.code, e.message
		}
	}
	return http.StatusInternalServerError, codeInternal, msgInternal
}

// fail answers err. An ownership refusal (cluster.ErrNotOwner, including
// cluster.ErrNotServing, or a write deposed by the fence) is retryable:
// Retry-After 1, and X-Coordinator-Owner as ownerHeader sets it; a
// cluster.ErrNotServing while this coordinator leaves is answered as
// owned elsewhere. Other server-side failures are logged with the full
// error, except the expected refusals while shutting down.
func (a *API) fail(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, cluster.ErrNotServing) && a.cluster != nil && a.cluster.Leaving() {
		err = fmt.Errorf("%w: %w", errLeaving, err)
	}
	status, code, message := classify(err)
	ownership := errors.Is(err, cluster.ErrNotOwner) || persistence.Classify(err) == persistence.Deposed
	if ownership {
		ownerHeader(w, err)
		w.Header().Set("Retry-After", "1")
	}
	if status >= http.StatusInternalServerError && code != codeTerminating && !ownership {
		a.log.Warn("request failed", "method", r.Method, "path", r.URL.Path, "status", status, "errorCode", code, "err", err)
	}
	writeError(w, status, code, message)
}

// ownerHeader sets X-Coordinator-Owner from an ownership refusal: the
// owner a *cluster.NotOwnerError names (ownerHint); none for
// cluster.ErrNotServing, which refuses the groups placed on this very
// coordinator (the forwarder named it), so no coordinator is known to
// serve them now.
func ownerHeader(w http.ResponseWriter, err error) {
	if errors.Is(err, cluster.ErrNotServing) {
		w.Header().Del(HeaderOwner)
		return
	}
	ownerHint(w, err)
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
