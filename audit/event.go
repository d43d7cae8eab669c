package audit

import (
	"log/slog"
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
)

// OutcomeFor classifies a finished request, first match wins: ERROR when
// the handler panicked (an unhandled failure), FORBIDDEN for 403,
// UNAUTHORIZED for 401, SUCCESS for 200–399, FAILED otherwise.
func OutcomeFor(status int, panicked bool) contract.AuditOutcome {
	switch {
	case panicked:
		return contract.AuditError
	case status == 403:
		return contract.AuditForbidden
	case status == 401:
		return contract.AuditUnauthorized
	case status >= 200 && status <= 399:
		return contract.AuditSuccess
	}
	return contract.AuditFailed
}

// Event is one audit record, contract.AuditEvent (the wire's, whose
// fields it has), with the methods that fill it in.
type Event contract.AuditEvent

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
