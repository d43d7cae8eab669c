package audit

import (
	"log/slog"
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
)

// Outcome classifies how a request ended.
type Outcome string

// The outcomes of docs/protocol.md §9.1.
const (
	OutcomeSuccess Outcome = "SUCCESS"
	OutcomeFailed  Outcome = "FAILED"
	// OutcomeUnauthorized and OutcomeForbidden: refused with that error
	// code.
	OutcomeUnauthorized Outcome = Outcome(contract.CodeUnauthorized)
	OutcomeForbidden    Outcome = Outcome(contract.CodeForbidden)
	OutcomeError        Outcome = "ERROR"
)

// OutcomeFor classifies a finished request, first match wins: ERROR when
// the handler panicked (an unhandled failure), FORBIDDEN for 403,
// UNAUTHORIZED for 401, SUCCESS for 200–399, FAILED otherwise.
func OutcomeFor(status int, panicked bool) Outcome {
	switch {
	case panicked:
		return OutcomeError
	case status == 403:
		return OutcomeForbidden
	case status == 401:
		return OutcomeUnauthorized
	case status >= 200 && status <= 399:
		return OutcomeSuccess
	}
	return OutcomeFailed
}

// Event is one audit record. Nullable fields are pointers and encode as
// JSON null when unknown.
type Event struct {
	// Timestamp is when the request started, UTC with millisecond
	// precision (RFC 3339 in JSON).
	Timestamp     time.Time       `json:"timestamp"`
	CoordinatorID string          `json:"coordinatorId"`
	Action        contract.Action `json:"action"`
	Outcome       Outcome         `json:"outcome"`
	// Status is the HTTP status answered.
	Status int `json:"status"`
	// Principal is the authenticated user name; null when authentication
	// failed or did not happen.
	Principal    *string `json:"principal"`
	Method       string  `json:"method"`
	Path         string  `json:"path"`
	StreamPrefix string  `json:"streamPrefix"`
	// ConsumerGroup is null for stream-level actions.
	ConsumerGroup *string `json:"consumerGroup"`
	// ReshardingID is set for ROLLBACK_MIGRATION only.
	ReshardingID *string `json:"reshardingId"`
	// Route is the matched route template, e.g.
	// contract.BasePath + contract.GroupScale.
	Route string `json:"route"`
	// QueryString is the raw query (secret-looking values redacted), null
	// when empty.
	QueryString *string `json:"queryString"`
	// RequestID is X-Request-Id, else X-Correlation-Id, else X-Amzn-Trace-Id.
	RequestID *string `json:"requestId"`
	// RequestedBy and Reason are the body's string fields of those names.
	RequestedBy *string `json:"requestedBy"`
	Reason      *string `json:"reason"`
	// ClientAddress is the first X-Forwarded-For entry, else the peer host.
	ClientAddress string  `json:"clientAddress"`
	UserAgent     *string `json:"userAgent"`
	// Roles are the principal's role names, sorted; [] when unauthenticated.
	Roles      []string `json:"roles"`
	DurationMs int64    `json:"durationMs"`
	// RequestBodySHA256 is the hex SHA-256 of the body, null when the body
	// was not read (e.g. the request was refused before the handler).
	RequestBodySHA256 *string `json:"requestBodySha256"`
	// RequestSummary holds the string values of the summarised body fields
	// (SummarizeBody); {} when none.
	RequestSummary map[string]string `json:"requestSummary"`
	// ErrorCode is the error body's errorCode (e.g. RATE_LIMIT_EXCEEDED),
	// null when the request succeeded.
	ErrorCode *string `json:"errorCode"`
}

// SetPrincipal records the authenticated caller and its roles.
func (e *Event) SetPrincipal(username string, roles []string) {
	e.Principal = &username
	e.Roles = append([]string{}, roles...)
}

// SetBody records the fingerprint and summary of the request body the
// handler read (see SummarizeBody).
func (e *Event) SetBody(body []byte) {
	sum, requestedBy, reason, summary := SummarizeBody(body)
	e.RequestBodySHA256 = &sum
	e.RequestedBy = requestedBy
	e.Reason = reason
	e.RequestSummary = summary
}

// Finish records how the request ended at end: status, outcome (see
// OutcomeFor), the duration since Timestamp and errorCode ("" → null).
func (e *Event) Finish(status int, panicked bool, errorCode string, end time.Time) {
	e.Status = status
	e.Outcome = OutcomeFor(status, panicked)
	e.DurationMs = max(0, end.Sub(e.Timestamp).Milliseconds())
	e.ErrorCode = optional(errorCode)
}

// attrs returns the event as log attributes with the JSON field names and
// JSON-equivalent values.
func (e Event) attrs() []slog.Attr {
	return []slog.Attr{
		slog.String("timestamp", e.Timestamp.Format(time.RFC3339Nano)),
		slog.String("coordinatorId", e.CoordinatorID),
		slog.String("action", string(e.Action)),
		slog.String("outcome", string(e.Outcome)),
		slog.Int("status", e.Status),
		nullable("principal", e.Principal),
		slog.String("method", e.Method),
		slog.String("path", e.Path),
		slog.String("streamPrefix", e.StreamPrefix),
		nullable("consumerGroup", e.ConsumerGroup),
		nullable("reshardingId", e.ReshardingID),
		slog.String("route", e.Route),
		nullable("queryString", e.QueryString),
		nullable("requestId", e.RequestID),
		nullable("requestedBy", e.RequestedBy),
		nullable("reason", e.Reason),
		slog.String("clientAddress", e.ClientAddress),
		nullable("userAgent", e.UserAgent),
		slog.Any("roles", e.Roles),
		slog.Int64("durationMs", e.DurationMs),
		nullable("requestBodySha256", e.RequestBodySHA256),
		slog.Any("requestSummary", e.RequestSummary),
		nullable("errorCode", e.ErrorCode),
	}
}

func nullable(key string, v *string) slog.Attr {
	if v == nil {
		return slog.Any(key, nil)
	}
	return slog.String(key, *v)
}

// optional returns nil for "" and a pointer to s otherwise.
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
