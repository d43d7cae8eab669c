package audit

import (
	"github.com/redis-stream-coordinator/coordinator/contract"

	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-stream-coordinator/coordinator/internal/testkit/testredis"
)

// redisSink returns a sink on the shared test Redis under a key prefix of
// its own, whose keys are deleted when the test ends.
func redisSink(t *testing.T, maxEntries int) (*RedisSink, redis.UniversalClient) {
	t.Helper()
	client := testredis.Shared(t)
	return NewRedisSink(client, testredis.Prefix(t, client), maxEntries), client
}

// numbered returns event i of group (p, g) ("" = stream level).
func numbered(p, g string, i int) Event {
	e := Event{
		Timestamp:      t0.Add(time.Duration(i) * time.Second).Truncate(time.Millisecond),
		Action:         contract.ActionScaleGroup,
		StreamPrefix:   p,
		ConsumerGroup:  optional(g),
		Status:         202,
		Outcome:        contract.AuditSuccess,
		Roles:          []string{"WRITE"},
		RequestSummary: map[string]string{"targetShardCount": fmt.Sprint(i)},
	}
	if g == "" {
		e.Action = contract.ActionScaleStream
	}
	return e
}

func summaries(events []Event) []string {
	out := []string{}
	for _, e := range events {
		out = append(out, e.RequestSummary["targetShardCount"])
	}
	return out
}

// checkHistory records 5 events in (P, G), 2 stream-level ones and 1 in
// another group through sink, then checks Recent with a cap of 3.
func checkHistory(t *testing.T, sink Sink, h History) {
	t.Helper()
	ctx := t.Context()
	for i := range 5 {
		if err := sink.Record(ctx, numbered("orders", "workers", i)); err != nil {
			t.Fatal(err)
		}
	}
	for i := 10; i < 12; i++ {
		if err := sink.Record(ctx, numbered("orders", "", i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := sink.Record(ctx, numbered("orders", "other", 20)); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		g    string
		n    int
		want []string
	}{
		{"workers", 10, []string{"4", "3", "2"}},
		{"workers", 2, []string{"4", "3"}},
		{"workers", 0, []string{}},
		{"workers", -1, []string{}},
		{"", 10, []string{"11", "10"}},
		{"other", 10, []string{"20"}},
		{"missing", 10, []string{}},
	} {
		got, err := h.Recent(ctx, "orders", tc.g, tc.n)
		if err != nil {
			t.Fatalf("Recent(%q, %d): %v", tc.g, tc.n, err)
		}
		if got == nil || !reflect.DeepEqual(summaries(got), tc.want) {
			t.Errorf("Recent(%q, %d) = %v, want %v", tc.g, tc.n, summaries(got), tc.want)
		}
	}
	got, _ := h.Recent(ctx, "orders", "workers", 1)
	if want := numbered("orders", "workers", 4); len(got) != 1 || !reflect.DeepEqual(got[0], want) {
		t.Errorf("Recent event = %+v, want %+v", got, want)
	}
}

func TestMemorySink(t *testing.T) {
	s := NewMemorySink(3, 100)
	checkHistory(t, s, s)
	e := numbered("p", "g", 1)
	s.Record(t.Context(), e)
	e.Roles[0], e.RequestSummary["x"] = "CHANGED", "y"
	got, _ := s.Recent(t.Context(), "p", "g", 1)
	if got[0].Roles[0] != "WRITE" || len(got[0].RequestSummary) != 1 {
		t.Error("MemorySink shares the caller's slices or maps")
	}
	if s := NewMemorySink(0, 0); s.perScope != 1 || s.total != 1 {
		t.Errorf("caps %d, %d: want below 1 raised to 1, a total below the per-scope cap raised to it", s.perScope, s.total)
	}
}

// The sink keeps at most its total of events whatever names they carry,
// dropping the oldest events of the scopes recorded least recently: a
// flood of requests naming new groups costs bounded memory and leaves the
// history of the groups still in use.
func TestMemorySinkTotal(t *testing.T) {
	ctx := t.Context()
	s := NewMemorySink(3, 10)
	for i := range 3 {
		s.Record(ctx, numbered("orders", "workers", i))
	}
	for i := range 1000 {
		s.Record(ctx, numbered("flood", fmt.Sprint(i), i))
		if i%5 == 0 {
			s.Record(ctx, numbered("orders", "workers", 3+i/5)) // still in use
		}
		if s.kept > 10 || s.scopes.Len() != len(s.byName) || s.scopes.Len() > 10 {
			t.Fatalf("after %d floods: %d events in %d scopes (%d names), want at most 10", i+1, s.kept, s.scopes.Len(), len(s.byName))
		}
	}
	got, _ := s.Recent(ctx, "orders", "workers", 3)
	if len(got) != 3 || got[0].RequestSummary["targetShardCount"] != "202" {
		t.Errorf("the group in use kept %+v, want its 3 latest events", got)
	}
	if got, _ := s.Recent(ctx, "flood", "0", 3); len(got) != 0 {
		t.Errorf("the first flooded name kept %d events", len(got))
	}
	if got, _ := s.Recent(ctx, "flood", "999", 3); len(got) != 1 {
		t.Errorf("the last flooded name kept %d events, want 1", len(got))
	}
}

func TestRedisSink(t *testing.T) {
	s, client := redisSink(t, 3)
	checkHistory(t, s, s)
	ctx := t.Context()
	for key, want := range map[string]int64{
		s.keyPrefix + ":{orders:workers}:admin:audit": 3,
		s.keyPrefix + ":{orders}:admin:audit":         2,
		s.keyPrefix + ":{orders:other}:admin:audit":   1,
	} {
		if n, err := client.LLen(ctx, key).Result(); err != nil || n != want {
			t.Errorf("LLEN %s = %d, %v; want %d", key, n, err, want)
		}
	}
	raw, err := client.LIndex(ctx, s.keyPrefix+":{orders:workers}:admin:audit", -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(numbered("orders", "workers", 4))
	if raw != string(want) {
		t.Errorf("stored %s, want %s", raw, want)
	}
	if err := s.Record(ctx, Event{Action: contract.ActionLogin}); err != nil {
		t.Fatal(err)
	}
	if n, err := client.LLen(ctx, s.keyPrefix+":auth:audit").Result(); err != nil || n != 1 {
		t.Errorf("login events: LLEN = %d, %v; want 1", n, err)
	}
}

// On Redis Cluster each list lives in one slot thanks to its hash tag, so
// the MULTI of Record is valid there too.
func TestRedisSinkCluster(t *testing.T) {
	client := testredis.StartCluster(t, 3).Client(t)
	s := NewRedisSink(client, testredis.Prefix(t, client), 3)
	checkHistory(t, s, s)
}

func TestRedisSinkMinimumCap(t *testing.T) {
	s, client := redisSink(t, 0)
	for i := range 3 {
		if err := s.Record(t.Context(), numbered("p", "g", i)); err != nil {
			t.Fatal(err)
		}
	}
	if n, _ := client.LLen(t.Context(), s.key("p", "g")).Result(); n != 1 {
		t.Errorf("LLEN = %d, want 1", n)
	}
}

type failingSink struct{ err error }

func (f failingSink) Record(context.Context, Event) error { return f.err }

func TestTee(t *testing.T) {
	mem := NewMemorySink(10, 1000)
	boom := errors.New("boom")
	err := Tee(failingSink{boom}, mem).Record(t.Context(), numbered("p", "g", 1))
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want boom", err)
	}
	if got, _ := mem.Recent(t.Context(), "p", "g", 10); len(got) != 1 {
		t.Fatal("second sink skipped after the first failed")
	}
	if err := Tee(mem, mem).Record(t.Context(), numbered("p", "g", 2)); err != nil {
		t.Fatalf("err = %v", err)
	}
}

// The JSON log line carries exactly the event's JSON fields plus the
// logger name.
func TestLogSinkLine(t *testing.T) {
	var buf bytes.Buffer
	e := sampleEvent(t)
	if err := NewLogSink(slog.New(slog.NewJSONHandler(&buf, nil))).Record(t.Context(), *e); err != nil {
		t.Fatal(err)
	}
	var line map[string]any
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
		t.Fatalf("log output %q: %v", buf.String(), err)
	}
	if line["level"] != "INFO" || line["logger"] != LoggerName || line["msg"] != "audit" {
		t.Errorf("log header = %v", line)
	}
	for _, k := range []string{"time", "level", "msg", "logger"} {
		delete(line, k)
	}
	encoded, _ := json.Marshal(e)
	var want map[string]any
	json.Unmarshal(encoded, &want)
	if !reflect.DeepEqual(line, want) {
		t.Errorf("log fields\n got %v\nwant %v", line, want)
	}

	buf.Reset()
	refused := *e
	refused.Principal, refused.ErrorCode = nil, optional("UNAUTHORIZED")
	NewLogSink(slog.New(slog.NewTextHandler(&buf, nil))).Record(t.Context(), refused)
	for _, part := range []string{"level=INFO", "logger=" + LoggerName, "action=SCALE_GROUP", "principal=<nil>", "errorCode=UNAUTHORIZED"} {
		if !strings.Contains(buf.String(), part) {
			t.Errorf("text line lacks %q: %s", part, buf.String())
		}
	}
}

// An event built from a request carrying credentials never contains them.
func TestEventsCarryNoSecrets(t *testing.T) {
	const password, token = "hunter2-very-secret", "eyJhbGciOiJIUzI1NiJ9.secret-token.sig"
	basicCreds := base64.StdEncoding.EncodeToString([]byte("admin:" + password))
	body := `{"username":"admin","password":"` + password + `","token":"` + token + `","requestedBy":"ops","reason":"r","targetShardCount":8}`
	r := httptest.NewRequest("POST", "/coord/v1/streams/p/groups/g/scale?password="+password+"&access_token="+token, strings.NewReader(body))
	r.Header.Set("Authorization", "Basic "+basicCreds)
	r.Header.Set("Cookie", "session="+token)
	r.Header.Set("X-Api-Key", password)
	target := Target{Action: contract.ActionScaleGroup, Route: "/coord/v1/streams/{streamPrefix}/groups/{consumerGroup}/scale", StreamPrefix: "p", ConsumerGroup: "g"}
	e := NewEvent(r, "coord", target, t0)
	e.SetPrincipal("admin", []string{"ADMIN"})
	e.SetBody([]byte(body))
	e.Finish(202, false, "", t0)

	var logs bytes.Buffer
	mem := NewMemorySink(5, 1000)
	sinks := []Sink{
		NewLogSink(slog.New(slog.NewJSONHandler(&logs, nil))),
		NewLogSink(slog.New(slog.NewTextHandler(&logs, nil))),
		mem,
	}
	rs, _ := redisSink(t, 5)
	if err := Tee(append(sinks, rs)...).Record(t.Context(), *e); err != nil {
		t.Fatal(err)
	}
	fromRedis, err := rs.Recent(t.Context(), "p", "g", 1)
	if err != nil || len(fromRedis) != 1 {
		t.Fatalf("redis: %v, %v", fromRedis, err)
	}
	checkAbsent(t, "redis", mustJSON(t, fromRedis), password, basicCreds, token)
	stored, _ := mem.Recent(t.Context(), "p", "g", 1)
	checkAbsent(t, "event JSON", mustJSON(t, e), password, basicCreds, token)
	checkAbsent(t, "memory", mustJSON(t, stored), password, basicCreds, token)
	checkAbsent(t, "log output", logs.String(), password, basicCreds, token)
	if e.RequestedBy == nil || *e.RequestedBy != "ops" || e.RequestSummary["targetShardCount"] != "8" {
		t.Errorf("body fields lost: %+v", e)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func checkAbsent(t *testing.T, where, text string, secrets ...string) {
	t.Helper()
	for _, s := range secrets {
		if strings.Contains(text, s) {
			t.Errorf("%s contains secret %q: %s", where, s, text)
		}
	}
}
