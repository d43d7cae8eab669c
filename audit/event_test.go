package audit

import (
	"github.com/redis-stream-coordinator/coordinator/contract"

	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 5, 21, 0, 0, 3, 123_456_789, time.UTC)

func TestOutcomeFor(t *testing.T) {
	for _, tc := range []struct {
		status   int
		panicked bool
		want     contract.AuditOutcome
	}{
		{200, false, contract.AuditSuccess},
		{201, false, contract.AuditSuccess},
		{202, false, contract.AuditSuccess},
		{302, false, contract.AuditSuccess},
		{399, false, contract.AuditSuccess},
		{199, false, contract.AuditFailed},
		{400, false, contract.AuditFailed},
		{404, false, contract.AuditFailed},
		{409, false, contract.AuditFailed},
		{429, false, contract.AuditFailed},
		{503, false, contract.AuditFailed},
		{401, false, contract.AuditUnauthorized},
		{403, false, contract.AuditForbidden},
		{500, true, contract.AuditError},
		{200, true, contract.AuditError},
		{403, true, contract.AuditError},
	} {
		if got := OutcomeFor(tc.status, tc.panicked); got != tc.want {
			t.Errorf("OutcomeFor(%d, %v) = %s, want %s", tc.status, tc.panicked, got, tc.want)
		}
	}
}

// sampleEvent builds the event of a finished SCALE_GROUP request.
func sampleEvent(t *testing.T) *Event {
	t.Helper()
	r := httptest.NewRequest("POST", "/coord/v1/streams/orders/groups/orders-consumer/scale?dryRun=true", nil)
	r.RemoteAddr = "10.0.0.9:51234"
	r.Header.Set("User-Agent", "curl/8")
	r.Header.Set("X-Correlation-Id", "corr-1")
	target := Target{Action: contract.ActionScaleGroup, Route: "/coord/v1/streams/{streamPrefix}/groups/{consumerGroup}/scale",
		StreamPrefix: "orders", ConsumerGroup: "orders-consumer"}
	e := NewEvent(r, "coord-1", target, t0)
	e.SetPrincipal("admin", []string{"ADMIN", "WRITE"})
	e.SetBody([]byte(`{"targetShardCount":8,"requestedBy":"ops","reason":"peak"}`))
	e.Finish(202, false, "", t0.Add(1500*time.Millisecond))
	return e
}

func TestEventJSON(t *testing.T) {
	got, err := json.Marshal(sampleEvent(t))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"timestamp":"2026-05-21T00:00:03.123Z","coordinatorId":"coord-1","action":"SCALE_GROUP",` +
		`"outcome":"SUCCESS","status":202,"principal":"admin","method":"POST",` +
		`"path":"/coord/v1/streams/orders/groups/orders-consumer/scale","streamPrefix":"orders",` +
		`"consumerGroup":"orders-consumer","reshardingId":null,` +
		`"route":"/coord/v1/streams/{streamPrefix}/groups/{consumerGroup}/scale","queryString":"dryRun=true",` +
		`"requestId":"corr-1","requestedBy":"ops","reason":"peak","clientAddress":"10.0.0.9","userAgent":"curl/8",` +
		`"roles":["ADMIN","WRITE"],"durationMs":1500,` +
		`"requestBodySha256":"` + sha(`{"targetShardCount":8,"requestedBy":"ops","reason":"peak"}`) + `",` +
		`"requestSummary":{"targetShardCount":"8"},"errorCode":null}`
	if string(got) != want {
		t.Fatalf("event JSON\n got %s\nwant %s", got, want)
	}
	var back Event
	if err := json.Unmarshal(got, &back); err != nil {
		t.Fatal(err)
	}
	again, _ := json.Marshal(back)
	if string(again) != want {
		t.Fatalf("round trip changed the event:\n%s", again)
	}
}

func TestRefusedEventJSON(t *testing.T) {
	r := httptest.NewRequest("POST", "/coord/v1/streams/orders", strings.NewReader(`{"requestedBy":"x"}`))
	r.RemoteAddr = "[::1]:4000"
	target := Target{Action: contract.ActionCreateStream, Route: "/coord/v1/streams/{streamPrefix}", StreamPrefix: "orders"}
	e := NewEvent(r, "coord-1", target, t0)
	e.Finish(401, false, "UNAUTHORIZED", t0)
	got, _ := json.Marshal(e)
	for _, part := range []string{
		`"action":"CREATE_STREAM"`, `"outcome":"UNAUTHORIZED"`, `"status":401`, `"principal":null`,
		`"consumerGroup":null`, `"queryString":null`, `"requestId":null`, `"requestedBy":null`, `"reason":null`,
		`"clientAddress":"::1"`, `"userAgent":null`, `"roles":[]`, `"durationMs":0`, `"requestBodySha256":null`,
		`"requestSummary":{}`, `"errorCode":"UNAUTHORIZED"`, `"route":"/coord/v1/streams/{streamPrefix}"`,
	} {
		if !strings.Contains(string(got), part) {
			t.Errorf("missing %s in %s", part, got)
		}
	}
}

func TestRequestID(t *testing.T) {
	for _, tc := range []struct {
		headers map[string]string
		want    string
	}{
		{map[string]string{"X-Request-Id": "r", "X-Correlation-Id": "c", "X-Amzn-Trace-Id": "a"}, "r"},
		{map[string]string{"X-Request-Id": "  ", "X-Correlation-Id": "c", "X-Amzn-Trace-Id": "a"}, "c"},
		{map[string]string{"X-Amzn-Trace-Id": "Root=1-abc"}, "Root=1-abc"},
		{map[string]string{"x-request-id": " lower "}, "lower"},
		{nil, ""},
	} {
		r := httptest.NewRequest("POST", "/", nil)
		for k, v := range tc.headers {
			r.Header.Set(k, v)
		}
		if got := RequestID(r.Header); got != tc.want {
			t.Errorf("RequestID(%v) = %q, want %q", tc.headers, got, tc.want)
		}
	}
}

func TestClientAddress(t *testing.T) {
	for _, tc := range []struct {
		xff, remote, want string
	}{
		{"", "192.0.2.1:1234", "192.0.2.1"},
		{"203.0.113.7, 10.0.0.1", "192.0.2.1:1234", "203.0.113.7"},
		{" 203.0.113.8 ", "192.0.2.1:1234", "203.0.113.8"},
		{" , 10.0.0.1", "192.0.2.1:1234", "192.0.2.1"},
		{"", "[2001:db8::1]:80", "2001:db8::1"},
		{"", "unix-socket", "unix-socket"},
	} {
		r := httptest.NewRequest("POST", "/", nil)
		r.RemoteAddr = tc.remote
		if tc.xff != "" {
			r.Header.Set("X-Forwarded-For", tc.xff)
		}
		if got := ClientAddress(r); got != tc.want {
			t.Errorf("ClientAddress(xff %q, remote %q) = %q, want %q", tc.xff, tc.remote, got, tc.want)
		}
	}
}

func TestRedactQuery(t *testing.T) {
	for raw, want := range map[string]string{
		"":                     "",
		"dryRun=true":          "dryRun=true",
		"password=hunter2&a=1": "password=***&a=1",
		"a=1&Access_Token=x&b": "a=1&Access_Token=***&b",
		"client%5Fsecret=x":    "client%5Fsecret=***",
		"apiKey=1&API_KEY=2&authorization=Basic%20x": "apiKey=***&API_KEY=***&authorization=***",
		"token":             "token",
		"a=%zz&db_passwd=1": "a=%zz&db_passwd=***",
	} {
		if got := redactQuery(raw); got != want {
			t.Errorf("redactQuery(%q) = %q, want %q", raw, got, want)
		}
	}
}

func TestSummarizeBody(t *testing.T) {
	str := func(s string) *string { return &s }
	for _, tc := range []struct {
		name                string
		body                string
		requestedBy, reason *string
		summary             map[string]string
	}{
		{"create", `{"initialShardCount":20,"requestedBy":"ops","reason":"new"}`, str("ops"), str("new"), map[string]string{"initialShardCount": "20"}},
		{"delete", `{"requestedBy":"ops","reason":"gone","force":true}`, str("ops"), str("gone"), map[string]string{"force": "true"}},
		{"lenient values", `{"targetShardCount":"8","force":null,"initialShardCount":{"a": [1, 2]},"requestedBy":7}`, nil, nil,
			map[string]string{"targetShardCount": "8", "initialShardCount": `{"a":[1,2]}`}},
		{"blank strings kept", `{"requestedBy":"","reason":" "}`, str(""), str(" "), map[string]string{}},
		{"invalid JSON", `{"requestedBy":"ops",`, nil, nil, map[string]string{}},
		{"array", `[{"requestedBy":"ops"}]`, nil, nil, map[string]string{}},
		{"empty", ``, nil, nil, map[string]string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sum, requestedBy, reason, summary := SummarizeBody([]byte(tc.body))
			if sum != sha(tc.body) {
				t.Errorf("sha = %s, want %s", sum, sha(tc.body))
			}
			if !sameString(requestedBy, tc.requestedBy) || !sameString(reason, tc.reason) {
				t.Errorf("requestedBy, reason = %v, %v; want %v, %v", show(requestedBy), show(reason), show(tc.requestedBy), show(tc.reason))
			}
			if summary == nil || len(summary) != len(tc.summary) {
				t.Fatalf("summary = %#v, want %v", summary, tc.summary)
			}
			for k, v := range tc.summary {
				if summary[k] != v {
					t.Errorf("summary[%s] = %q, want %q", k, summary[k], v)
				}
			}
		})
	}
}

func TestEventContext(t *testing.T) {
	ctx := context.Background()
	if FromContext(ctx) != nil {
		t.Fatal("event in a bare context")
	}
	e := &Event{}
	if FromContext(WithEvent(ctx, e)) != e {
		t.Fatal("event not carried")
	}
}
