package contract

import "time"

// AuditOutcome classifies how an audited request ended.
type AuditOutcome string

// The outcomes of docs/protocol.md §9.1.
const (
	AuditSuccess AuditOutcome = "SUCCESS"
	AuditFailed  AuditOutcome = "FAILED"
	// AuditUnauthorized and AuditForbidden: refused with that error code.
	AuditUnauthorized AuditOutcome = AuditOutcome(CodeUnauthorized)
	AuditForbidden    AuditOutcome = AuditOutcome(CodeForbidden)
	AuditError        AuditOutcome = "ERROR"
)

// AuditEvent is one audit record (docs/protocol.md §9.1): what the audit
// sinks write and GET MonitoringGroup lists as recentMutations. Nullable
// fields are pointers and encode as JSON null when unknown.
type AuditEvent struct {
	// Timestamp is when the request started, UTC with millisecond
	// precision (RFC 3339 in JSON).
	Timestamp     time.Time    `json:"timestamp"`
	CoordinatorID string       `json:"coordinatorId"`
	Action        Action       `json:"action"`
	Outcome       AuditOutcome `json:"outcome"`
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
