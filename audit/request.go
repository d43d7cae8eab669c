package audit

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// NewEvent starts the event of an audited request at start. It records only
// non-secret request facts (no headers besides the correlation id, client
// address and user agent; no body). Roles start as [] and RequestSummary as
// {}; the principal, body and outcome are added by SetPrincipal, SetBody and
// Finish.
func NewEvent(r *http.Request, coordinatorID string, t Target, start time.Time) *Event {
	return &Event{
		Timestamp:      start.UTC().Truncate(time.Millisecond),
		CoordinatorID:  coordinatorID,
		Action:         t.Action,
		Method:         r.Method,
		Path:           r.URL.Path,
		StreamPrefix:   t.StreamPrefix,
		ConsumerGroup:  optional(t.ConsumerGroup),
		ReshardingID:   optional(t.ReshardingID),
		Route:          t.Route,
		QueryString:    optional(redactQuery(r.URL.RawQuery)),
		RequestID:      optional(RequestID(r.Header)),
		ClientAddress:  ClientAddress(r),
		UserAgent:      optional(r.UserAgent()),
		Roles:          []string{},
		RequestSummary: map[string]string{},
	}
}

type eventKey struct{}

// WithEvent returns a context carrying e, so that inner layers
// (authentication, the handler reading the body) can annotate it.
func WithEvent(ctx context.Context, e *Event) context.Context {
	return context.WithValue(ctx, eventKey{}, e)
}

// FromContext returns the event stored by WithEvent, or nil when the request
// is not audited.
func FromContext(ctx context.Context) *Event {
	e, _ := ctx.Value(eventKey{}).(*Event)
	return e
}

// RequestID returns the first non-blank of X-Request-Id, X-Correlation-Id
// and X-Amzn-Trace-Id, or "".
func RequestID(h http.Header) string {
	for _, name := range []string{"X-Request-Id", "X-Correlation-Id", "X-Amzn-Trace-Id"} {
		if v := strings.TrimSpace(h.Get(name)); v != "" {
			return v
		}
	}
	return ""
}

// ClientAddress returns the first entry of X-Forwarded-For, else the peer's
// host (RemoteAddr without the port).
func ClientAddress(r *http.Request) string {
	first, _, _ := strings.Cut(r.Header.Get("X-Forwarded-For"), ",")
	if first = strings.TrimSpace(first); first != "" {
		return first
	}
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return host
	}
	return r.RemoteAddr
}

// secretParams are substrings of query parameter names whose values are
// redacted from the audited query string.
var secretParams = []string{"password", "passwd", "secret", "token", "authorization", "apikey", "api_key", "credential"}

// redacted replaces the value of a secret-looking query parameter.
const redacted = "***"

// redactQuery returns the raw query with the values of secret-looking
// parameters replaced by ***, keeping order and encoding otherwise.
func redactQuery(raw string) string {
	if raw == "" {
		return ""
	}
	pairs := strings.Split(raw, "&")
	for i, pair := range pairs {
		key, _, hasValue := strings.Cut(pair, "=")
		name, err := url.QueryUnescape(key)
		if err != nil {
			name = key
		}
		name = strings.ToLower(name)
		for _, s := range secretParams {
			if hasValue && strings.Contains(name, s) {
				pairs[i] = key + "=" + redacted
				break
			}
		}
	}
	return strings.Join(pairs, "&")
}

// summaryFields are the body fields copied into Event.RequestSummary.
var summaryFields = []string{"initialShardCount", "targetShardCount", "force", "to", "entryId", "timestampMs", "shards", "ids", "stream"}

// maxSummaryValue bounds one summary value (a long id list).
const maxSummaryValue = 1024

// SummarizeBody fingerprints a request body and extracts the audited
// fields. It parses leniently: when the body is not a JSON object only the
// hash is returned (with nil strings and an empty summary).
//
//   - sha256hex: hex SHA-256 of the raw bytes;
//   - requestedBy, reason: the string fields of those names, nil when absent
//     or not strings;
//   - summary: the summaryFields present and not null (the shard counts and
//     force of the group and scale routes; to, entryId, timestampMs, shards
//     of an offset reset; ids and stream of the dead-letter routes), as their
//     string value (strings unquoted, numbers and booleans as written, other
//     values as compact JSON), cut at maxSummaryValue bytes. Never nil.
func SummarizeBody(body []byte) (sha256hex string, requestedBy, reason *string, summary map[string]string) {
	sum := sha256.Sum256(body)
	sha256hex = hex.EncodeToString(sum[:])
	summary = map[string]string{}
	var fields map[string]json.RawMessage
	if json.Unmarshal(body, &fields) != nil {
		return sha256hex, nil, nil, summary
	}
	requestedBy = stringField(fields["requestedBy"])
	reason = stringField(fields["reason"])
	for _, name := range summaryFields {
		if v, ok := scalarText(fields[name]); ok {
			if len(v) > maxSummaryValue {
				v = v[:maxSummaryValue] + "…"
			}
			summary[name] = v
		}
	}
	return sha256hex, requestedBy, reason, summary
}

// stringField returns a JSON string's value, or nil for anything else.
func stringField(raw json.RawMessage) *string {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return nil
	}
	return &s
}

// scalarText renders a JSON value as text; absent and null values yield false.
func scalarText(raw json.RawMessage) (string, bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", false
	}
	if s := stringField(raw); s != nil {
		return *s, true
	}
	var compact bytes.Buffer
	if json.Compact(&compact, raw) != nil {
		return string(raw), true
	}
	return compact.String(), true
}
