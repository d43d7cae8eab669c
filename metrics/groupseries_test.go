package metrics_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/metrics"
	"github.com/redis-stream-coordinator/coordinator/observe"
)

// groupWithMember returns a group of key with one ACTIVE member.
func groupWithMember(key group.Key) *group.Group {
	g := group.New()
	g.Apply(group.MetaRecord{Meta: group.Meta{StreamPrefix: key.StreamPrefix, ConsumerGroup: key.ConsumerGroup, GroupEpoch: 1, AssignmentEpoch: 1, State: group.GroupStable, ShardCount: 1}})
	g.Apply(group.MemberRecord{Member: &group.Member{MemberID: "m", State: group.MemberActive}})
	return g
}

// labelled reports whether some series of s carries label="value".
func labelled(s series, label, value string) bool {
	for k := range s {
		if strings.Contains(k, label+`="`+value+`"`) {
			return true
		}
	}
	return false
}

// Under the cap every group has its series and nothing is added up.
func TestGroupSeriesUnderTheCap(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := metrics.New(reg, coordinatorID, metrics.WithGroupSeries(3))
	for _, p := range []string{"c", "a", "b"} {
		key := group.Key{StreamPrefix: p, ConsumerGroup: "x"}
		commit(m, groupWithMember(key))
		m.HeartbeatHandled(key, contract.StatusOK)
	}
	s := scrape(t, reg)
	for _, p := range []string{"a", "b", "c"} {
		labels := `group="x",state="total",stream="` + p + `"`
		if s[`members{`+labels+`}`] != 1 || s[`heartbeat_total{group="x",status="OK",stream="`+p+`"}`] != 1 || s[`group_epoch{group="x",stream="`+p+`"}`] != 1 {
			t.Errorf("group %s/x: members, heartbeats or epoch series missing", p)
		}
	}
	if labelled(s, "stream", metrics.LabelOther) {
		t.Errorf("series added up although no group is beyond the cap")
	}
	if s[`groups{}`] != 3 || s[`groups_aggregated{}`] != 0 {
		t.Errorf("groups %v, aggregated %v; want 3, 0", s[`groups{}`], s[`groups_aggregated{}`])
	}
}

// Over the cap the first groups by key keep their series, whatever order
// they became known in; the others are added up into the {other} series
// (the epochs are not), so sums over all series still cover every group.
// Deleting an exported group gives its place to the next by key.
func TestGroupSeriesOverTheCap(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := metrics.New(reg, coordinatorID, metrics.WithGroupSeries(2))
	keys := map[string]group.Key{}
	for _, p := range []string{"d", "c", "a", "b"} { // d and c are pushed out by a and b
		keys[p] = group.Key{StreamPrefix: p, ConsumerGroup: "x"}
		commit(m, groupWithMember(keys[p]))
	}
	for _, p := range []string{"a", "b", "c", "d"} {
		m.HeartbeatHandled(keys[p], contract.StatusOK)
		m.RequestServed(observe.ServedRequest{Method: "GET", Template: "/t", Status: 200, StreamPrefix: p})
	}
	s := scrape(t, reg)
	for _, p := range []string{"a", "b"} {
		if s[`members{group="x",state="total",stream="`+p+`"}`] != 1 || s[`heartbeat_total{group="x",status="OK",stream="`+p+`"}`] != 1 {
			t.Errorf("exported group %s/x lacks its series", p)
		}
	}
	for _, p := range []string{"c", "d"} {
		if labelled(s, "stream", p) {
			t.Errorf("group %s/x beyond the cap has series of its own", p)
		}
	}
	other := `group="{other}",stream="{other}"`
	for k, want := range map[string]float64{
		`members{group="{other}",state="total",stream="{other}"}`:                                                 2,
		`members{group="{other}",state="active",stream="{other}"}`:                                                2,
		`heartbeat_total{group="{other}",status="OK",stream="{other}"}`:                                           2,
		`api_request_total{group="none",method="GET",outcome="SUCCESS",route="/t",status="200",stream="{other}"}`: 2,
		`groups{}`: 4, `groups_aggregated{}`: 2,
	} {
		if got, ok := s[k]; !ok || got != want {
			t.Errorf("%s = %v (present %v), want %v", k, got, ok, want)
		}
	}
	if _, ok := s[`group_epoch{`+other+`}`]; ok {
		t.Errorf("an epoch was added up")
	}
	var heartbeats float64
	for k, v := range s {
		if strings.HasPrefix(k, "heartbeat_total{") {
			heartbeats += v
		}
	}
	if heartbeats != 4 {
		t.Errorf("heartbeat_total sums to %v, want 4", heartbeats)
	}

	m.GroupCommitted(keys["a"], group.New(), nil) // deleted: c takes its place
	s = scrape(t, reg)
	if labelled(s, "stream", "a") || s[`members{group="x",state="total",stream="c"}`] != 1 || labelled(s, "stream", "d") {
		t.Errorf("after deleting a/x: want series of b and c only")
	}
	if s[`members{group="{other}",state="total",stream="{other}"}`] != 1 || s[`groups_aggregated{}`] != 1 {
		t.Errorf("after deleting a/x: {other} members %v, aggregated %v; want 1, 1",
			s[`members{group="{other}",state="total",stream="{other}"}`], s[`groups_aggregated{}`])
	}
}

// WithGroupSeries(0) gives no group series of its own; the cap is clipped
// to MaxGroupSeries.
func TestGroupSeriesBounds(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := metrics.New(reg, coordinatorID, metrics.WithGroupSeries(0))
	commit(m, violating())
	s := scrape(t, reg)
	if labelled(s, "stream", "orders") || s[`members{group="{other}",state="total",stream="{other}"}`] != 2 || s[`invariant_violations{group="{other}",stream="{other}"}`] == 0 {
		t.Errorf("with group-series 0 the group is not added up alone")
	}

	reg = prometheus.NewRegistry()
	m = metrics.New(reg, coordinatorID, metrics.WithGroupSeries(1<<30))
	for i := range metrics.MaxGroupSeries + 1 {
		g := groupWithMember(group.Key{StreamPrefix: fmt.Sprintf("s%05d", i), ConsumerGroup: "x"})
		m.GroupCommitted(g.Key(), g, nil)
	}
	s = scrape(t, reg)
	if s[`groups_aggregated{}`] != 1 || labelled(s, "stream", fmt.Sprintf("s%05d", metrics.MaxGroupSeries)) {
		t.Errorf("the cap is not clipped to MaxGroupSeries: %v aggregated", s[`groups_aggregated{}`])
	}
}

// Forgetting groups (deleted, or handed over to another coordinator)
// removes their series at the next scrape, or once many wait (more than
// the 1,024 batched between scrapes here), and the groups exported in
// their place get series.
func TestForgottenGroupsSeries(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := metrics.New(reg, coordinatorID, metrics.WithGroupSeries(1500))
	keys := fleetOf(m, 3000)
	for _, key := range keys[:2000] {
		m.GroupCommitted(key, group.New(), nil) // the first 2,000 go: 1,000 more are exported
	}
	s := scrape(t, reg)
	for _, key := range keys[:2000] {
		if labelled(s, "stream", key.StreamPrefix) {
			t.Fatalf("forgotten group %s still has series", key)
		}
	}
	for _, key := range keys[2000:] {
		if _, ok := s[`member_expired_total{group="x",stream="`+key.StreamPrefix+`"}`]; !ok {
			t.Fatalf("group %s exported in a forgotten one's place has no series", key)
		}
	}
}

// A group pushed beyond the cap and exported again before the next scrape
// keeps the counts its series had.
func TestReexportedGroupKeepsItsCounts(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := metrics.New(reg, coordinatorID, metrics.WithGroupSeries(2))
	a, b, first := group.Key{StreamPrefix: "a", ConsumerGroup: "x"}, group.Key{StreamPrefix: "b", ConsumerGroup: "x"}, group.Key{StreamPrefix: "0", ConsumerGroup: "x"}
	for _, key := range []group.Key{a, b} {
		commit(m, groupWithMember(key))
		m.HeartbeatHandled(key, contract.StatusOK)
	}
	commit(m, groupWithMember(first))         // pushes b beyond the cap
	m.GroupCommitted(first, group.New(), nil) // and b is exported again
	if s := scrape(t, reg); s[`heartbeat_total{group="x",status="OK",stream="b"}`] != 1 {
		t.Errorf("b's heartbeat count %v after being exported again, want 1", s[`heartbeat_total{group="x",status="OK",stream="b"}`])
	}
}

// fleetOf makes n groups known to m (stream prefixes s00000…), one
// heartbeat each, and returns their keys in order.
func fleetOf(m *metrics.Metrics, n int) []group.Key {
	keys := make([]group.Key, n)
	for i := range keys {
		keys[i] = group.Key{StreamPrefix: fmt.Sprintf("s%05d", i), ConsumerGroup: "x"}
		commit(m, groupWithMember(keys[i]))
		m.HeartbeatHandled(keys[i], contract.StatusOK)
	}
	return keys
}

// BenchmarkForgetGroups: a coordinator with 3,000 groups (1,000 exported)
// hands them all over, in key order (each exported one gone lets the next
// be exported), then is scraped.
func BenchmarkForgetGroups(b *testing.B) {
	for b.Loop() {
		b.StopTimer()
		reg := prometheus.NewRegistry()
		m := metrics.New(reg, coordinatorID)
		keys := fleetOf(m, 3000)
		b.StartTimer()
		for _, key := range keys {
			m.GroupCommitted(key, group.New(), nil)
		}
		if _, err := reg.Gather(); err != nil {
			b.Fatal(err)
		}
	}
}
