package metrics_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	httpapi "github.com/redis-stream-coordinator/coordinator/http"
	"github.com/redis-stream-coordinator/coordinator/metrics"
	"github.com/redis-stream-coordinator/coordinator/persistence"
)

// Every commit moves the group gauges and the member series at once,
// however close together the commits are.
func TestEveryCommitIsScrapedAtOnce(t *testing.T) {
	h := newMemoryHarness(t)
	h.create(orders)
	resp := h.heartbeat(orders, hb{member: "m-a"})
	h.heartbeat(orders, hb{member: "m-b"})
	s := scrape(t, h.reg)
	if got := s[`members{group="billing",state="total",stream="orders"}`]; got != 2 {
		t.Errorf("members total %v right after the second join, want 2", got)
	}
	if got := s[`member_active{group="billing",member="m-b",stream="orders"}`]; got != 1 {
		t.Errorf("m-b active %v right after its join, want 1", got)
	}
	h.heartbeat(orders, hb{member: "m-a", epoch: resp.MemberEpoch, owned: resp.Assignment.AssignedShards})
	if got := scrape(t, h.reg)[`member_current_shards{group="billing",member="m-a",stream="orders"}`]; got != float64(len(resp.Assignment.AssignedShards)) {
		t.Errorf("m-a current shards %v right after its report, want %d", got, len(resp.Assignment.AssignedShards))
	}
}

// A pruned member's series disappear; a deleted group's series all do.
func TestSeriesOfGoneMembersAndGroupsAreDeleted(t *testing.T) {
	h := newMemoryHarness(t)
	h.create(orders)
	h.clock.Advance(2 * time.Second)
	h.heartbeat(orders, hb{member: "m-a"})
	h.clock.Advance(2 * time.Second)
	h.heartbeat(orders, hb{member: "m-b"})
	h.clock.Advance(settings.StaleMemberRetention + settings.MemberLeaseTTL + time.Minute)
	h.coord.TickNow() // both expire
	waitFor(t, h.reg, "the expiry", func(s series) bool {
		return s[`member_expired_total{group="billing",stream="orders"}`] == 2
	})
	h.clock.Advance(2 * time.Second)
	h.coord.TickNow() // both are past the retention: pruned
	waitFor(t, h.reg, "the pruning", func(s series) bool {
		return s[`members{group="billing",state="total",stream="orders"}`] == 0
	})
	for k := range scrape(t, h.reg) {
		if strings.Contains(k, `member="`) {
			t.Errorf("series %s of a pruned member is still exported", k)
		}
	}

	if code, body := h.do(http.MethodDelete, groupPath(orders), map[string]any{"requestedBy": "t", "reason": "r", "force": true}); code != http.StatusOK {
		t.Fatalf("delete: %d %s", code, body)
	}
	for k := range scrape(t, h.reg) {
		if strings.Contains(k, `group="billing"`) {
			t.Errorf("series %s of a deleted group is still exported", k)
		}
	}
}

// Names from requests for groups the coordinator does not know never
// become label values.
func TestUnknownGroupsAreNotLabels(t *testing.T) {
	h := newMemoryHarness(t)
	ghost := group.Key{StreamPrefix: "ghost", ConsumerGroup: "g"}
	// The actor a request for an unknown group spawns passivates itself, so
	// each step waits until none is left: group_actors ends where it began.
	noActors := func(s series) bool { return s["group_actors{}"] == 0 }
	h.step("heartbeat to an unknown group", func() {
		if resp := h.heartbeat(ghost, hb{member: "m"}); resp.Status != contract.StatusUnknownMemberID {
			t.Fatalf("status %s", resp.Status)
		}
		waitFor(t, h.reg, "the unknown group's actor passivated", noActors)
	}, series{
		`heartbeat_total{group="unknown",status="UNKNOWN_MEMBER_ID",stream="unknown"}`:                                                                                                                  1,
		`api_request_total{group="unknown",method="POST",outcome="SUCCESS",route="/coord/v1/streams/{streamPrefix}/groups/{consumerGroup}/members/{memberId}/heartbeat",status="200",stream="unknown"}`: 1,
		`api_request_duration_seconds_count{method="POST",outcome="SUCCESS",route="/coord/v1/streams/{streamPrefix}/groups/{consumerGroup}/members/{memberId}/heartbeat",status="200"}`:                 1,
		`actor_message_duration_seconds_count{type="heartbeat"}`:                                                                                                                                        1,
	})
	h.step("read of an unknown group", func() {
		if code, _ := h.do(http.MethodGet, groupPath(ghost)+"/producer-routing", nil); code != http.StatusNotFound {
			t.Fatalf("routing of an unknown group: %d", code)
		}
		waitFor(t, h.reg, "the unknown group's actor passivated", noActors)
	}, series{
		`producer_routing_request_total{group="unknown",status="ERROR",stream="unknown"}`:                                                                                                       1,
		`api_request_total{group="unknown",method="GET",outcome="CLIENT_ERROR",route="/coord/v1/streams/{streamPrefix}/groups/{consumerGroup}/producer-routing",status="404",stream="unknown"}`: 1,
		`api_request_duration_seconds_count{method="GET",outcome="CLIENT_ERROR",route="/coord/v1/streams/{streamPrefix}/groups/{consumerGroup}/producer-routing",status="404"}`:                 1,
	})
}

// Routing reads count by result; a read whose knownMetadataVersion is
// older than the current version is a stale refresh.
func TestProducerRoutingStaleRefreshes(t *testing.T) {
	h := newMemoryHarness(t)
	h.create(orders)
	h.heartbeat(orders, hb{member: "m-a"}) // metadataVersion 2
	for _, q := range []string{"", "?knownMetadataVersion=2", "?knownMetadataVersion=1", "?knownMetadataVersion=junk"} {
		if code, body := h.do(http.MethodGet, groupPath(orders)+"/producer-routing"+q, nil); code != http.StatusOK {
			t.Fatalf("routing%s: %d %s", q, code, body)
		}
	}
	s := scrape(t, h.reg)
	if got := s[`producer_routing_request_total{group="billing",status="SUCCESS",stream="orders"}`]; got != 4 {
		t.Errorf("routing requests %v, want 4", got)
	}
	if got := s[`producer_routing_stale_total{group="billing",stream="orders"}`]; got != 1 {
		t.Errorf("stale routing refreshes %v, want 1", got)
	}
}

// Admin mutations count by action and outcome; scale requests by status.
func TestAdminMutationsAndScaleRequests(t *testing.T) {
	h := newMemoryHarness(t)
	h.create(orders)
	if code, _ := h.do(http.MethodPost, groupPath(orders), map[string]any{"requestedBy": "t"}); code != http.StatusConflict {
		t.Fatalf("second create: %d", code)
	}
	if code, body := h.do(http.MethodPost, "/coord/v1/streams/audit", map[string]any{"initialShardCount": 4, "requestedBy": "t"}); code != http.StatusCreated {
		t.Fatalf("create stream: %d %s", code, body)
	}
	for _, tc := range []struct {
		path   string
		target int
		want   int
	}{
		{groupPath(orders) + "/scale", 4, http.StatusAccepted},      // same count: noop
		{groupPath(orders) + "/scale", 8, http.StatusAccepted},      // scale out, still active
		{"/coord/v1/streams/orders/scale", 16, http.StatusConflict}, // pre-check fails
		{"/coord/v1/streams/audit/scale", 4, http.StatusAccepted},   // noop for group audit
		{"/coord/v1/streams/ghost/scale", 8, http.StatusNotFound},   // no such stream
		{groupPath(orders) + "/scale", -1, http.StatusBadRequest},   // refused before the coordinator
	} {
		if code, body := h.do(http.MethodPost, tc.path, map[string]any{"targetShardCount": tc.target, "requestedBy": "t"}); code != tc.want {
			t.Fatalf("POST %s %d: %d %s", tc.path, tc.target, code, body)
		}
	}
	s := scrape(t, h.reg)
	for k, want := range map[string]float64{
		`admin_mutation_total{action="CREATE_GROUP",outcome="SUCCESS"}`:            1,
		`admin_mutation_total{action="CREATE_GROUP",outcome="CLIENT_ERROR"}`:       1,
		`admin_mutation_failed_total{action="CREATE_GROUP"}`:                       1,
		`admin_mutation_total{action="SCALE_GROUP",outcome="SUCCESS"}`:             2,
		`admin_mutation_failed_total{action="SCALE_GROUP"}`:                        1,
		`admin_mutation_failed_total{action="SCALE_STREAM"}`:                       2,
		`scale_request_total{group="billing",status="NOOP",stream="orders"}`:       1,
		`scale_request_total{group="billing",status="SUCCESS",stream="orders"}`:    1,
		`scale_request_total{group="audit",status="NOOP",stream="audit"}`:          1,
		`scale_request_total{group="none",status="ERROR",stream="orders"}`:         1,
		`scale_request_failed_total{group="none",status="ERROR",stream="orders"}`:  1,
		`scale_request_total{group="none",status="ERROR",stream="unknown"}`:        1,
		`scale_request_failed_total{group="none",status="ERROR",stream="unknown"}`: 1,
	} {
		if s[k] != want {
			t.Errorf("%s = %v, want %v", k, s[k], want)
		}
	}
}

// panicking answers every read with a panic.
type panicking struct{ httpapi.Runtime }

func (panicking) Group(context.Context, group.Key) (contract.GroupView, error) { panic("boom") }

// A handler panic is an ERROR outcome with status 500.
func TestPanicIsAnErrorOutcome(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := metrics.New(reg, coordinatorID, metrics.WithMemberSeries(1000))
	api := httpapi.New(httpapi.Options{Runtime: panicking{}, Middleware: []httpapi.Middleware{httpapi.ObserveRequests(m)}})
	rec := httptest.NewRecorder()
	api.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, groupPath(orders), nil))
	if rec.Code != http.StatusInternalServerError {
		t.Fatalf("status %d", rec.Code)
	}
	if got := scrape(t, reg)[`api_request_total{group="unknown",method="GET",outcome="ERROR",route="/coord/v1/streams/{streamPrefix}/groups/{consumerGroup}",status="500",stream="unknown"}`]; got != 1 {
		t.Errorf("panicking request counted %v times as ERROR, want 1", got)
	}
}

// Progress gauges follow the member's reports; ages follow the clock at
// scrape time without any commit.
func TestProgressAndAgeGauges(t *testing.T) {
	h := newMemoryHarness(t)
	h.create(orders)
	h.clock.Advance(2 * time.Second)
	resp := h.heartbeat(orders, hb{member: "m-a"})
	h.clock.Advance(2 * time.Second)
	code, body := h.do(http.MethodPost, groupPath(orders)+"/members/m-a/heartbeat", map[string]any{
		"protocolVersion": 1, "requestId": "p", "memberId": "m-a", "memberEpoch": resp.MemberEpoch,
		"runtimeConsumerCapacity": map[string]int{"runtimeMaxConcurrency": 1, "availableConcurrency": 1},
		"ownedShards":             []map[string]int{{"shardIndex": 0}, {"shardIndex": 1}, {"shardIndex": 2}, {"shardIndex": 3}},
		"shardProgress": []map[string]any{{
			"shard": map[string]int{"shardIndex": 1}, "lastDeliveredId": "1700000000000-5", "lastAckedId": nil,
			"pendingCount": 3, "updatedAt": "2026-05-21T00:00:03Z",
		}},
	})
	if code != http.StatusOK {
		t.Fatalf("heartbeat: %d %s", code, body)
	}
	s := scrape(t, h.reg)
	const l = `{group="billing",member="m-a",shard="1",stream="orders"}`
	for name, want := range map[string]float64{
		"consumer_shard_last_delivered_ms":           1700000000000,
		"consumer_shard_last_delivered_seq":          5,
		"consumer_shard_last_acked_ms":               -1,
		"consumer_shard_last_acked_seq":              -1,
		"consumer_shard_pending":                     3,
		"consumer_shard_progress_updated_at_seconds": float64(time.Date(2026, 5, 21, 0, 0, 3, 0, time.UTC).Unix()),
	} {
		if s[name+l] != want {
			t.Errorf("%s = %v, want %v", name+l, s[name+l], want)
		}
	}
	h.clock.Advance(7 * time.Second) // no commit: ages move at scrape time
	ages := gauges(t, h.reg)
	for k, want := range map[string]float64{
		`member_heartbeat_age_seconds{group="billing",member="m-a",stream="orders"}`:                  7,
		`member_lease_remaining_seconds{group="billing",member="m-a",stream="orders"}`:                settings.MemberLeaseTTL.Seconds() - 7,
		`consumer_shard_progress_age_seconds{group="billing",member="m-a",shard="1",stream="orders"}`: 8,
	} {
		if ages[k] != want {
			t.Errorf("%s = %v, want %v", k, ages[k], want)
		}
	}
}

// gauges scrapes every gauge, time-dependent ones included.
func gauges(t *testing.T, reg prometheus.Gatherer) series {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := series{}
	for _, f := range families {
		if f.GetType() == dto.MetricType_GAUGE {
			for _, mt := range f.GetMetric() {
				out[seriesName(f.GetName(), mt)] = mt.GetGauge().GetValue()
			}
		}
	}
	return out
}

// violating returns a group with shard 0 in the current sets of two live
// members and no targets.
func violating() *group.Group {
	g := group.New()
	g.Apply(group.MetaRecord{Meta: group.Meta{StreamPrefix: "orders", ConsumerGroup: "billing", GroupEpoch: 2, AssignmentEpoch: 2, State: group.GroupStable, ShardCount: 1}})
	for _, id := range []string{"a", "b"} {
		g.Apply(group.MemberRecord{Member: &group.Member{MemberID: id, State: group.MemberActive, CurrentAssignment: contract.NewShardSet(0)}})
	}
	return g
}

// staticSource serves one group, or fails every read with err.
type staticSource struct {
	g   *group.Group
	err error
}

func (s staticSource) Snapshot(context.Context, group.Key) (*group.Group, error) { return s.g, s.err }

// commit reports g as committed to m, as a group actor does.
func commit(m *metrics.Metrics, g *group.Group) {
	m.GroupCommitted(g.Key(), g, nil)
	m.GroupStats(g.Key(), g.Stats())
}

// Violations: the gauges show the current count, the counter adds each
// commit's count (docs/protocol.md §10.1: +n per recording with violations),
// duplicate current owners are counted apart.
func TestInvariantViolations(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := metrics.New(reg, coordinatorID)
	g := violating()
	n := float64(len(g.Violations())) // no target owner, duplicate current owners
	commit(m, g)
	commit(m, g) // the same violations, recorded again
	s := scrape(t, reg)
	for k, want := range map[string]float64{
		`invariant_violations{group="billing",stream="orders"}`:       n,
		`duplicate_owner_violations{group="billing",stream="orders"}`: 1,
		`invariant_violation_total{group="billing",stream="orders"}`:  2 * n,
	} {
		if s[k] != want {
			t.Errorf("%s = %v, want %v", k, s[k], want)
		}
	}
	want := 2 * n
	g.Apply(group.MemberRecord{Member: &group.Member{MemberID: "b", State: group.MemberExpired}})
	commit(m, g) // the duplicate is gone
	want += float64(len(g.Violations()))
	g.Apply(group.MemberRecord{Member: &group.Member{MemberID: "b", State: group.MemberActive, CurrentAssignment: contract.NewShardSet(0)}})
	commit(m, g) // and back
	want += float64(len(g.Violations()))
	if got := scrape(t, reg)[`invariant_violation_total{group="billing",stream="orders"}`]; got != want || want <= 3*n {
		t.Errorf("violations counted %v, want %v (> %v)", got, want, 3*n)
	}
}

// A failed read of the member series counts as a monitoring refresh
// failure; a group deleted meanwhile does not.
func TestMemberSeriesReadFailures(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := metrics.New(reg, coordinatorID, metrics.WithMemberSeries(1000))
	commit(m, violating())
	m.SetSource(staticSource{err: group.Errorf(contract.CodeGroupNotFound, "gone")})
	scrape(t, reg)
	m.SetSource(staticSource{err: errors.New("store down")})
	scrape(t, reg)
	m.SetSource(nil) // the counter read by the failing scrape may predate its failure
	if got := scrape(t, reg)[`monitoring_refresh_failed_total{projection="group_metrics"}`]; got != 1 {
		t.Errorf("refresh failures %v, want 1", got)
	}
}

// ShardOffsets exports one series per shard for known groups only; unknown
// ids are -1, unknown lag and memory 0.
func TestShardOffsets(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := metrics.New(reg, coordinatorID, metrics.WithMemberSeries(1000), metrics.WithShardSeries(1000))
	lag := int64(4)
	id := "1700000000000-7"
	rate := 2.5
	m.ShardOffsets(orders, []metrics.ShardSample{{Shard: 0, StreamKey: "orders:0"}})
	for k := range scrape(t, reg) {
		if strings.HasPrefix(k, "shard_") {
			t.Errorf("offset %s of an unknown group was exported", k)
		}
	}
	m.GroupCommitted(orders, violating(), nil)
	m.ShardOffsets(orders, []metrics.ShardSample{
		{Shard: 1, StreamKey: "orders:1", StreamLength: 10, Pending: 2, Lag: &lag, LastRecordID: &id, ProducedPerSecond: &rate},
		{Shard: 0, StreamKey: "orders:0", StreamLength: 5},
		{Shard: 1, StreamKey: "orders:1", StreamLength: 99},
	})
	s := scrape(t, reg)
	const l1, l0 = `{group="billing",shard="1",stream="orders",stream_key="orders:1"}`, `{group="billing",shard="0",stream="orders",stream_key="orders:0"}`
	for k, want := range map[string]float64{
		"shard_stream_length" + l1: 10, "shard_pending" + l1: 2, "shard_lag" + l1: 4, "shard_memory_usage_bytes" + l1: 0,
		"shard_last_record_ms" + l1: 1700000000000, "shard_last_record_seq" + l1: 7, "shard_last_generated_ms" + l1: -1,
		"shard_stream_length" + l0: 5, "shard_lag" + l0: 0, "shard_consumer_last_acked_seq" + l0: -1,
		"shard_produced_per_second" + l1: 2.5,
	} {
		if got, ok := s[k]; !ok || got != want {
			t.Errorf("%s = %v (exported %v), want %v", k, got, ok, want)
		}
	}
	for _, k := range []string{"shard_consumed_per_second" + l1, "shard_produced_per_second" + l0} {
		if _, ok := s[k]; ok {
			t.Errorf("unknown rate %s exported", k)
		}
	}
}

// stubLocker answers every Lock with err.
type stubLocker struct{ err error }

func (l stubLocker) Lock(context.Context, group.Key) (func(), error) { return func() {}, l.err }

// The Locker decorator observes acquisitions and counts timeouts.
func TestLockerInstrumentation(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := metrics.New(reg, coordinatorID, metrics.WithMemberSeries(1000))
	for _, err := range []error{nil, persistence.ErrLockTimeout, persistence.ErrLockTimeout} {
		if _, got := m.Locker(stubLocker{err}).Lock(context.Background(), orders); !errors.Is(got, err) && err != nil {
			t.Fatalf("Lock returned %v, want %v", got, err)
		}
	}
	s := scrape(t, reg)
	for k, want := range map[string]float64{
		`mutex_timeout_total{}`:                                       2,
		`mutex_acquire_duration_seconds_count{result="success"}`:      1,
		`mutex_acquire_duration_seconds_count{result="lock_timeout"}`: 2,
	} {
		if s[k] != want {
			t.Errorf("%s = %v, want %v", k, s[k], want)
		}
	}
}

// The breaker state is read at scrape time and mapped to 0, 1, 2; ticks
// count by changed.
func TestBreakerStateAndTicks(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := metrics.New(reg, coordinatorID, metrics.WithMemberSeries(1000))
	state := "closed"
	m.WatchBreaker("redis", func() string { return state })
	const k = `store_breaker_state{store="redis"}`
	for _, step := range []struct {
		state string
		want  float64
	}{{"closed", 0}, {"open", 2}, {"half-open", 1}, {"closed", 0}} {
		state = step.state
		if got := scrape(t, reg)[k]; got != step.want {
			t.Errorf("%s: %s = %v, want %v", step.state, k, got, step.want)
		}
	}
	state = "bogus"
	if _, ok := scrape(t, reg)[k]; ok {
		t.Errorf("an unknown breaker state was exported")
	}
	m.TickHandled(true, time.Millisecond)
	m.TickHandled(false, time.Millisecond)
	m.TickHandled(false, time.Millisecond)
	s := scrape(t, reg)
	if s[`tick_total{changed="true"}`] != 1 || s[`tick_total{changed="false"}`] != 2 || s[`tick_duration_seconds_count{changed="false"}`] != 2 {
		t.Errorf("tick series %v", s)
	}
}

// Every series, the runtime collectors' included, carries the coordinator
// label; redis_stream_coord_up starts at 1 and follows SetUp.
func TestCoordinatorLabelAndUp(t *testing.T) {
	h := newMemoryHarness(t)
	h.create(orders)
	h.heartbeat(orders, hb{member: "m-a"})
	families, err := h.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		for _, mt := range f.GetMetric() {
			found := false
			for _, l := range mt.GetLabel() {
				found = found || l.GetName() == "coordinator" && l.GetValue() == coordinatorID
			}
			if !found {
				t.Errorf("%s %v has no coordinator label", f.GetName(), mt.GetLabel())
			}
		}
	}
	if got := scrape(t, h.reg)[`up{}`]; got != 1 {
		t.Errorf("up starts at %v, want 1", got)
	}
	h.m.SetUp(false)
	if got := scrape(t, h.reg)[`up{}`]; got != 0 {
		t.Errorf("up %v after SetUp(false), want 0", got)
	}
}

// staticHealth answers every check with its report.
type staticHealth contract.HealthReport

func (s staticHealth) Check(context.Context) contract.HealthReport { return contract.HealthReport(s) }

// Every health check sets redis_stream_coord_up: 1 when UP, else 0.
func TestHealthSetsUp(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := metrics.New(reg, coordinatorID, metrics.WithMemberSeries(1000))
	for _, tc := range []struct {
		status string
		want   float64
	}{{"DEGRADED", 0}, {"UP", 1}} {
		if got := m.Health(staticHealth{Status: tc.status}).Check(context.Background()); got.Status != tc.status {
			t.Errorf("report %+v, want status %s", got, tc.status)
		}
		if got := scrape(t, reg)[`up{}`]; got != tc.want {
			t.Errorf("after a %s check up = %v, want %v", tc.status, got, tc.want)
		}
	}
}

// Per-member series are off by default and capped per group when on: the
// first members by id get them; group series are always there.
func TestMemberSeriesAreOptInAndCapped(t *testing.T) {
	memberSeries := func(opts ...metrics.Option) []string {
		t.Helper()
		reg := prometheus.NewRegistry()
		m := metrics.New(reg, coordinatorID, opts...)
		g := violating() // members a and b
		m.SetSource(staticSource{g: g})
		commit(m, g)
		var out []string
		for k := range gauges(t, reg) {
			if strings.HasPrefix(k, "member_active{") {
				out = append(out, k)
			}
		}
		if s := gauges(t, reg); s[`members{group="billing",state="total",stream="orders"}`] != 2 {
			t.Fatalf("group series missing: %v", s)
		}
		return out
	}
	if got := memberSeries(); len(got) != 0 {
		t.Errorf("member series by default: %v", got)
	}
	if got := memberSeries(metrics.WithMemberSeries(1)); len(got) != 1 || !strings.Contains(got[0], `member="a"`) {
		t.Errorf("member series with a cap of 1: %v", got)
	}
	if got := memberSeries(metrics.WithMemberSeries(10)); len(got) != 2 {
		t.Errorf("member series with a cap of 10: %v", got)
	}
}

// A created group's event counters that the alert rules read exist at 0
// before their first event, so that increase() and the rules see that
// event; its other event counters have no series before their first event.
func TestKnownGroupsCountersStartAtZero(t *testing.T) {
	h := newMemoryHarness(t)
	h.create(orders)
	waitFor(t, h.reg, "the group's zero series", func(s series) bool {
		for _, name := range []string{"member_expired_total", "producer_routing_stale_total"} {
			if v, ok := s[name+`{group="billing",stream="orders"}`]; !ok || v != 0 {
				return false
			}
		}
		return true
	})
	s := scrape(t, h.reg)
	for _, name := range []string{"actor_restarts_total", "member_fenced_total", "heartbeat_shed_total", "invariant_violation_total"} {
		if v, ok := s[name+`{group="billing",stream="orders"}`]; ok {
			t.Errorf("%s of an eventless group: %v, want no series", name, v)
		}
	}
	if v, ok := s[`rebalance_total{group="billing",reason="reconcile",stream="orders"}`]; ok {
		t.Errorf("rebalance_total of a group never rebalanced: %v, want no series", v)
	}
}

// TestShardSeriesOptIn: by default a scrape has no per-shard series, so its
// size follows the groups, not their shards (issue 21, defect 5: 10,000
// groups × 16 shards made one scrape 277 MB); WithShardSeries(n) exports
// the first n shards of each group, never more than MaxShardSeries.
// group_lag and group_pending sum every shard either way.
func TestShardSeriesOptIn(t *testing.T) {
	const n = metrics.MaxShardSeries + 6
	lag := int64(2)
	samples := make([]metrics.ShardSample, n)
	for i := range samples {
		samples[i] = metrics.ShardSample{Shard: i, StreamKey: fmt.Sprintf("orders:%d", i), Lag: &lag, Pending: 1}
	}
	for _, tc := range []struct {
		opts   []metrics.Option
		shards int
	}{
		{nil, 0},
		{[]metrics.Option{metrics.WithShardSeries(2)}, 2},
		{[]metrics.Option{metrics.WithShardSeries(1 << 30)}, metrics.MaxShardSeries},
	} {
		reg := prometheus.NewRegistry()
		m := metrics.New(reg, coordinatorID, tc.opts...)
		m.GroupCommitted(orders, violating(), nil)
		m.ShardOffsets(orders, samples)
		s := scrape(t, reg)
		shards := map[string]bool{}
		for k := range s {
			if strings.HasPrefix(k, "shard_lag{") || strings.HasPrefix(k, "shard_pending{") {
				shard := k[strings.Index(k, `shard="`)+7:]
				shards[shard[:strings.IndexByte(shard, '"')]] = true
			}
		}
		if len(shards) != tc.shards || tc.shards > 0 && (!shards["0"] || !shards[strconv.Itoa(tc.shards-1)]) {
			t.Errorf("%d options: lag and pending series for %d shards, want the first %d", len(tc.opts), len(shards), tc.shards)
		}
		if got := s[`group_lag{group="billing",stream="orders"}`]; got != 2*n {
			t.Errorf("group_lag = %v, want %d", got, 2*n)
		}
		if got := s[`group_pending{group="billing",stream="orders"}`]; got != n {
			t.Errorf("group_pending = %v, want %d", got, n)
		}
	}
}
